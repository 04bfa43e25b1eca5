/**
 * Effect's own modules on this engine through `PersistenceRedis`, against a real
 * redis-server: `RateLimiter` (limits hold under concurrent load across two clients),
 * `PersistedCache` with `Persistence.layerRedis` (values survive a client restart, TTLs are
 * honoured), `PersistedQueue` (each item delivered once across two workers), plus the error
 * mapping, Pub/Sub and `reserve` of effect's `Redis` service.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Persistable from "effect/persistence/Persistable"
import * as PersistedCache from "effect/persistence/PersistedCache"
import * as PersistedQueue from "effect/persistence/PersistedQueue"
import * as Persistence from "effect/persistence/Persistence"
import * as RateLimiter from "effect/persistence/RateLimiter"
import * as Redis from "effect/persistence/Redis"
import * as PersistenceRedis from "../src/PersistenceRedis.ts"
import * as RedisError from "../src/RedisError.ts"

/** Builds `layer` in a scope of its own, so a test can close one client and start another. */
const build = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope)
    return { context, close: Scope.close(scope, Exit.void) }
  })

const until = (check: Effect.Effect<boolean>, what: string) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 1000; attempt++) {
      if (yield* check) return
      yield* Effect.sleep(10)
    }
    assert.fail(`timed out waiting until ${what}`)
  })

const strategies = ["multiplexed", "single", "pooled"] as const

describe("effect's Redis service on this engine", { timeout: 60_000 }, () => {
  for (const strategy of strategies) {
    it.live(
      `RateLimiter + layerStoreRedis: two ${strategy} clients under concurrent load admit exactly the limit`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* Embedded.make()
            const limiterLayer = RateLimiter.layer.pipe(
              Layer.provide(RateLimiter.layerStoreRedis()),
              Layer.provide(PersistenceRedis.layerFromOptions({ url: server.url, strategy }))
            )
            const clients = yield* Effect.forEach([1, 2], () => build(limiterLayer))
            const limiters = clients.map(({ context }) => Context.get(context, RateLimiter.RateLimiter))
            for (const algorithm of ["fixed-window", "token-bucket"] as const) {
              const outcomes = yield* Effect.forEach(
                Array.from({ length: 200 }, (_, i) => limiters[i % 2]!),
                (limiter) =>
                  Effect.exit(
                    limiter.consume({
                      algorithm,
                      key: `api:${algorithm}`,
                      limit: 37,
                      window: "1 hour",
                      onExceeded: "fail"
                    })
                  ),
                { concurrency: 40 }
              )
              const admitted = outcomes.filter(Exit.isSuccess).length
              assert.strictEqual(admitted, 37, `${algorithm}: the limit holds across both clients`)
              for (const outcome of outcomes) {
                if (Exit.isFailure(outcome)) {
                  const error = outcome.cause.reasons[0]
                  assert.strictEqual(error?._tag, "Fail")
                  if (error?._tag === "Fail") assert.strictEqual(error.error.reason._tag, "RateLimitExceeded")
                }
              }
            }
            for (const client of clients) yield* client.close
          })
        )
    )
  }

  class Square extends Persistable.Class<{ payload: { n: number } }>()("Square", {
    primaryKey: (payload) => `square:${payload.n}`,
    success: Schema.Number
  }) {}

  it.live("PersistedCache + Persistence.layerRedis: a value survives a client restart; a TTL expires it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const persistence = Persistence.layerRedis.pipe(
          Layer.provide(PersistenceRedis.layerFromOptions({ url: server.url }))
        )
        let lookups = 0
        const lookup = (request: Square) =>
          Effect.sync(() => {
            lookups++
            return request.n * request.n
          })
        const withCache = <A, E>(
          storeId: string,
          ttl: Duration.Input,
          use: (cache: PersistedCache.PersistedCache<Square>) => Effect.Effect<A, E>
        ) =>
          Effect.scoped(
            Effect.gen(function* () {
              const client = yield* build(persistence)
              const cache = yield* PersistedCache.make(lookup, { storeId, timeToLive: () => ttl }).pipe(
                Effect.provideContext(client.context)
              )
              const result = yield* use(cache)
              yield* client.close
              return result
            })
          )
        assert.strictEqual(yield* withCache("long", "1 hour", (cache) => cache.get(new Square({ n: 7 }))), 49)
        assert.strictEqual(lookups, 1)
        // A new client (and a new in-memory cache): served from Redis, no lookup.
        assert.strictEqual(yield* withCache("long", "1 hour", (cache) => cache.get(new Square({ n: 7 }))), 49)
        assert.strictEqual(lookups, 1)
        // A short TTL: the persisted value is gone once it passed, so the next client looks it up again.
        assert.strictEqual(yield* withCache("short", "200 millis", (cache) => cache.get(new Square({ n: 3 }))), 9)
        assert.strictEqual(lookups, 2)
        const redis = yield* build(PersistenceRedis.layerFromOptions({ url: server.url }))
        const send = Context.get(redis.context, Redis.Redis).send
        yield* until(
          Effect.map(Effect.orDie(send<ReadonlyArray<string>>("KEYS", "*short*")), (keys) => keys.length === 0),
          "the short-lived key expired in Redis"
        )
        yield* redis.close
        assert.strictEqual(yield* withCache("short", "200 millis", (cache) => cache.get(new Square({ n: 3 }))), 9)
        assert.strictEqual(lookups, 3)
      })
    )
  )

  it.live("PersistedQueue + layerStoreRedis: two workers on two clients take each item exactly once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const queueLayer = PersistedQueue.layer.pipe(
          Layer.provide(PersistedQueue.layerStoreRedis({ pollInterval: "10 millis" })),
          Layer.provide(PersistenceRedis.layerFromOptions({ url: server.url }))
        )
        const clients = yield* Effect.forEach([1, 2], () => build(queueLayer))
        const queues = yield* Effect.forEach(clients, ({ context }) =>
          PersistedQueue.make({ name: "jobs", schema: Schema.Number }).pipe(Effect.provideContext(context))
        )
        const taken: Array<[worker: number, item: number]> = []
        const workers = yield* Effect.forEach(queues, (queue, worker) =>
          Effect.forkChild(
            Effect.forever(
              queue.take((item) =>
                Effect.sync(() => {
                  taken.push([worker, item])
                })
              )
            )
          )
        )
        const items = Array.from({ length: 60 }, (_, i) => i)
        for (const item of items) yield* queues[item % 2]!.offer(item)
        yield* until(
          Effect.sync(() => taken.length >= items.length),
          "every item was taken"
        )
        // A duplicate would show up within a few more polls.
        yield* Effect.sleep(100)
        assert.deepStrictEqual(
          taken.map(([, item]) => item).sort((a, b) => a - b),
          items
        )
        for (const worker of workers) yield* Fiber.interrupt(worker)
        for (const client of clients) yield* client.close
      })
    )
  )

  it.live("errors map to effect's RedisError with ours as the cause; scripts reload after SCRIPT FLUSH", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const client = yield* build(PersistenceRedis.layerFromOptions({ url: server.url, protocol: 3 }))
        const redis = Context.get(client.context, Redis.Redis)
        yield* redis.send("SET", "text", "hello")
        const error = yield* Effect.flip(redis.send("INCR", "text"))
        assert.strictEqual(error._tag, "RedisError")
        assert.isTrue(RedisError.isRedisError(error.cause), "the cause is this package's RedisError")
        const cause = error.cause as RedisError.RedisError
        assert.strictEqual(cause.reason._tag, "Reply")
        const script = Redis.script((key: string) => [key], {
          lua: `return redis.call("INCR", KEYS[1])`,
          numberOfKeys: 1
        }).withReturnType<number>()
        const incr = redis.eval(script)
        assert.strictEqual(yield* incr("counter"), 1)
        yield* redis.send("SCRIPT", "FLUSH")
        assert.strictEqual(yield* incr("counter"), 2, "NOSCRIPT is recognised and the script loaded again")
        // RESP3 replies come back in node-redis's RESP2 shapes.
        yield* redis.send("HSET", "h", "f", "v")
        assert.deepStrictEqual(yield* redis.send("HGETALL", "h"), ["f", "v"])
        assert.strictEqual(yield* redis.send("GET", "missing"), null)
        yield* client.close
      })
    )
  )

  it.live("subscribe delivers published messages; reserve lends a connection a blocking command may hold", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const client = yield* build(PersistenceRedis.layerFromOptions({ url: server.url }))
        const redis = Context.get(client.context, Redis.Redis)
        const messages = yield* redis.subscribe("events")
        assert.strictEqual(yield* redis.send("PUBLISH", "events", "one"), 1)
        assert.deepStrictEqual(yield* Queue.take(messages), { channel: "events", message: "one" })
        const popped = yield* Effect.forkChild(
          Effect.scoped(Effect.flatMap(redis.reserve, (connection) => connection.send("BLPOP", "list", "5")))
        )
        // The shared connection is not held up by the blocked one.
        yield* until(
          Effect.map(Effect.orDie(redis.send<number>("PING")), () => true),
          "the shared connection answers"
        )
        yield* until(
          Effect.map(Effect.orDie(redis.send<string>("CLIENT", "LIST")), (list) => list.includes("cmd=blpop")),
          "BLPOP is blocked on its own connection"
        )
        yield* redis.send("RPUSH", "list", "x")
        assert.deepStrictEqual(yield* Fiber.join(popped), ["list", "x"])
        yield* client.close
      })
    )
  )
})
