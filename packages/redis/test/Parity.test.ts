/**
 * The parity suite: the same behaviour over Single, Pooled{8}, Multiplexed{1} and
 * Multiplexed{8}, and with writes held (`holdWritesAbove`: a single connection that writes
 * only when nothing is owed, eight engines that hold above two owed), against a real
 * redis-server.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { LARGE_ARGUMENT } from "@effect-falkordb/resp/Encoder"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Net from "node:net"
import type { Engine } from "../src/internal/Engine.ts"
import type * as RedisOptions from "../src/RedisOptions.ts"
import { build } from "./fixtures/Strategies.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

type Kind = "single" | "pooled8" | "multiplexed1" | "multiplexed8" | "single-hold0" | "multiplexed8-hold2"

/** A client of `kind`: the held variants are their base strategy with `holdWritesAbove`. */
const open = (kind: Kind, url: string, extra: RedisOptions.RedisOptions = {}) =>
  kind === "single-hold0"
    ? build("single", url, { holdWritesAbove: 0, ...extra })
    : kind === "multiplexed8-hold2"
      ? build("multiplexed8", url, { holdWritesAbove: 2, ...extra })
      : build(kind, url, extra)

/** Every permit of every engine is back: nothing queued, nothing owed. */
const permitsInUse = (engines: ReadonlyArray<Engine>) => engines.reduce((sum, engine) => sum + engine.window.inUse, 0)

const kinds: ReadonlyArray<Kind> = [
  "single",
  "pooled8",
  "multiplexed1",
  "multiplexed8",
  "single-hold0",
  "multiplexed8-hold2"
]

layer(Embedded.layer(), { timeout: 120_000, excludeTestServices: true })("parity", (it) => {
  for (const kind of kinds) {
    describe(kind, () => {
      it.effect("demux exactness: 1000 concurrent ECHO each get their own payload", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis } = yield* open(kind, server.url)
          const replies = yield* Effect.forEach(
            Array.from({ length: 1000 }, (_, i) => i),
            (i) => redis.execute(["ECHO", `payload-${kind}-${i}-${"x".repeat(i % 37)}`]),
            { concurrency: "unbounded" }
          )
          replies.forEach((reply, i) => {
            assert.strictEqual(text(reply), `payload-${kind}-${i}-${"x".repeat(i % 37)}`)
          })
        })
      )

      it.effect("pipeline: contiguous, one reply per command, error replies as values", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis } = yield* open(kind, server.url)
          const key = `pipe-${kind}`
          const replies = yield* redis.pipeline([
            ["DEL", key],
            ["RPUSH", key, "a"],
            ["INCR", key],
            ["RPUSH", key, "b"],
            ["LRANGE", key, 0, -1]
          ])
          assert.strictEqual(replies.length, 5)
          assert.strictEqual(replies[1], 1)
          assert.match((replies[2] as { message: string }).message, /^WRONGTYPE/)
          assert.strictEqual(replies[3], 2)
          assert.deepStrictEqual((replies[4] as Array<unknown>).map(text), ["a", "b"])
          const failed = yield* Effect.flip(redis.execute(["INCR", key]))
          assert.strictEqual(failed.reason._tag, "Reply")
          if (failed.reason._tag === "Reply") assert.strictEqual(failed.reason.code, "WRONGTYPE")
        })
      )

      it.effect("large binary values (sent by reference) interleaved with tiny ones: every reply is its own", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis, engines } = yield* open(kind, server.url)
          const prefix = `large-${kind}-`
          // Each value its own pattern, so a reply matched to the wrong caller shows.
          const value = (i: number, length: number) => {
            const bytes = new Uint8Array(length)
            for (let j = 0; j < length; j++) bytes[j] = (i * 7 + j) & 255
            return bytes
          }
          // At, above and just below LARGE_ARGUMENT (128 KiB), and tiny: several MB in flight at once.
          const sizes = [LARGE_ARGUMENT, LARGE_ARGUMENT + 1, 3 * LARGE_ARGUMENT + 17, LARGE_ARGUMENT - 1, 5, 0]
          const values = Array.from({ length: 48 }, (_, i) => value(i, sizes[i % sizes.length]))
          yield* Effect.forEach(values, (bytes, i) => redis.execute(["SET", `${prefix}${i}`, bytes]), {
            concurrency: "unbounded",
            discard: true
          })
          const read = yield* Effect.forEach(values, (_, i) => redis.execute(["GET", `${prefix}${i}`]), {
            concurrency: "unbounded"
          })
          read.forEach((reply, i) => {
            assert.deepStrictEqual(reply, values[i], `GET ${i}`)
          })
          // One command with several large arguments, in a pipeline between small ones.
          const replies = yield* redis.pipeline([
            ["SET", `${prefix}tiny`, "a"],
            ["MSET", `${prefix}m0`, values[0], `${prefix}m1`, "b", `${prefix}m2`, values[2], `${prefix}m3`, values[6]],
            ["MGET", `${prefix}m0`, `${prefix}m1`, `${prefix}m2`, `${prefix}tiny`, `${prefix}m3`],
            ["STRLEN", `${prefix}m2`]
          ])
          assert.strictEqual(replies[0], "OK")
          assert.strictEqual(replies[1], "OK")
          const got = replies[2] as Array<Uint8Array>
          assert.deepStrictEqual(got[0], values[0])
          assert.strictEqual(text(got[1]), "b")
          assert.deepStrictEqual(got[2], values[2])
          assert.strictEqual(text(got[3]), "a")
          assert.deepStrictEqual(got[4], values[6])
          assert.strictEqual(replies[3], values[2].length)
          // The values were sent, not consumed: they are unchanged.
          assert.deepStrictEqual(values[8], value(8, sizes[2]))
          // A large value reaches the socket as the very same object (not copied); a smaller one is copied.
          const written: Array<unknown> = []
          const write = Net.Socket.prototype.write
          Net.Socket.prototype.write = function (this: Net.Socket, chunk: unknown, ...rest: Array<never>) {
            written.push(chunk)
            return write.call(this, chunk as Uint8Array, ...rest)
          } as typeof write
          yield* redis
            .pipeline([
              ["SET", `${prefix}ref`, values[2]],
              ["SET", `${prefix}copied`, values[3]]
            ])
            .pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  Net.Socket.prototype.write = write
                })
              )
            )
          assert.isTrue(written.includes(values[2]))
          assert.isFalse(written.includes(values[3]))
          assert.strictEqual(permitsInUse(engines), 0)
        })
      )

      it.effect("timeout/interrupt alignment: 200 SETs while the server is paused, every other caller gives up", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis, engines } = yield* open(kind, server.url)
          const { service: admin } = yield* build("single", server.url)
          const prefix = `align-${kind}-`
          yield* admin.execute(["CLIENT", "PAUSE", 300, "ALL"])
          const fibers = yield* Effect.forEach(
            Array.from({ length: 200 }, (_, i) => i),
            (i) =>
              Effect.forkChild(
                redis.execute(["SET", `${prefix}${i}`, `value-${i}`], i % 4 === 1 ? { timeout: 30 } : undefined)
              )
          )
          yield* Effect.sleep(60)
          // Interrupt every fourth caller, time out every fourth (timeout 30 ms), keep the rest.
          yield* Effect.forEach(
            fibers.filter((_, i) => i % 4 === 3),
            (fiber) => Fiber.interrupt(fiber)
          )
          const exits = yield* Effect.forEach(fibers, (fiber) => Fiber.await(fiber))
          exits.forEach((exit, i) => {
            if (i % 4 === 1) {
              assert.strictEqual(exit._tag, "Failure", `SET ${i} should have timed out`)
            } else if (i % 4 !== 3) {
              assert.strictEqual(exit._tag, "Success", `SET ${i} should have succeeded`)
            }
          })
          // Every written SET ran; every reply after them is the caller's own.
          const values = yield* Effect.forEach(
            Array.from({ length: 200 }, (_, i) => i),
            (i) => redis.execute(["GET", `${prefix}${i}`]),
            { concurrency: 50 }
          )
          values.forEach((value, i) => {
            const exit = exits[i]
            const neverSent =
              exit._tag === "Failure" &&
              exit.cause.reasons.some(
                (reason) => reason._tag === "Fail" && "written" in reason.error && reason.error.written === false
              )
            if (neverSent) assert.strictEqual(value, null, `SET ${i} was never sent, so it never ran`)
            else if (i % 4 === 3 && value === null)
              return // interrupted before it was written
            else if (kind === "pooled8" && i % 4 === 1 && value === null)
              return // timed out: its pooled connection is replaced before it is lent again, so it may not have run
            else assert.strictEqual(text(value), `value-${i}`, `GET ${i}`)
          })
          const echoes = yield* Effect.forEach(
            Array.from({ length: 100 }, (_, i) => i),
            (i) => redis.execute(["ECHO", `after-${i}`]),
            { concurrency: "unbounded" }
          )
          echoes.forEach((echo, i) => {
            assert.strictEqual(text(echo), `after-${i}`)
          })
          assert.strictEqual(permitsInUse(engines), 0)
        })
      )

      it.effect(
        "callers interrupted by callers woken by the same replies: every reply is its caller's own, every permit comes back",
        () =>
          Effect.gen(function* () {
            const server = yield* Embedded.EmbeddedServer
            const { service: redis, engines } = yield* open(kind, server.url)
            const mismatched: Array<string> = []
            // Each looper sends its next ECHO as soon as its reply arrives, often while a chunk of
            // replies is still waking callers; its killer, woken by the same chunk, interrupts it
            // then: its newest ECHO may or may not have been taken for the write by that moment.
            const looper = (round: number, id: number) =>
              Effect.gen(function* () {
                for (let j = 0; ; j++) {
                  const payload = `loop-${kind}-${round}-${id}-${j}`
                  const reply = yield* redis.execute(["ECHO", payload])
                  if (text(reply) !== payload) mismatched.push(`${payload} got ${text(reply)}`)
                }
              })
            for (let round = 0; round < 20; round++) {
              const loopers = yield* Effect.forEach(
                Array.from({ length: 32 }, (_, id) => id),
                (id) => Effect.forkChild(looper(round, id), { startImmediately: true })
              )
              yield* Effect.forEach(
                Array.from({ length: 32 }, (_, id) => id),
                (id) =>
                  redis
                    .execute(["ECHO", `killer-${id}`])
                    .pipe(
                      Effect.andThen(Effect.sync(() => loopers[id]!.interruptUnsafe())),
                      Effect.andThen(Fiber.await(loopers[id]!))
                    ),
                { concurrency: "unbounded", discard: true }
              )
            }
            const echoes = yield* Effect.forEach(
              Array.from({ length: 300 }, (_, i) => i),
              (i) => redis.execute(["ECHO", `after-${i}`]),
              { concurrency: "unbounded" }
            )
            echoes.forEach((echo, i) => {
              assert.strictEqual(text(echo), `after-${i}`)
            })
            assert.deepStrictEqual(mismatched, [])
            // The interrupted callers' written ECHOs are answered too: then every permit is back.
            for (let attempt = 0; attempt < 200 && permitsInUse(engines) > 0; attempt++) yield* Effect.sleep(5)
            assert.strictEqual(permitsInUse(engines), 0)
            for (const engine of engines) assert.strictEqual(engine.overdue, 0)
          })
      )

      it.effect("close under load: every call settles, no connection is left on the server", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: admin } = yield* build("single", server.url, { clientName: "admin" })
          const name = `closing-${kind}`
          const settled = yield* Effect.scoped(
            Effect.gen(function* () {
              const { service: redis } = yield* open(kind, server.url, { clientName: name })
              return yield* Effect.forEach(
                Array.from({ length: 500 }, (_, i) => i),
                () =>
                  Effect.forkChild(Effect.exit(redis.execute(["INCR", `${name}-counter`])), {
                    startImmediately: true
                  })
              )
            })
          )
          // The scope closed with 500 calls in flight: each settled, none hangs.
          const exits = yield* Effect.forEach(settled, (fiber) => Fiber.join(fiber))
          assert.strictEqual(exits.length, 500)
          const acknowledged = exits.filter((exit) => exit._tag === "Success").length
          const counter = yield* admin.execute(["GET", `${name}-counter`])
          const final = counter === null ? 0 : Number(text(counter))
          assert.isAtLeast(final, acknowledged)
          const clients = text(yield* admin.execute(["CLIENT", "LIST"]))
          // Sockets close asynchronously on the server side; poll briefly instead of sleeping blind.
          let remaining = clients.split("\n").filter((line) => line.includes(`name=${name} `)).length
          for (let attempt = 0; attempt < 50 && remaining > 0; attempt++) {
            yield* Effect.sleep(20)
            const list = text(yield* admin.execute(["CLIENT", "LIST"]))
            remaining = list.split("\n").filter((line) => line.includes(`name=${name} `)).length
          }
          assert.strictEqual(remaining, 0)
          const closedCall = yield* Effect.scoped(
            Effect.gen(function* () {
              const { service: redis } = yield* open(kind, server.url)
              return redis
            })
          ).pipe(Effect.flatMap((redis) => Effect.flip(redis.execute(["PING"]))))
          assert.strictEqual(closedCall.reason._tag, "Closed")
        })
      )
    })
  }

  for (const kind of ["single", "multiplexed1"] as const) {
    it.effect(`ordering (${kind}): 64 fibers x 200 unawaited RPUSH via submit keep their order`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        const { service: redis } = yield* build(kind, server.url)
        const prefix = `order-${kind}-`
        const futures = yield* Effect.forEach(
          Array.from({ length: 64 }, (_, fiber) => fiber),
          (fiber) =>
            Effect.gen(function* () {
              const own = []
              for (let i = 0; i < 200; i++) own.push(yield* redis.submit(["RPUSH", `${prefix}${fiber}`, i]))
              return own
            }),
          { concurrency: "unbounded" }
        )
        yield* Effect.forEach(futures.flat(), (future) => future.await, { discard: true })
        for (let fiber = 0; fiber < 64; fiber++) {
          const list = (yield* redis.execute(["LRANGE", `${prefix}${fiber}`, 0, -1])) as Array<Uint8Array>
          assert.deepStrictEqual(
            list.map(text),
            Array.from({ length: 200 }, (_, i) => String(i))
          )
        }
      })
    )
  }

  it.effect("interrupt before write never executes: callers waiting for the window are never sent", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* build("single", server.url, { window: 4 })
      const { service: admin } = yield* build("single", server.url)
      yield* admin.execute(["CLIENT", "PAUSE", 200, "WRITE"])
      const fibers = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Effect.forkChild(redis.execute(["SET", `never-${i}`, "x"]))
      )
      yield* Effect.sleep(50)
      // The first 4 fill the window and are written; interrupt the 16 still waiting.
      assert.strictEqual(engines[0].window.inUse, 4)
      yield* Effect.forEach(fibers.slice(4), (fiber) => Fiber.interrupt(fiber))
      yield* Effect.forEach(fibers.slice(0, 4), (fiber) => Fiber.join(fiber))
      const exists = yield* admin.execute(["EXISTS", ...Array.from({ length: 16 }, (_, i) => `never-${i + 4}`)])
      assert.strictEqual(exists, 0)
      const written = yield* admin.execute(["EXISTS", "never-0", "never-1", "never-2", "never-3"])
      assert.strictEqual(written, 4)
      assert.strictEqual(engines[0].window.inUse, 0)
    })
  )
})
