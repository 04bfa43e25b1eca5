/**
 * Client-side caching against a real redis-server (every strategy): a second client's write
 * invalidates, hits never reach the server (INFO commandstats), a killed connection flushes and
 * tracking comes back with the reconnect, the bound and the TTL hold, broadcast mode with
 * prefixes, a server flush. Against a scripted server that sends no invalidations of its own:
 * the races (an invalidation decoded before the racing reply is stored; a reply that predates
 * this client's acknowledged write), local invalidation by every face, and the refusals.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as RedisClientCache from "../src/RedisClientCache.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import { until } from "./fixtures/Until.ts"

const text = (reply: Reply): string | null =>
  reply === null ? null : reply instanceof Uint8Array ? new TextDecoder().decode(reply) : String(reply)

type Admin = RedisConnection.RedisConnection["Service"]

/** Calls of `command` the server has run, from INFO commandstats. */
const calls = (admin: Admin, command: string) =>
  Effect.map(admin.execute(["INFO", "commandstats"]), (reply) => {
    const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(text(reply) ?? "")
    return match === null ? 0 : Number(match[1])
  })

const strategies: ReadonlyArray<{ readonly name: string; readonly options: RedisConnection.LayerOptions }> = [
  { name: "single", options: { strategy: "single" } },
  { name: "multiplexed x2", options: { strategy: "multiplexed", connections: 2, routing: "spread" } },
  { name: "pooled x2", options: { strategy: "pooled", size: 2 } }
]

const setup = (clientCache: RedisClientCache.ClientCacheOptions, options: RedisConnection.LayerOptions = {}) =>
  Effect.gen(function* () {
    const server = yield* Embedded.make()
    const admin = yield* RedisConnection.makeSingle({ url: server.url })
    const cache = yield* RedisClientCache.make({
      url: server.url,
      protocol: 3,
      reconnect: { baseDelay: 10, maxDelay: 50 },
      ...options,
      clientCache
    })
    return { server, admin, cache }
  })

describe("client-side caching against redis-server", { timeout: 60_000 }, () => {
  for (const { name, options } of strategies) {
    it.live(`${name}: hits stay off the server; a second client's write invalidates`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { admin, cache } = yield* setup({ commands: ["GET", "HGETALL"] }, options)
          yield* admin.execute(["SET", "k", "v1"])
          yield* admin.execute(["HSET", "h", "f", "1"])
          yield* admin.execute(["CONFIG", "RESETSTAT"])
          for (let i = 0; i < 50; i++) assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "v1")
          const hash = yield* cache.connection.execute(["HGETALL", "h"])
          assert.instanceOf(hash, MapReply)
          assert.deepStrictEqual(yield* cache.connection.execute(["HGETALL", "h"]), hash)
          // Up to one miss per connection (pooled, multiplexed); every other read was a hit.
          assert.strictEqual(yield* calls(admin, "get"), 1)
          assert.strictEqual(yield* calls(admin, "hgetall"), 1)
          const stats = yield* cache.stats
          assert.deepStrictEqual([stats.hits, stats.misses, stats.entries], [50, 2, 2])

          yield* admin.execute(["SET", "k", "v2"])
          yield* until(
            Effect.map(cache.execute(["GET", "k"]), (reply) => text(reply) === "v2"),
            "the second client's write reached the cache"
          )
          yield* admin.execute(["HSET", "h", "f", "2"])
          yield* until(
            Effect.map(cache.execute(["HGETALL", "h"]), (reply) => text((reply as MapReply).get("f")!) === "2"),
            "the hash write reached the cache"
          )
          assert.isAtLeast((yield* cache.stats).invalidations, 2)
        })
      )
    )

    it.live(`${name}: a write of this client is seen by its next read`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { cache } = yield* setup({ commands: ["GET", "MGET"] }, options)
          const redis = cache.connection
          for (let i = 0; i < 200; i++) {
            yield* redis.execute(["GET", "n"])
            yield* redis.execute(["MGET", "n", "m"])
            yield* redis.execute(["SET", "n", String(i)])
            assert.strictEqual(text(yield* redis.execute(["GET", "n"])), String(i))
            const both = (yield* redis.execute(["MGET", "n", "m"])) as ReadonlyArray<Reply>
            assert.strictEqual(text(both[0]!), String(i))
          }
          // A write sent with executeAll too: the next read sees it.
          yield* redis.executeAll([
            ["SET", "n", "batch"],
            ["SET", "m", "other"]
          ])
          assert.strictEqual(text(yield* redis.execute(["GET", "n"])), "batch")
        })
      )
    )

    it.live(`${name}: under concurrent load, each fiber reads its own writes and the cache converges`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { admin, cache } = yield* setup({ commands: ["GET"] }, options)
          const redis = cache.connection
          yield* admin.execute(["SET", "shared", "0"])
          const writer = yield* Effect.forkChild(
            Effect.forEach(
              Array.from({ length: 300 }, (_, i) => i),
              (i) => admin.execute(["SET", "shared", String(i + 1)]),
              { discard: true }
            )
          )
          yield* Effect.forEach(
            Array.from({ length: 16 }, (_, fiber) => fiber),
            (fiber) =>
              Effect.gen(function* () {
                for (let i = 0; i < 40; i++) {
                  yield* redis.execute(["GET", "shared"])
                  yield* redis.execute(["SET", `own:${fiber}`, String(i)])
                  assert.strictEqual(text(yield* redis.execute(["GET", `own:${fiber}`])), String(i))
                }
              }),
            { concurrency: "unbounded", discard: true }
          )
          yield* Fiber.join(writer)
          yield* until(
            Effect.map(redis.execute(["GET", "shared"]), (reply) => text(reply) === "300"),
            "the cache caught up with the last write of the other client"
          )
        })
      )
    )

    it.live(`${name}: a killed connection flushes the cache, and tracking comes back with the reconnect`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { admin, cache } = yield* setup({ commands: ["GET"] }, options)
          yield* admin.execute(["SET", "k", "v1"])
          yield* cache.execute(["GET", "k"])
          yield* cache.execute(["GET", "k"])
          assert.strictEqual((yield* cache.stats).entries, 1)
          const before = (yield* cache.stats).flushes
          // Every normal client but the admin: both data connections go.
          yield* admin.execute(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
          yield* until(
            Effect.map(cache.stats, (stats) => stats.flushes > before),
            "the lost connections flushed the cache"
          )
          assert.strictEqual((yield* cache.stats).entries, 0)
          // Written while nobody tracked it for us: the flushed cache cannot serve the old value.
          yield* admin.execute(["SET", "k", "v2"])
          assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "v2")
          // The new connections track again: a second client's write still invalidates.
          yield* cache.execute(["GET", "k"])
          yield* admin.execute(["SET", "k", "v3"])
          yield* until(
            Effect.map(cache.execute(["GET", "k"]), (reply) => text(reply) === "v3"),
            "the write after the reconnect reached the cache"
          )
        })
      )
    )
  }

  it.live("the bound holds; a hot entry survives (second chance); the ttl expires entries", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { admin, cache, server } = yield* setup({ commands: ["GET"], maxEntries: 16 })
        yield* admin.execute(["SET", "hot", "h"])
        yield* cache.execute(["GET", "hot"])
        for (let i = 0; i < 200; i++) {
          yield* cache.execute(["GET", `cold:${i}`])
          yield* cache.execute(["GET", "hot"])
          assert.isAtMost((yield* cache.stats).entries, 16)
        }
        const stats = yield* cache.stats
        assert.strictEqual(stats.entries, 16)
        assert.strictEqual(stats.evictions, 201 - 16)
        // The hot key was read from the server once.
        assert.strictEqual(stats.hits, 200)

        const short = yield* RedisClientCache.make({
          url: server.url,
          protocol: 3,
          strategy: "single",
          clientCache: { commands: ["GET"], ttl: "30 millis" }
        })
        yield* short.execute(["GET", "hot"])
        yield* short.execute(["GET", "hot"])
        assert.strictEqual((yield* short.stats).hits, 1)
        yield* Effect.sleep(60)
        yield* short.execute(["GET", "hot"])
        const after = yield* short.stats
        assert.deepStrictEqual([after.hits, after.misses, after.expirations], [1, 2, 1])
      })
    )
  )

  it.live("broadcast mode: keys under the prefixes are cached and invalidated, others are not cached", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { admin, cache } = yield* setup({ commands: ["GET"], mode: "broadcast", prefixes: ["user:"] })
        yield* admin.execute(["SET", "user:1", "a"])
        yield* admin.execute(["SET", "other:1", "x"])
        yield* admin.execute(["CONFIG", "RESETSTAT"])
        for (let i = 0; i < 5; i++) {
          yield* cache.execute(["GET", "user:1"])
          yield* cache.execute(["GET", "other:1"])
        }
        // user:1 once, other:1 every time.
        assert.strictEqual(yield* calls(admin, "get"), 6)
        assert.strictEqual((yield* cache.stats).entries, 1)
        yield* admin.execute(["SET", "user:1", "b"])
        yield* until(
          Effect.map(cache.execute(["GET", "user:1"]), (reply) => text(reply) === "b"),
          "the broadcast invalidation reached the cache"
        )
      })
    )
  )

  it.live("a server flush empties the cache", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { admin, cache } = yield* setup({ commands: ["GET"] })
        yield* admin.execute(["SET", "a", "1"])
        yield* admin.execute(["SET", "b", "2"])
        yield* cache.execute(["GET", "a"])
        yield* cache.execute(["GET", "b"])
        assert.strictEqual((yield* cache.stats).entries, 2)
        yield* admin.execute(["FLUSHALL"])
        yield* until(
          Effect.map(cache.stats, (stats) => stats.entries === 0 && stats.flushes >= 1),
          "the server's flush reached the cache"
        )
        assert.isNull(yield* cache.execute(["GET", "a"]))
      })
    )
  )
})

// ---------------------------------------------------------------------------------------------
// a scripted server: HELLO, CLIENT TRACKING and PING answered, nothing pushed unless scripted
// ---------------------------------------------------------------------------------------------

const HELLO = "%1\r\n+server\r\n+redis\r\n"
const bulk = (value: string) => `$${Buffer.byteLength(value)}\r\n${value}\r\n`
const invalidate = (key: string) => `>2\r\n${bulk("invalidate")}*1\r\n${bulk(key)}`

/** A tiny key-value server with transactions; it never pushes an invalidation by itself. */
const kvServer = (
  script: (command: Array<string>, connection: number) => FakeServer.Answer | "default" = () => "default"
) => {
  const data = new Map<string, string>()
  const queued = new Map<number, Array<Array<string>>>()
  const gets: Array<number> = []
  const run = (command: Array<string>): string => {
    switch (command[0]) {
      case "GET": {
        const value = data.get(command[1]!)
        return value === undefined ? "_\r\n" : bulk(value)
      }
      case "SET":
        data.set(command[1]!, command[2]!)
        return "+OK\r\n"
      default:
        return "-ERR unknown command\r\n"
    }
  }
  return Effect.map(
    FakeServer.make((command, connection) => {
      const name = command[0]!
      if (name === "HELLO") return HELLO
      if (name === "CLIENT") return "+OK\r\n"
      if (name === "PING") return "+PONG\r\n"
      if (name === "GET") gets.push(connection)
      const scripted = script(command, connection)
      if (scripted !== "default") return scripted
      const transaction = queued.get(connection)
      if (name === "MULTI") {
        queued.set(connection, [])
        return "+OK\r\n"
      }
      if (name === "EXEC" && transaction !== undefined) {
        queued.delete(connection)
        return `*${transaction.length}\r\n${transaction.map(run).join("")}`
      }
      if (transaction !== undefined) {
        transaction.push(command)
        return "+QUEUED\r\n"
      }
      return run(command)
    }),
    (fake) => ({ fake, data, gets })
  )
}

describe("client-side caching: races and local invalidation (scripted server)", { timeout: 30_000 }, () => {
  it.live("an invalidation decoded before the racing reply is stored keeps that reply out", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let first = true
        const { fake, data, gets } = yield* kvServer((command) => {
          if (command[0] === "GET" && command[1] === "flush") return `${bulk("x")}>2\r\n${bulk("invalidate")}_\r\n`
          if (command[0] !== "GET" || !first) return "default"
          first = false
          // The reply, then (in the same write) the server's announcement that the key changed.
          data.set("k", "v2")
          return `${bulk("v1")}${invalidate("k")}`
        })
        const cache = yield* RedisClientCache.make({
          url: fake.url,
          protocol: 3,
          strategy: "single",
          clientCache: { commands: ["GET"] }
        })
        assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "v1")
        assert.strictEqual((yield* cache.stats).entries, 0)
        assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "v2")
        assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "v2")
        assert.strictEqual(gets.length, 2)
        // A null invalidation (the server flushed its dataset) empties the cache.
        const before = yield* cache.stats
        assert.strictEqual(before.entries, 1)
        yield* cache.execute(["GET", "flush"])
        const after = yield* cache.stats
        assert.deepStrictEqual([after.entries, after.flushes], [0, before.flushes + 1])
      })
    )
  )

  it.live("a reply older than an acknowledged write of this client is never served", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // SET is acknowledged late; a GET on the other engine is answered at once with the old
        // value (it ran first): it is stored, and the SET's acknowledgement must drop it.
        let setReceived = false
        const { fake, data, gets } = yield* kvServer((command) => {
          if (command[0] === "SET" && command[1] === "k") {
            setReceived = true
            return { delay: 100, bytes: "+OK\r\n" }
          }
          return "default"
        })
        data.set("k", "old")
        const cache = yield* RedisClientCache.make({
          url: fake.url,
          protocol: 3,
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          clientCache: { commands: ["GET"] }
        })
        const write = yield* Effect.forkChild(cache.connection.execute(["SET", "k", "new"]))
        yield* until(
          Effect.sync(() => setReceived),
          "the server received the SET"
        )
        // Answered before the SET is acknowledged, with the value from before it.
        const seen = text(yield* cache.execute(["GET", "k"]))
        assert.strictEqual(seen, "old")
        data.set("k", "new")
        yield* Fiber.join(write)
        assert.strictEqual(text(yield* cache.execute(["GET", "k"])), "new")
        assert.strictEqual(gets.length, 2)
      })
    )
  )

  it.live("writes through execute, submit, pipeline and withExclusive drop the keys locally", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { fake, gets } = yield* kvServer()
        const cache = yield* RedisClientCache.make({
          url: fake.url,
          protocol: 3,
          strategy: "single",
          clientCache: { commands: ["GET"] }
        })
        const redis = cache.connection
        const read = Effect.map(redis.execute(["GET", "k"]), text)
        yield* redis.execute(["SET", "k", "1"])
        assert.strictEqual(yield* read, "1")
        assert.strictEqual(yield* read, "1")
        assert.strictEqual(gets.length, 1)

        const future = yield* redis.submit(["SET", "k", "2"])
        yield* future.await
        assert.strictEqual(yield* read, "2")
        assert.strictEqual(yield* read, "2")

        yield* redis.pipeline([
          ["SET", "k", "3"],
          ["SET", "other", "x"]
        ])
        assert.strictEqual(yield* read, "3")
        assert.strictEqual(yield* read, "3")

        yield* redis.withExclusive((connection) =>
          Effect.gen(function* () {
            yield* connection.execute(["MULTI"])
            yield* connection.execute(["SET", "k", "4"])
            // Still queued: the cached value is the current one until EXEC.
            assert.strictEqual(yield* read, "3")
            yield* connection.execute(["EXEC"])
          })
        )
        assert.strictEqual(yield* read, "4")
        assert.strictEqual(yield* read, "4")
        assert.strictEqual(gets.length, 5)
        // The read inside the transaction was sent too: the queued SET dropped the key.
        assert.strictEqual((yield* cache.stats).hits, 4)
      })
    )
  )

  it.live("refusals: RESP2, uncacheable commands, prefixes without broadcast, a server without tracking", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const refuse = (options: RedisClientCache.Options) =>
          Effect.map(Effect.flip(RedisClientCache.make(options)), (error) => error.reason)
        const url = "redis://127.0.0.1:1"
        const resp2 = yield* refuse({ url, clientCache: { commands: ["GET"] } })
        assert.strictEqual(resp2._tag, "Config")
        assert.include(resp2.message, "protocol: 3")
        const set = yield* refuse({ url, protocol: 3, clientCache: { commands: ["SET"] } })
        assert.include(set.message, "SET cannot be cached")
        const ttl = yield* refuse({ url, protocol: 3, clientCache: { commands: ["TTL"] } })
        assert.include(ttl.message, "TTL cannot be cached")
        const prefixes = yield* refuse({ url, protocol: 3, clientCache: { commands: ["GET"], prefixes: ["a:"] } })
        assert.include(prefixes.message, "broadcast")
        const cluster = yield* refuse({
          url,
          protocol: 3,
          cluster: { nodes: ["127.0.0.1:1"] },
          clientCache: { commands: ["GET"] }
        })
        assert.include(cluster.message, "not supported yet")

        const old = yield* FakeServer.make((command) => {
          if (command[0] === "HELLO") return HELLO
          if (command[0] === "CLIENT") return "-ERR unknown subcommand 'TRACKING'. Try CLIENT HELP.\r\n"
          return "+PONG\r\n"
        })
        const refused = yield* refuse({ url: old.url, protocol: 3, clientCache: { commands: ["GET"] } })
        assert.strictEqual(refused._tag, "Config")
        assert.include(refused.message, "CLIENT TRACKING")
        assert.include(refused.message, "unknown subcommand")

        const resp2Only = yield* FakeServer.make((command) =>
          command[0] === "HELLO" ? "-ERR unknown command 'HELLO'\r\n" : "+OK\r\n"
        )
        const noHello = yield* refuse({ url: resp2Only.url, protocol: 3, clientCache: { commands: ["GET"] } })
        assert.strictEqual(noHello._tag, "Config")
        assert.include(noHello.message, "HELLO 3")
      })
    )
  )
})
