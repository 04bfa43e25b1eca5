/**
 * Engines that size themselves (`connections: { min, max }`): the option's checks, growth
 * under load and shrinking when idle, per-key order and no lost command while engines are
 * added and retired — against a real redis-server.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisError from "../src/RedisError.ts"
import * as RedisOptions from "../src/RedisOptions.ts"
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Strategies from "../src/internal/Strategies.ts"
import { Request } from "../src/internal/Request.ts"
import { slotTable } from "../src/internal/ElasticEngines.ts"
import { EngineSizer } from "../src/internal/EngineSizer.ts"
import { SLOTS } from "../src/internal/HashSlot.ts"
import * as CommandKeys from "../src/CommandKeys.ts"
import * as TcpProxy from "./fixtures/Proxy.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

const sized = (
  url: string,
  sizing: { min: number; max: number },
  routing: "spread" | "key",
  auto: boolean,
  extra: RedisOptions.RedisOptions = {}
) =>
  Effect.flatMap(RedisOptions.resolve({ url, ...extra }), (resolved) =>
    Strategies.makeSized(resolved, sizing, routing, auto)
  )

/** Polls `check` every 20 ms until it holds (the test's own timeout bounds the wait). */
const eventually = (check: () => boolean) =>
  Effect.gen(function* () {
    while (!check()) yield* Effect.sleep(20)
  })

/** A key whose slot the engine `engine` takes when the client grows to `engines` engines. */
const movingKey = (prefix: string, engine: number, engines: number): string => {
  const table = slotTable(engines)
  for (let i = 0; ; i++) {
    if (table[CommandKeys.firstKeySlot(["RPUSH", `${prefix}-${i}`])!] === engine) return `${prefix}-${i}`
  }
}

/**
 * Routes and starts `command` exactly as `execute` does (one synchronous step), but keeps the
 * effect the lane hands back for the caller's fiber instead of running it: a caller descheduled
 * right after its command was routed, whose fiber runs only when the test runs the effect.
 */
const startDescheduled = (lane: Strategies.Lane, command: Command): Effect.Effect<Reply, RedisError.RedisError> => {
  let handed: Effect.Effect<Reply, RedisError.RedisError> | undefined
  lane.start(new Request<Reply>([command], false, 1, 10_000), (effect) => {
    handed = effect
  })
  // The window is full or the key is held: the caller is handed an effect to run (the slow path).
  assert.isDefined(handed)
  return handed!
}

/**
 * A self-sizing client (key routing, 1 to 2 engines, windows of 1) through a proxy, with a key
 * the second engine takes, and the first engine's window full: its one command (`first`, an
 * RPUSH of the key) is held back before the server until `proxy.release(1)`, so the drain
 * of a move waits for it.
 */
const oldEngineFull = (prefix: string) =>
  Effect.gen(function* () {
    const server = yield* Embedded.EmbeddedServer
    const proxy = yield* TcpProxy.make({ targetPort: server.port })
    const { service: redis, elastic } = yield* sized(proxy.url, { min: 1, max: 2 }, "key", false, { window: 1 })
    const key = movingKey(prefix, 1, 2)
    yield* redis.execute(["DEL", key])
    proxy.hold(1)
    const first = yield* redis.submit(["RPUSH", key, "first"])
    yield* eventually(() => proxy.heldBytes(1) > 0)
    return { redis, elastic, proxy, key, first }
  })

describe("sizing", () => {
  it.effect("connections: { min, max } is checked before anything connects", () =>
    Effect.gen(function* () {
      const url = "redis://127.0.0.1:1"
      const cases: ReadonlyArray<[RedisConnection.MultiplexedOptions, string, string]> = [
        [
          { url, connections: { max: 0 }, routing: "key" },
          "connections.max",
          "connections.max must be an integer >= 1 (got 0)"
        ],
        [
          { url, connections: { min: 3, max: 2 }, routing: "key" },
          "connections",
          "connections.min (3) is more than connections.max (2)"
        ],
        [
          { url, connections: { max: 4 } },
          "routing",
          'connections: { max: 4 } needs a routing: "key" keeps each key\'s commands in submit order, "spread" balances load with no order across engines; say which'
        ],
        [
          { url, connections: {} as { max: number }, routing: "spread" },
          "connections.max",
          "connections: { min, max } needs max, the most engines to open"
        ],
        [
          { url, connections: { min: 0.5, max: 2 }, routing: "spread" },
          "connections.min",
          "connections.min must be an integer >= 1 (got 0.5)"
        ]
      ]
      for (const [options, field, message] of cases) {
        const error = yield* Effect.flip(Effect.scoped(RedisConnection.makeMultiplexed(options)))
        assert.isTrue(RedisError.isRedisError(error))
        const reason = (error as RedisError.RedisError).reason
        assert.strictEqual(reason._tag, "Config")
        assert.strictEqual((reason as RedisError.Config).field, field)
        assert.strictEqual(reason.message, message)
      }
    })
  )

  it("jump hashing moves only the slots the new engine takes, and only the last engine's when it leaves", () => {
    for (let n = 1; n < 8; n++) {
      const before = slotTable(n)
      const after = slotTable(n + 1)
      let moved = 0
      for (let slot = 0; slot < SLOTS; slot++) {
        if (before[slot] === after[slot]) continue
        moved++
        assert.strictEqual(after[slot], n, `slot ${slot} moved to ${after[slot]}, not to the new engine ${n}`)
      }
      // About 1/(n+1) of the slots move: every engine takes a share.
      assert.isAbove(moved, SLOTS / (n + 1) / 2)
      assert.isBelow(moved, (SLOTS / (n + 1)) * 2)
    }
  })

  it("the sizer grows at once when callers wait for the window, and shrinks after a light second", () => {
    const sizer = new EngineSizer(1, 3)
    const windowBound = { routed: 100, inUse: 1, waiting: 5 }
    assert.strictEqual(sizer.tick(windowBound, 1), undefined)
    assert.strictEqual(sizer.tick(windowBound, 1), undefined)
    assert.strictEqual(sizer.tick(windowBound, 1), 2)
    const light = { routed: 3, inUse: 0, waiting: 0 }
    let wanted: number | undefined
    let ticks = 0
    while (wanted === undefined) {
      wanted = sizer.tick(light, 2)
      ticks++
    }
    assert.strictEqual(wanted, 1)
    assert.strictEqual(ticks, sizer.settings.lightTicks)
  })

  it("the sizer keeps a trial engine that raised the rate and retires one that did not", () => {
    const s = new EngineSizer(1, 4)
    const run = (sizer: EngineSizer, rate: number, active: number): number | undefined => {
      for (;;) {
        const wanted = sizer.tick({ routed: rate, inUse: 8, waiting: 0 }, active)
        if (wanted !== undefined) return wanted
        if (sizer.trials > 0 && !sizer.trying) return undefined
      }
    }
    // Busy at 1000/tick: a trial of 2 engines starts.
    assert.strictEqual(run(s, 1000, 1), 2)
    // The rate rose to 1500: kept, and a third engine is tried at once against 1500.
    assert.strictEqual(run(s, 1500, 2), 3)
    assert.strictEqual(s.kept, 1)
    // No further gain: the third goes.
    assert.strictEqual(run(s, 1520, 3), 2)
    assert.strictEqual(s.kept, 1)
    const t = new EngineSizer(1, 4)
    assert.strictEqual(run(t, 1000, 1), 2)
    // The rate stayed: the trial engine goes.
    assert.strictEqual(run(t, 1000, 2), 1)
    assert.strictEqual(t.kept, 0)
  })
})

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("sizing against redis-server", (it) => {
  it.effect("callers waiting for the window add engines up to max; an idle client goes back to min", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, elastic } = yield* sized(server.url, { min: 1, max: 3 }, "spread", true, {
        window: 1
      })
      assert.strictEqual(elastic.stats().active, 1)
      assert.deepStrictEqual(redis.info.sizing, { min: 1, max: 3 })
      let stop = false
      let acknowledged = 0
      yield* redis.execute(["DEL", "sizing-counter"])
      // 16 callers on windows of 1: callers always wait for a permit.
      const load = yield* Effect.forkChild(
        Effect.forEach(
          Array.from({ length: 16 }, (_, i) => i),
          () =>
            Effect.gen(function* () {
              while (!stop) {
                yield* redis.execute(["INCR", "sizing-counter"])
                acknowledged++
              }
            }),
          { concurrency: "unbounded", discard: true }
        )
      )
      yield* eventually(() => elastic.stats().active === 3)
      stop = true
      yield* Fiber.join(load)
      // Back to one engine, and every added engine closed.
      yield* eventually(() => elastic.stats().active === 1 && elastic.stats().retired === elastic.stats().added)
      const stats = elastic.stats()
      assert.isAtLeast(stats.added, 2)
      assert.isAtLeast(stats.retired, 2)
      // Every command acknowledged ran exactly once.
      assert.strictEqual(text(yield* redis.execute(["GET", "sizing-counter"])), String(acknowledged))
    })
  )

  it.effect("key routing: per-key order and counts hold while engines are added and retired under load", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, elastic } = yield* sized(server.url, { min: 1, max: 4 }, "key", false)
      const fibers = 48
      const perFiber = 400
      let done = false
      // The engine count moves 1 → 4 → 2 → 3 → 1 … while the commands flow.
      const resizer = yield* Effect.forkChild(
        Effect.gen(function* () {
          const sizes = [4, 2, 3, 1, 4, 1, 2]
          for (let i = 0; !done; i++) {
            yield* elastic.resize(sizes[i % sizes.length])
            yield* Effect.yieldNow
          }
        })
      )
      const futures = yield* Effect.forEach(
        Array.from({ length: fibers }, (_, fiber) => fiber),
        (fiber) =>
          Effect.gen(function* () {
            const own: Array<Effect.Effect<unknown, RedisError.RedisError>> = []
            for (let i = 0; i < perFiber; i++) {
              own.push((yield* redis.submit(["RPUSH", `sized-order-${fiber}`, i])).await)
              // Odd fibers also wait for each INCR (the execute path through a lane).
              if (fiber % 2 === 1) own.push(Effect.succeed(yield* redis.execute(["INCR", `{sized-order-${fiber}}:n`])))
              else own.push((yield* redis.submit(["INCR", `{sized-order-${fiber}}:n`])).await)
              if (i % 50 === 0) yield* Effect.yieldNow
            }
            return own
          }),
        { concurrency: "unbounded" }
      )
      const replies = yield* Effect.forEach(futures, (own) => Effect.all(own))
      done = true
      yield* Fiber.join(resizer)
      const stats = elastic.stats()
      // The load really crossed engine changes, and some commands waited for their key's old engine.
      assert.isAtLeast(stats.migrations, 2)
      assert.isAtLeast(stats.added, 1)
      assert.isAtLeast(stats.retired, 1)
      for (let fiber = 0; fiber < fibers; fiber++) {
        // RPUSH answers the list's length and INCR the counter: both count up by one per command, in order.
        const own = replies[fiber]
        for (let i = 0; i < perFiber; i++) {
          assert.strictEqual(own[2 * i], i + 1)
          assert.strictEqual(own[2 * i + 1], i + 1)
        }
        const list = (yield* redis.execute(["LRANGE", `sized-order-${fiber}`, 0, -1])) as Array<Uint8Array>
        assert.deepStrictEqual(
          list.map(text),
          Array.from({ length: perFiber }, (_, i) => String(i))
        )
      }
    })
  )

  it.effect("adding an engine: a key it takes waits until its old engine has answered what it owed", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const proxy = yield* TcpProxy.make({ targetPort: server.port })
      const { service: redis, elastic } = yield* sized(proxy.url, { min: 1, max: 2 }, "key", false)
      // A key the second engine takes over from the first (connection 1).
      const two = slotTable(2)
      let key = ""
      for (let i = 0; key === ""; i++) {
        if (two[CommandKeys.firstKeySlot(["RPUSH", `grow-${i}`])!] === 1) key = `grow-${i}`
      }
      yield* redis.execute(["DEL", key])
      proxy.hold(1)
      const before = []
      for (let i = 0; i < 100; i++) before.push(yield* redis.submit(["RPUSH", key, `before-${i}`]))
      yield* eventually(() => proxy.heldBytes(1) > 0)
      const grow = yield* Effect.forkChild(elastic.resize(2))
      yield* eventually(() => elastic.stats().active === 2)
      let submitted = 0
      const later = yield* Effect.forkChild(
        Effect.gen(function* () {
          const after = []
          for (let i = 0; i < 100; i++) {
            after.push(yield* redis.submit(["RPUSH", key, `after-${i}`]))
            submitted++
          }
          return yield* Effect.forEach(after, (future) => future.await)
        })
      )
      yield* eventually(() => elastic.stats().held > 0 || submitted === 100)
      assert.strictEqual(submitted, 0)
      proxy.release(1)
      const first = yield* Effect.forEach(before, (future) => future.await)
      const second = yield* Fiber.join(later)
      yield* Fiber.join(grow)
      assert.deepStrictEqual(
        [...first, ...second],
        Array.from({ length: 200 }, (_, i) => i + 1)
      )
      const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as Array<Uint8Array>
      assert.deepStrictEqual(list.map(text), [
        ...Array.from({ length: 100 }, (_, i) => `before-${i}`),
        ...Array.from({ length: 100 }, (_, i) => `after-${i}`)
      ])
      assert.strictEqual(elastic.stats().added, 1)
    })
  )

  it.effect(
    "a command routed to its key's old engine while that engine's window was full is answered before the key's next command",
    () =>
      Effect.gen(function* () {
        const { redis, elastic, proxy, key, first } = yield* oldEngineFull("full-window")
        // Routed to connection 1 (full window) before the move; its caller's fiber runs only at the end.
        const command: Command = ["RPUSH", key, "routed"]
        const routed = startDescheduled(elastic.router.forCommand(command, false), command)
        // The key moves to the new engine: a drain PING goes to connection 1, the key's next command waits.
        const grow = yield* Effect.forkChild(elastic.resize(2))
        yield* eventually(() => elastic.stats().active === 2)
        const next = yield* Effect.forkChild(redis.execute(["RPUSH", key, "next"]))
        yield* eventually(() => elastic.stats().held > 0)
        proxy.release(1)
        // The next command is answered (the drain is over) while the routed command's caller has not run yet.
        const nextLength = yield* Fiber.join(next)
        yield* Fiber.join(grow)
        const routedLength = yield* routed
        assert.deepStrictEqual([yield* first.await, routedLength, nextLength], [1, 2, 3])
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as Array<Uint8Array>
        assert.deepStrictEqual(list.map(text), ["first", "routed", "next"])
        assert.strictEqual(elastic.stats().migrations, 1)
      })
  )

  it.effect(
    "a moving key's commands leave the lane in the order they were routed, however late their callers run",
    () =>
      Effect.gen(function* () {
        const { redis, elastic, proxy, key, first } = yield* oldEngineFull("lane-order")
        const grow = yield* Effect.forkChild(elastic.resize(2))
        yield* eventually(() => elastic.stats().active === 2)
        // Routed into the lane first, its caller descheduled; a second caller routes after it.
        const command: Command = ["RPUSH", key, "early"]
        const early = startDescheduled(elastic.router.forCommand(command, false), command)
        const heldBefore = elastic.stats().held
        const late = yield* Effect.forkChild(redis.execute(["RPUSH", key, "late"]))
        yield* eventually(() => elastic.stats().held > heldBefore)
        proxy.release(1)
        const lateLength = yield* Fiber.join(late)
        yield* Fiber.join(grow)
        const earlyLength = yield* early
        assert.deepStrictEqual([yield* first.await, earlyLength, lateLength], [1, 2, 3])
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as Array<Uint8Array>
        assert.deepStrictEqual(list.map(text), ["first", "early", "late"])
      })
  )

  it.effect(
    "a caller that times out or is interrupted while its place waits in a full window or in a lane is never sent",
    () =>
      Effect.gen(function* () {
        const { redis, elastic, proxy, key, first } = yield* oldEngineFull("gone")
        const window = elastic.engines()[0].window
        // Queued for the full window: one times out, one is interrupted.
        const timedOut = yield* Effect.flip(redis.execute(["RPUSH", key, "window-timeout"], { timeout: 100 }))
        const interrupted = yield* Effect.forkChild(redis.execute(["RPUSH", key, "window-interrupt"]))
        yield* eventually(() => window.waiting === 1)
        yield* Fiber.interrupt(interrupted)
        assert.strictEqual(window.waiting, 0)
        const grow = yield* Effect.forkChild(elastic.resize(2))
        yield* eventually(() => elastic.stats().active === 2)
        // Held in the lane of the moving key: one times out, one is interrupted.
        const heldTimedOut = yield* Effect.flip(redis.execute(["RPUSH", key, "lane-timeout"], { timeout: 100 }))
        const heldBefore = elastic.stats().held
        const heldInterrupted = yield* Effect.forkChild(redis.execute(["RPUSH", key, "lane-interrupt"]))
        yield* eventually(() => elastic.stats().held > heldBefore)
        yield* Fiber.interrupt(heldInterrupted)
        const next = yield* Effect.forkChild(redis.execute(["RPUSH", key, "next"]))
        proxy.release(1)
        assert.strictEqual(yield* Fiber.join(next), 2)
        yield* Fiber.join(grow)
        assert.strictEqual(yield* first.await, 1)
        for (const [error, waitedFor] of [
          [timedOut, "no room in the window"],
          [heldTimedOut, "its key was moving to another engine"]
        ] as const) {
          assert.strictEqual(error.reason._tag, "Timeout")
          if (error.reason._tag === "Timeout") assert.isFalse(error.reason.written)
          assert.include(error.message, waitedFor)
        }
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as Array<Uint8Array>
        assert.deepStrictEqual(list.map(text), ["first", "next"])
        for (const engine of elastic.engines()) assert.strictEqual(engine.window.inUse, 0)
      })
  )

  it.effect("retiring an engine that owes replies: they arrive, and the key's next commands wait for them", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      // Through a proxy that can hold back what the retiring engine sends, so its commands
      // are surely owed (not even at the server) when the key moves.
      const proxy = yield* TcpProxy.make({ targetPort: server.port })
      const { service: redis, elastic } = yield* sized(proxy.url, { min: 1, max: 2 }, "key", false)
      yield* elastic.resize(2)
      // A key of the second engine (connection 2): it moves when that engine retires.
      const two = slotTable(2)
      let key = ""
      for (let i = 0; key === ""; i++) {
        if (two[CommandKeys.firstKeySlot(["INCR", `retire-${i}`])!] === 1) key = `retire-${i}`
      }
      yield* redis.execute(["DEL", key])
      proxy.hold(2)
      const before = []
      for (let i = 0; i < 200; i++) before.push(yield* redis.submit(["INCR", key]))
      yield* eventually(() => proxy.heldBytes(2) > 0)
      const retire = yield* Effect.forkChild(elastic.resize(1))
      // The key's engine has changed (the old one still owes everything) before the next commands.
      yield* eventually(() => elastic.stats().active === 1)
      // A submit returns once admitted, and a held command is admitted only after the drain: the
      // next commands go from their own fiber.
      let submitted = 0
      const later = yield* Effect.forkChild(
        Effect.gen(function* () {
          const after = []
          for (let i = 0; i < 200; i++) {
            after.push(yield* redis.submit(["INCR", key]))
            submitted++
          }
          return yield* Effect.forEach(after, (future) => future.await)
        })
      )
      // Either the first of them waits in the lane, or (were keys moved without a drain) all of
      // them went out on connection 1: then make sure they reached the server before the release.
      yield* eventually(() => elastic.stats().held > 0 || submitted === 200)
      yield* redis.execute(["PING"])
      assert.strictEqual(submitted, 0)
      proxy.release(2)
      const first = yield* Effect.forEach(before, (future) => future.await)
      const second = yield* Fiber.join(later)
      yield* Fiber.join(retire)
      assert.deepStrictEqual(
        [...first, ...second],
        Array.from({ length: 400 }, (_, i) => i + 1)
      )
      const stats = elastic.stats()
      assert.strictEqual(stats.active, 1)
      assert.strictEqual(stats.retired, 1)
      assert.isAtLeast(stats.held, 1)
      assert.strictEqual(text(yield* redis.execute(["GET", key])), "400")
    })
  )
})
