/**
 * `executeAll`: independent commands, one resume for the caller — results in order, error
 * replies, up-front refusals, batches larger than the window, several engines, timeouts and
 * interruption (unwritten commands never sent), against real redis-server processes and a
 * scripted peer.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { Command } from "@effect-falkordb/resp/Encoder"
import * as CommandKeys from "../src/CommandKeys.ts"
import * as RedisOptions from "../src/RedisOptions.ts"
import * as Strategies from "../src/internal/Strategies.ts"
import type { Engine } from "../src/internal/Engine.ts"
import type { RedisError } from "../src/RedisError.ts"
import { slotTable } from "../src/internal/ElasticEngines.ts"
import * as Sentinel from "../src/internal/Sentinel.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import * as TcpProxy from "./fixtures/Proxy.ts"
import { build, type Kind } from "./fixtures/Strategies.ts"
import { until } from "./fixtures/Until.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

const keyed = (url: string, connections: number, extra: RedisOptions.RedisOptions = {}) =>
  Effect.flatMap(RedisOptions.resolve({ url, ...extra }), (resolved) =>
    Strategies.makeMultiplexed(resolved, connections, "key")
  )

const failureOf = (exit: Exit.Exit<unknown, RedisError>): RedisError => {
  if (Exit.isSuccess(exit)) throw new Error("the call must fail")
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") throw new Error(`a typed failure, not ${reason?._tag}`)
  return reason.error
}

const permitsInUse = (engines: ReadonlyArray<Engine>) => engines.reduce((sum, engine) => sum + engine.window.inUse, 0)

const kinds: ReadonlyArray<Kind> = ["single", "pooled4", "multiplexed1", "multiplexed4"]

layer(Embedded.layer(), { timeout: 120_000, excludeTestServices: true })("executeAll", (it) => {
  for (const kind of kinds) {
    describe(kind, () => {
      it.effect("replies in command order; nothing left owed", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis, engines } = yield* build(kind, server.url)
          const commands: Array<Command> = Array.from({ length: 300 }, (_, i) => ["ECHO", `all-${kind}-${i}`])
          const replies = yield* redis.executeAll(commands)
          assert.deepStrictEqual(
            replies.map(text),
            commands.map((command) => command[1])
          )
          assert.deepStrictEqual(yield* redis.executeAll([]), [])
          assert.strictEqual(permitsInUse(engines), 0)
        })
      )

      it.effect("error replies: the first failure in command order by default, every outcome with mode result", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis } = yield* build(kind, server.url)
          const list = `all-list-${kind}`
          yield* redis.execute(["DEL", list])
          yield* redis.execute(["RPUSH", list, "a"])
          const commands: Array<Command> = [
            ["ECHO", "first"],
            ["INCR", list],
            ["ECHO", "between"],
            ["NO-SUCH-COMMAND"],
            ["LLEN", list]
          ]
          const failure = failureOf(yield* Effect.exit(redis.executeAll(commands)))
          assert.strictEqual(failure.reason._tag, "Reply")
          if (failure.reason._tag === "Reply") assert.strictEqual(failure.reason.code, "WRONGTYPE")
          const results = yield* redis.executeAll(commands, { mode: "result" })
          assert.strictEqual(results.length, 5)
          const [first, incr, between, unknown, llen] = results
          assert.strictEqual(first?._tag === "Success" && text(first.success), "first")
          assert.strictEqual(between?._tag === "Success" && text(between.success), "between")
          assert.strictEqual(llen?._tag === "Success" && llen.success, 1)
          assert.strictEqual(incr?._tag === "Failure" && incr.failure.reason._tag, "Reply")
          if (incr?._tag === "Failure" && incr.failure.reason._tag === "Reply") {
            assert.strictEqual(incr.failure.reason.code, "WRONGTYPE")
            assert.isTrue(incr.failure.written)
          }
          if (unknown?._tag !== "Failure" || unknown.failure.reason._tag !== "Reply") {
            return assert.fail("an unknown command fails with reason Reply")
          }
          assert.strictEqual(unknown.failure.reason.code, "ERR")
        })
      )

      it.effect("refused before anything is sent: invalid arguments (by index), blocking and state commands", () =>
        Effect.gen(function* () {
          const server = yield* Embedded.EmbeddedServer
          const { service: redis } = yield* build(kind, server.url)
          const counter = `all-refused-${kind}`
          yield* redis.execute(["DEL", counter])
          const invalid = failureOf(
            yield* Effect.exit(
              redis.executeAll([
                ["INCR", counter],
                ["SET", counter, Number.NaN]
              ])
            )
          )
          assert.strictEqual(invalid.reason._tag, "InvalidArgument")
          assert.include(invalid.message, "command 1 of the batch")
          const blocking = failureOf(
            yield* Effect.exit(
              redis.executeAll([
                ["INCR", counter],
                ["BLPOP", "nothing", 1]
              ])
            )
          )
          assert.strictEqual(blocking.reason._tag, "NotMultiplexable")
          const state = failureOf(
            yield* Effect.exit(
              redis.executeAll([
                ["INCR", counter],
                ["SELECT", 1]
              ])
            )
          )
          assert.strictEqual(state.reason._tag, "NotMultiplexable")
          const subscribe = failureOf(yield* Effect.exit(redis.executeAll([["SUBSCRIBE", "news"]])))
          assert.strictEqual(subscribe.reason._tag, "Unsupported")
          const timeout = failureOf(yield* Effect.exit(redis.executeAll([["INCR", counter]], { timeout: -1 })))
          assert.strictEqual(timeout.reason._tag, "InvalidArgument")
          // Numbers are milliseconds, checked like any other duration.
          for (const bad of [0, Number.NaN, Number.NEGATIVE_INFINITY, "-5 millis", "soon"]) {
            const refused = failureOf(yield* Effect.exit(redis.execute(["INCR", counter], { timeout: bad as never })))
            assert.strictEqual(refused.reason._tag, "InvalidArgument", String(bad))
          }
          // None of the refused batches sent its INCR.
          assert.isNull(yield* redis.execute(["GET", counter]))
          assert.strictEqual(
            yield* redis.execute(["ECHO", "no limit"], { timeout: Number.POSITIVE_INFINITY }).pipe(Effect.map(text)),
            "no limit"
          )
        })
      )
    })
  }

  it.effect("a batch larger than the window goes out in pieces, in order, without deadlock", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* build("single", server.url, { window: 4 })
      const key = "all-window"
      yield* redis.execute(["DEL", key])
      const replies = yield* redis.executeAll(Array.from({ length: 50 }, (_, i) => ["RPUSH", key, i]))
      assert.deepStrictEqual(
        replies,
        Array.from({ length: 50 }, (_, i) => i + 1)
      )
      const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as ReadonlyArray<Reply>
      assert.deepStrictEqual(
        list.map(text),
        Array.from({ length: 50 }, (_, i) => String(i))
      )
      // Several callers at once, each batch larger than the window.
      const all = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, c) => c),
        (c) => redis.executeAll(Array.from({ length: 20 }, (_, i) => ["ECHO", `${c}:${i}`])),
        { concurrency: "unbounded" }
      )
      for (const [c, replies] of all.entries()) {
        assert.deepStrictEqual(
          replies.map(text),
          Array.from({ length: 20 }, (_, i) => `${c}:${i}`)
        )
      }
      assert.strictEqual(permitsInUse(engines), 0)
    })
  )

  it.effect(
    "commands that wait for the window keep the places the call took: a later command is not sent between them",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        // The engine's bytes can be held back before the server, so its window of 1 stays full.
        const proxy = yield* TcpProxy.make({ targetPort: server.port })
        const { service: redis, engines } = yield* build("single", proxy.url, { window: 1 })
        const window = engines[0]!.window
        const key = "all-places"
        yield* redis.execute(["DEL", key])
        proxy.hold(1)
        const first = yield* redis.submit(["RPUSH", key, "first"])
        yield* until(
          Effect.sync(() => proxy.heldBytes(1) > 0),
          "the first command is held"
        )
        const batch = yield* Effect.forkChild(
          redis.executeAll([
            ["RPUSH", key, "a"],
            ["RPUSH", key, "b"]
          ])
        )
        yield* until(
          Effect.sync(() => window.waiting > 0),
          "the batch waits for the window"
        )
        // A command routed after the call (as a key move's drain PING would be) queues behind the whole batch.
        const waiting = window.waiting
        const later = yield* Effect.forkChild(redis.execute(["RPUSH", key, "later"]))
        yield* until(
          Effect.sync(() => window.waiting > waiting),
          "the later command waits for the window"
        )
        proxy.release(1)
        assert.deepStrictEqual(yield* Fiber.join(batch), [2, 3])
        assert.strictEqual(yield* Fiber.join(later), 4)
        assert.strictEqual(yield* first.await, 1)
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as ReadonlyArray<Reply>
        assert.deepStrictEqual(list.map(text), ["first", "a", "b", "later"])
        assert.strictEqual(permitsInUse(engines), 0)
      })
  )

  it.effect("key routing over 4 engines: one call spans engines, each key's commands in array order", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* keyed(server.url, 4, { window: 8 })
      const keys = Array.from({ length: 16 }, (_, k) => `all-keyed-${k}`)
      for (const key of keys) yield* redis.execute(["DEL", key])
      // The keys land on every engine.
      const used = new Set(keys.map((key) => CommandKeys.firstKeySlot(["GET", key])! % 4))
      assert.strictEqual(used.size, 4)
      const commands: Array<Command> = []
      for (let i = 0; i < 20; i++) for (const key of keys) commands.push(["RPUSH", key, i])
      const replies = yield* redis.executeAll(commands)
      assert.deepStrictEqual(
        replies,
        commands.map((command) => Number(command[2]) + 1)
      )
      for (const key of keys) {
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as ReadonlyArray<Reply>
        assert.deepStrictEqual(
          list.map(text),
          Array.from({ length: 20 }, (_, i) => String(i))
        )
      }
      assert.strictEqual(permitsInUse(engines), 0)
    })
  )

  it.effect("self-sizing key routing: a batch with a moving key's commands waits for its old engine, in order", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      // The first engine's bytes are held back, so what it owes is surely owed when the key moves.
      const proxy = yield* TcpProxy.make({ targetPort: server.port })
      const resolved = yield* RedisOptions.resolve({ url: proxy.url })
      const { service: redis, elastic } = yield* Strategies.makeSized(resolved, { min: 1, max: 2 }, "key", false)
      const two = slotTable(2)
      const keyOn = (engine: number, prefix: string) => {
        for (let i = 0; ; i++)
          if (two[CommandKeys.firstKeySlot(["GET", `${prefix}-${i}`])!] === engine) return `${prefix}-${i}`
      }
      const moving = keyOn(1, "all-moving")
      const staying = keyOn(0, "all-staying")
      yield* redis.executeAll([
        ["DEL", moving],
        ["DEL", staying]
      ])
      proxy.hold(1)
      const before = []
      for (let i = 0; i < 50; i++) before.push(yield* redis.submit(["RPUSH", moving, `before-${i}`]))
      yield* until(
        Effect.sync(() => proxy.heldBytes(1) > 0),
        "the first engine's commands to be held"
      )
      const grow = yield* Effect.forkChild(elastic.resize(2))
      yield* until(
        Effect.sync(() => elastic.stats().active === 2),
        "the second engine to take keys"
      )
      const commands: Array<Command> = []
      for (let i = 0; i < 50; i++) commands.push(["RPUSH", moving, `after-${i}`], ["RPUSH", staying, i])
      const call = yield* Effect.forkChild(redis.executeAll(commands), { startImmediately: true })
      yield* until(
        Effect.sync(() => elastic.stats().held > 0),
        "the moving key's commands to wait in its lane"
      )
      proxy.release(1)
      const first = yield* Effect.forEach(before, (future) => future.await)
      const replies = yield* Fiber.join(call)
      yield* Fiber.join(grow)
      assert.deepStrictEqual(
        first,
        Array.from({ length: 50 }, (_, i) => i + 1)
      )
      assert.deepStrictEqual(replies, Array.from({ length: 50 }, (_, i) => [51 + i, i + 1]).flat())
      const list = (yield* redis.execute(["LRANGE", moving, 0, -1])) as ReadonlyArray<Reply>
      assert.deepStrictEqual(list.map(text), [
        ...Array.from({ length: 50 }, (_, i) => `before-${i}`),
        ...Array.from({ length: 50 }, (_, i) => `after-${i}`)
      ])
    })
  )

  it.effect("several engines: the commands of one call are spread over them (a peer that never answers)", () =>
    Effect.gen(function* () {
      const fake = yield* FakeServer.make((command) => (command[0] === "PING" ? "+PONG\r\n" : undefined))
      const { service: redis, engines } = yield* keyed(fake.url, 4, { closeTimeout: 100, commandTimeout: "Infinity" })
      const call = yield* Effect.forkChild(
        redis.executeAll(Array.from({ length: 64 }, (_, i) => ["GET", `spread-${i}`])),
        { startImmediately: true }
      )
      const load = engines.map((engine) => engine.window.inUse)
      assert.strictEqual(
        load.reduce((a, b) => a + b, 0),
        64
      )
      for (const [index, inUse] of load.entries()) assert.isAbove(inUse, 0, `engine ${index}: ${load}`)
      yield* Fiber.interrupt(call)
    })
  )

  it.effect("interrupted mid-batch: written commands are owed, unwritten ones are never sent", () =>
    Effect.gen(function* () {
      const received: Array<string> = []
      // Each GET is answered 200 ms after the one before it; ECHO at once (behind them, in order).
      const fake = yield* FakeServer.make((command) => {
        if (command[0] === "PING") return "+PONG\r\n"
        received.push(command.join(" "))
        if (command[0] === "GET") return { delay: 200, bytes: "$1\r\nv\r\n" }
        if (command[0] === "ECHO") return `$${command[1]!.length}\r\n${command[1]}\r\n`
        return "-ERR unknown\r\n"
      })
      const { service: redis, engines } = yield* build("single", fake.url, { window: 4 })
      const call = yield* Effect.forkChild(redis.executeAll(Array.from({ length: 10 }, (_, i) => ["GET", `k${i}`])), {
        startImmediately: true
      })
      yield* until(
        Effect.sync(() => received.length === 4),
        "the window's 4 GETs to reach the server"
      )
      yield* Fiber.interrupt(call)
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(call)))
      // The marker goes out behind the owed replies; once it is answered the server has seen
      // everything this client sent: the 4 written GETs and the marker, nothing else.
      assert.strictEqual(text(yield* redis.execute(["ECHO", "marker"])), "marker")
      assert.deepStrictEqual(received, ["GET k0", "GET k1", "GET k2", "GET k3", "ECHO marker"])
      assert.strictEqual(permitsInUse(engines), 0)
    })
  )

  it.effect("timeouts: written commands time out as written, those never admitted as not sent (and are not)", () =>
    Effect.gen(function* () {
      const received: Array<string> = []
      const fake = yield* FakeServer.make((command) => {
        if (command[0] === "PING") return "+PONG\r\n"
        received.push(command.join(" "))
        if (command[0] === "ECHO") return `$${command[1]!.length}\r\n${command[1]}\r\n`
        return undefined
      })
      const { service: redis } = yield* build("single", fake.url, {
        window: 3,
        deadPeerTimeout: "Infinity",
        stallTimeout: "Infinity",
        closeTimeout: 100
      })
      const results = yield* redis.executeAll(
        [["ECHO", "answered"], ...Array.from({ length: 6 }, (_, i): Command => ["GET", `never-${i}`])],
        { mode: "result", timeout: "150 millis" }
      )
      assert.strictEqual(results.length, 7)
      const [first, ...rest] = results
      assert.strictEqual(first?._tag === "Success" && text(first.success), "answered")
      const written = rest.map((result) =>
        result._tag === "Failure" && result.failure.reason._tag === "Timeout" ? result.failure.written : undefined
      )
      // The window of 3: ECHO and two GETs went out; the ECHO's permit came back, so one more.
      assert.deepStrictEqual(written, [true, true, true, false, false, false])
      assert.deepStrictEqual(received, ["ECHO answered", "GET never-0", "GET never-1", "GET never-2"])
      const failure = failureOf(yield* Effect.exit(redis.executeAll([["GET", "x"]], { timeout: "20 millis" })))
      assert.strictEqual(failure.reason._tag, "Timeout")
    })
  )

  it.effect("read preference: one call's reads go to the replica side, its writes to the primary", () =>
    Effect.gen(function* () {
      // Two plain servers stand for the primary and a replica: where each command ran shows.
      const primaryServer = yield* Embedded.make()
      const replicaServer = yield* Embedded.make()
      const { service: primary } = yield* build("single", primaryServer.url)
      const { service: replica } = yield* build("single", replicaServer.url)
      yield* primary.execute(["SET", "where", "primary"])
      yield* replica.execute(["SET", "where", "replica"])
      const router = yield* Sentinel.makeReadRouter(primary, Effect.succeed(replica), () => true, "replica")
      const replies = yield* router.executeAll([
        ["GET", "where"],
        ["SET", "written", "1"],
        ["GET", "where"],
        ["INCR", "counter"]
      ])
      assert.deepStrictEqual(
        [text(replies[0]), replies[1], text(replies[2]), replies[3]],
        ["replica", "OK", "replica", 1]
      )
      assert.strictEqual(text(yield* primary.execute(["GET", "written"])), "1")
      assert.isNull(yield* replica.execute(["GET", "written"]))
      // The call's own preference: everything on the primary.
      const onPrimary = yield* router.executeAll([["GET", "where"]], { readPreference: "primary" })
      assert.strictEqual(text(onPrimary[0]), "primary")
    })
  )

  it.effect("exclusive connection: in order on the caller's own connection", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis } = yield* build("single", server.url)
      const replies = yield* redis.withExclusive((connection) =>
        connection.executeAll([["SELECT", 2], ["SET", "all-exclusive", "x"], ["GET", "all-exclusive"], ["DBSIZE"]])
      )
      assert.strictEqual(replies[0], "OK")
      assert.strictEqual(text(replies[2]), "x")
      // It ran in database 2: database 0 does not see it.
      assert.isNull(yield* redis.execute(["GET", "all-exclusive"]))
      const results = yield* redis.withExclusive((connection) =>
        connection.executeAll(
          [
            ["SET", "all-exclusive-2", "x"],
            ["INCR", "all-exclusive-2"]
          ],
          { mode: "result" }
        )
      )
      assert.strictEqual(results[1]?._tag, "Failure")
      assert.notInstanceOf(results[0]?._tag === "Success" ? results[0].success : undefined, ErrorReply)
    })
  )
})
