/**
 * The main doors: `RedisConnection.layer` / `layerConfig`, `RedisPubSub.layer()` over the
 * connection's own address (password and database included) and `RedisPubSub.layerConfig`,
 * `PersistenceRedis.layerConfig`, against a real redis-server.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as PersistenceRedis from "../src/PersistenceRedis.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisError from "../src/RedisError.ts"
import * as RedisPubSub from "../src/RedisPubSub.ts"

/** Subscribes, publishes through the connection, and returns what arrived. */
const roundTrip = Effect.gen(function* () {
  const pubsub = yield* RedisPubSub.RedisPubSub
  const messages = yield* pubsub.subscribe("news")
  assert.strictEqual(yield* pubsub.publish("news", "hello"), 1)
  const [message] = yield* Stream.runCollect(Stream.take(messages, 1))
  return message!.message
})

describe("layers", { timeout: 60_000 }, () => {
  it.live("RedisPubSub.layer() subscribes on the connection's own server: password and database", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ password: Redacted.make("s3cret") })
        const url = `redis://:s3cret@127.0.0.1:${server.port}/2`
        for (const strategy of ["single", "pooled", "multiplexed"] as const) {
          const text = yield* roundTrip.pipe(
            Effect.scoped,
            Effect.provide(RedisPubSub.layer().pipe(Layer.provideMerge(RedisConnection.layer({ url, strategy }))))
          )
          assert.strictEqual(text, "hello")
        }
        // The connection keeps its options with the password redacted.
        const options = yield* RedisConnection.RedisConnection.use((redis) =>
          Effect.succeed(redis.connectOptions?.())
        ).pipe(Effect.provide(RedisConnection.layer({ host: "127.0.0.1", port: server.port, password: "s3cret" })))
        assert.isTrue(Redacted.isRedacted(options?.password))
      })
    )
  )

  it.effect("RedisPubSub.layer() over a service that does not say its address fails with reason Config", () =>
    Effect.gen(function* () {
      const handMade = RedisConnection.makeService({
        info: { strategy: "mock", connections: 1, window: 1, target: "nowhere", protocol: 2 },
        execute: () => Effect.die("unused"),
        submit: () => Effect.die("unused"),
        pipeline: () => Effect.die("unused"),
        withExclusive: () => Effect.die("unused"),
        executeAll: RedisConnection.makeExecuteAll(() => Effect.die("unused"))
      })
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(RedisPubSub.layer())).pipe(
          Effect.provideService(RedisConnection.RedisConnection, handMade)
        )
      )
      assert.isTrue(RedisError.isRedisError(error))
      assert.deepInclude(error.reason, { _tag: "Config", field: "options" })
      assert.include(error.message, "RedisPubSub.layer({ url })")
    })
  )

  it.live("RedisPubSub.layerConfig and PersistenceRedis.layerConfig read their options from Config", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const provider = ConfigProvider.layer(
          ConfigProvider.fromUnknown({ REDIS_URL: server.url, REDIS_STRATEGY: "pooled" })
        )
        const pubsubText = yield* roundTrip.pipe(
          Effect.scoped,
          Effect.provide(
            RedisPubSub.layerConfig({ url: Config.String("REDIS_URL") }).pipe(
              Layer.provideMerge(RedisConnection.layerConfig({ url: Config.String("REDIS_URL") })),
              Layer.provide(provider)
            )
          )
        )
        assert.strictEqual(pubsubText, "hello")
        const { info, pong } = yield* Effect.gen(function* () {
          const redis = yield* Redis.Redis
          const connection = yield* RedisConnection.RedisConnection
          return { info: connection.info, pong: yield* redis.send<string>("PING") }
        }).pipe(
          Effect.provide(
            PersistenceRedis.layerConfig({
              url: Config.String("REDIS_URL"),
              strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY").pipe(
                Config.withDefault("multiplexed")
              ),
              // A default of another strategy's option: dropped for the pooled client.
              connections: Config.Int("REDIS_CONNECTIONS").pipe(Config.withDefault(4))
            }).pipe(Layer.provide(provider))
          )
        )
        assert.strictEqual(pong, "PONG")
        assert.strictEqual(info.strategy, "pooled")
      })
    )
  )
})
