/**
 * Key routing over several engines, batches, diversions of blocking and state-changing
 * commands, and the deferred face — against a real redis-server.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as CommandKeys from "../src/CommandKeys.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisOptions from "../src/RedisOptions.ts"
import * as Strategies from "../src/internal/Strategies.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

const multiplexed = (
  url: string,
  connections: number,
  routing: "key" | "spread",
  extra: RedisOptions.RedisOptions = {}
) =>
  Effect.flatMap(RedisOptions.resolve({ url, ...extra }), (resolved) =>
    Strategies.makeMultiplexed(resolved, connections, routing)
  )

const keyed = (url: string, connections: number, extra: RedisOptions.RedisOptions = {}) =>
  multiplexed(url, connections, "key", extra)

const single = (url: string) =>
  Effect.flatMap(RedisOptions.resolve({ url }), (resolved) => Strategies.makeSingle(resolved))

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("routing", (it) => {
  it.effect(
    "readOnly under key routing: reads of one key spread over the engines; other commands stay on the key's engine",
    () =>
      Effect.gen(function* () {
        // A peer that never answers GET: what was sent stays owed, so each engine's load is visible.
        const fake = yield* FakeServer.make((command) => (command[0] === "PING" ? "+PONG\r\n" : undefined))
        const { service: redis, engines } = yield* keyed(fake.url, 4, { closeTimeout: 100 })
        const load = () => engines.map((engine) => engine.window.inUse)
        for (let i = 0; i < 8; i++) yield* redis.submit(["GET", "hot"])
        const keyed8 = load()
        assert.strictEqual(Math.max(...keyed8), 8, `by key: ${keyed8}`)
        for (let i = 0; i < 8; i++) yield* redis.submit(["GET", "hot"], { readOnly: true })
        const spread = load()
        assert.strictEqual(
          spread.reduce((a, b) => a + b, 0),
          16
        )
        for (const [index, inUse] of spread.entries()) {
          if (inUse === 8) continue
          assert.isAtLeast(inUse, 2, `engine ${index} got the reads: ${spread}`)
        }
      })
  )

  it.effect("spread routing: one caller at a time stays on the first engine; concurrent load spreads", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const spread = yield* multiplexed(server.url, 4, "spread")
      const { service: admin } = yield* single(server.url)
      for (let i = 0; i < 20; i++)
        assert.strictEqual(text(yield* spread.service.execute(["ECHO", `pinned-${i}`])), `pinned-${i}`)
      // The server says which connections ran an ECHO last: one socket served every awaited call.
      const clients = text(yield* admin.execute(["CLIENT", "LIST"])).split("\n")
      assert.strictEqual(clients.filter((line) => line.includes(" cmd=echo ")).length, 1, clients.join("\n"))
      // Owed replies make an engine heavier: four unanswered calls land on four engines.
      const fake = yield* FakeServer.make((command) => (command[0] === "PING" ? "+PONG\r\n" : undefined))
      const owed = yield* multiplexed(fake.url, 4, "spread", { closeTimeout: 100 })
      for (let i = 0; i < 4; i++) yield* owed.service.submit(["GET", "never-answered"])
      assert.deepStrictEqual(
        owed.engines.map((engine) => engine.window.inUse),
        [1, 1, 1, 1]
      )
    })
  )

  it.effect("spread routing: an engine that is reconnecting is passed over while others are online", () =>
    Effect.gen(function* () {
      // Four connections are let in; every later one fails its readiness PING, so an engine that
      // loses its link stays offline. `poison` gets a malformed reply, which closes its connection.
      const fake = yield* FakeServer.make((command, connection) => {
        if (command[0] === "PING") return connection <= 4 ? "+PONG\r\n" : "-ERR no more connections\r\n"
        if (command[1] === "poison") return "?\r\n"
        return undefined
      })
      const { service: redis, engines } = yield* multiplexed(fake.url, 4, "spread", { closeTimeout: 100 })
      // Idle engines tie, so the first one gets the poisoned call and loses its connection.
      const poisoned = yield* Effect.exit(redis.execute(["GET", "poison"]))
      assert.strictEqual(poisoned._tag, "Failure")
      assert.deepStrictEqual(
        engines.map((engine) => engine.online),
        [false, true, true, true]
      )
      // Every engine is idle again: the next call goes to the first engine that is online.
      yield* redis.submit(["GET", "never-answered"])
      assert.deepStrictEqual(
        engines.map((engine) => engine.window.inUse),
        [0, 1, 0, 0]
      )
    })
  )

  it.effect("4 engines, key routing: 64 fibers x 200 unawaited RPUSH per key keep their order", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* keyed(server.url, 4)
      const futures = yield* Effect.forEach(
        Array.from({ length: 64 }, (_, fiber) => fiber),
        (fiber) =>
          Effect.gen(function* () {
            const own = []
            for (let i = 0; i < 200; i++) own.push(yield* redis.submit(["RPUSH", `keyed-order-${fiber}`, i]))
            return own
          }),
        { concurrency: "unbounded" }
      )
      yield* Effect.forEach(futures.flat(), (future) => future.await, { discard: true })
      for (let fiber = 0; fiber < 64; fiber++) {
        const list = (yield* redis.execute(["LRANGE", `keyed-order-${fiber}`, 0, -1])) as Array<Uint8Array>
        assert.deepStrictEqual(
          list.map(text),
          Array.from({ length: 200 }, (_, i) => String(i))
        )
      }
      // The 64 keys really were spread over the engines.
      const used = new Set(
        Array.from({ length: 64 }, (_, fiber) => CommandKeys.firstKeySlot(["RPUSH", `keyed-order-${fiber}`])! % 4)
      )
      assert.strictEqual(used.size, 4)
      assert.strictEqual(engines.length, 4)
    })
  )

  it.effect("a command goes to the engine of its first key's hash slot", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* keyed(server.url, 4)
      const { service: admin } = yield* single(server.url)
      yield* admin.execute(["CLIENT", "PAUSE", 150, "ALL"])
      const key = "{route-me}:value"
      const expected = CommandKeys.firstKeySlot(["SET", key, "x"])! % 4
      const future = yield* redis.submit(["SET", key, "x"])
      assert.deepStrictEqual(
        engines.map((engine) => engine.window.inUse),
        engines.map((_, i) => (i === expected ? 1 : 0))
      )
      assert.strictEqual(yield* future.await, "OK")
    })
  )

  it.effect("batches: one engine when the keys agree, a typed error naming keys and engines when not", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis } = yield* keyed(server.url, 4, { window: 16 })
      const tagged = yield* redis.pipeline([
        ["SET", "{user1}:name", "ada"],
        ["INCR", "{user1}:visits"],
        ["PING"],
        ["GET", "{user1}:name"]
      ])
      assert.deepStrictEqual([tagged[0], tagged[1], tagged[2], text(tagged[3])], ["OK", 1, "PONG", "ada"])
      // Find two keys on different engines.
      const a = "span-a"
      let b = "span-b"
      for (let i = 0; CommandKeys.firstKeySlot(["GET", b])! % 4 === CommandKeys.firstKeySlot(["GET", a])! % 4; i++) {
        b = `span-b${i}`
      }
      const spans = yield* Effect.flip(
        redis.pipeline([
          ["SET", a, "1"],
          ["SET", b, "2"]
        ])
      )
      assert.strictEqual(spans.reason._tag, "BatchSpansEngines")
      assert.include(spans.message, `"${a}" -> engine ${CommandKeys.firstKeySlot(["GET", a])! % 4}`)
      assert.include(spans.message, `"${b}" -> engine ${CommandKeys.firstKeySlot(["GET", b])! % 4}`)
      assert.strictEqual(yield* redis.execute(["EXISTS", a, b]), 0)
      const fallback = yield* redis.pipeline(
        [
          ["SET", a, "1"],
          ["SET", b, "2"]
        ],
        { exclusiveFallback: true }
      )
      assert.deepStrictEqual(fallback, ["OK", "OK"])
      const tooLarge = yield* Effect.flip(redis.pipeline(Array.from({ length: 17 }, () => ["PING"])))
      assert.strictEqual(tooLarge.reason._tag, "BatchTooLarge")
      assert.strictEqual(tooLarge.reason.message, "a batch of 17 commands can never be admitted: the window is 16")
    })
  )

  it.effect("blocking commands are diverted: the shared pipe keeps serving while BLPOP waits", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis, engines } = yield* keyed(server.url, 1)
      const waiter = yield* Effect.forkChild(redis.execute(["BLPOP", "diverted-list", 5]), { startImmediately: true })
      yield* Effect.sleep(50)
      // If BLPOP rode the shared pipe, these would queue behind it for up to 5 s.
      const echoes = yield* Effect.forEach(
        Array.from({ length: 100 }, (_, i) => i),
        (i) => redis.execute(["ECHO", `free-${i}`], { timeout: 2000 }),
        { concurrency: "unbounded" }
      )
      echoes.forEach((echo, i) => {
        assert.strictEqual(text(echo), `free-${i}`)
      })
      assert.strictEqual(engines[0].window.inUse, 0)
      yield* redis.execute(["RPUSH", "diverted-list", "item"])
      const popped = (yield* Fiber.join(waiter)) as Array<Uint8Array>
      assert.deepStrictEqual(popped.map(text), ["diverted-list", "item"])
      const submitted = yield* Effect.flip(redis.submit(["BLPOP", "x", 1]))
      assert.strictEqual(submitted.reason._tag, "NotMultiplexable")
    })
  )

  it.effect(
    "state-changing commands: refused on the shared pipe, transactions in a batch, WATCH in withExclusive",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        const { service: redis } = yield* keyed(server.url, 2)
        for (const command of [["MULTI"], ["SELECT", 1], ["WATCH", "k"], ["CLIENT", "SETNAME", "x"]]) {
          const error = yield* Effect.flip(redis.execute(command))
          assert.strictEqual(error.reason._tag, "NotMultiplexable")
          assert.include(error.message, "run it inside withExclusive")
        }
        const subscribe = yield* Effect.flip(redis.execute(["SUBSCRIBE", "news"]))
        assert.strictEqual(subscribe.reason._tag, "Unsupported")
        const transaction = yield* redis.pipeline([["MULTI"], ["SET", "{tx}:a", "1"], ["INCR", "{tx}:a"], ["EXEC"]])
        assert.deepStrictEqual(transaction.slice(0, 3), ["OK", "QUEUED", "QUEUED"])
        assert.deepStrictEqual(transaction[3], ["OK", 2])
        const unbalanced = yield* Effect.flip(redis.pipeline([["MULTI"], ["SET", "{tx}:a", "1"]]))
        assert.strictEqual(unbalanced.reason._tag, "NotMultiplexable")
        const watched = yield* redis.withExclusive((connection) =>
          Effect.gen(function* () {
            yield* connection.execute(["WATCH", "{tx}:a"])
            const value = Number(text(yield* connection.execute(["GET", "{tx}:a"])))
            return yield* connection.pipeline([["MULTI"], ["SET", "{tx}:a", value * 10], ["EXEC"]])
          })
        )
        assert.deepStrictEqual(watched[2], ["OK"])
        assert.strictEqual(text(yield* redis.execute(["GET", "{tx}:a"])), "20")
      })
  )

  it.effect("deferred face: submit returns at once, awaitTimeout gives up without cancelling", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { service: redis } = yield* keyed(server.url, 2)
      const { service: admin } = yield* single(server.url)
      yield* admin.execute(["CLIENT", "PAUSE", 200, "ALL"])
      const future = yield* redis.submit(["SET", "deferred", "ran"])
      assert.strictEqual(yield* future.poll, undefined)
      const gaveUp = yield* Effect.flip(future.awaitTimeout(20))
      assert.strictEqual(gaveUp.reason._tag, "Timeout")
      assert.isTrue(gaveUp.written)
      // Several waiters of one future at once, one of them giving up early: all the others get the reply.
      const waiters = yield* Effect.forEach([0, 1, 2], () => Effect.forkChild(future.await, { startImmediately: true }))
      const impatient = yield* Effect.forkChild(future.awaitTimeout(5), { startImmediately: true })
      assert.strictEqual((yield* Effect.flip(Fiber.join(impatient))).reason._tag, "Timeout")
      assert.deepStrictEqual(yield* Effect.forEach(waiters, Fiber.join), ["OK", "OK", "OK"])
      assert.strictEqual(yield* future.await, "OK")
      assert.strictEqual(yield* future.poll, "OK")
      assert.strictEqual(text(yield* redis.execute(["GET", "deferred"])), "ran")
    })
  )
})

describe("routing validation", () => {
  // covered with exact messages in RedisOptions.test.ts; here only the key-routing specific default
  layer(Embedded.layer(), { excludeTestServices: true })((it) => {
    it.effect("info reports the routing and engine count", () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        const { service } = yield* keyed(server.url, 3)
        assert.strictEqual(service.info.routing, "key")
        assert.strictEqual(service.info.connections, 3)
        assert.strictEqual(service.info.window, 65536)
        // One engine and no routing set: none is reported (there is nothing to route).
        const one = yield* RedisConnection.makeMultiplexed({ url: server.url, connections: 1 })
        assert.isUndefined(one.info.routing)
        assert.strictEqual(one.info.connections, 1)
        const spread = yield* RedisConnection.makeMultiplexed({ url: server.url, connections: 1, routing: "spread" })
        assert.strictEqual(spread.info.routing, "spread")
        assert.isUndefined((yield* RedisConnection.makeSingle({ url: server.url })).info.routing)
      })
    )
  })
})
