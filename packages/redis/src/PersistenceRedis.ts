/**
 * Effect's own portable Redis service, `effect/persistence/Redis`, on this engine: Effect's
 * `RateLimiter.layerStoreRedis`, `Persistence.layerRedis` (`PersistedCache`),
 * `PersistedQueue.layerStoreRedis` and `CircuitBreaker.layerStoreRedis` run on it unchanged.
 *
 * - `send` → `RedisConnection.execute` (the shared engines, pipelined);
 * - `subscribe` → `RedisPubSub.listen` (one dedicated connection for every channel,
 *   re-subscribed after a reconnect; messages published during the gap are lost);
 * - `reserve` → a connection of its own lent by `RedisConnection.withExclusive`, pooled by
 *   `Redis.make` as its `pool` options say.
 *
 * Replies are handed over as node-redis hands RESP2 replies over (what Effect's modules
 * expect): bulk and verbatim strings as `string`, integers as `number` (`bigint` beyond
 * ±2^53), arrays as arrays, RESP3 maps as flat `[key, value, …]` arrays and sets as arrays,
 * null as `null`, a nested error reply as an `Error`.
 *
 * Errors: effect's `Redis` service speaks its own `RedisError` (same tag, no `reason`). Each
 * failure of this engine becomes one of those whose `cause` is this package's `RedisError`
 * (with its `reason`: `Reply`, `Timeout`, `ConnectionLost` …), so nothing is lost:
 * `RedisError.isRedisError(error.cause)` tells it apart and `error.cause.reason` says why.
 *
 * @example
 * ```ts
 * import * as PersistenceRedis from "@effect-falkordb/redis/PersistenceRedis"
 * import { Layer } from "effect"
 * import * as RateLimiter from "effect/persistence/RateLimiter"
 *
 * const Limiter = RateLimiter.layer.pipe(
 *   Layer.provide(RateLimiter.layerStoreRedis()),
 *   Layer.provide(PersistenceRedis.layerFromOptions({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import type { Command } from "@effect-falkordb/resp/Encoder"
import {
  AttributedReply,
  ErrorReply,
  MapReply,
  PushReply,
  type Reply,
  SetReply,
  VerbatimReply
} from "@effect-falkordb/resp/Reply"
import type * as Config from "effect/Config"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redis from "effect/persistence/Redis"
import * as ConfigInput from "./ConfigInput.ts"
import {
  type ExclusiveConnection,
  type LayerOptions,
  layer as connectionLayer,
  RedisConnection
} from "./RedisConnection.ts"
import type { RedisError } from "./RedisError.ts"
import * as RedisPubSub from "./RedisPubSub.ts"

/**
 * A reply as node-redis gives RESP2 replies to Effect's modules.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toValue = (reply: Reply): unknown => {
  if (reply === null || typeof reply !== "object") return reply
  if (reply instanceof Uint8Array) return decodeUtf8(reply)
  if (Array.isArray(reply)) return reply.map(toValue)
  if (reply instanceof ErrorReply) return new Error(reply.message)
  if (reply instanceof MapReply) return reply.flat.map(toValue)
  if (reply instanceof SetReply || reply instanceof PushReply) return reply.items.map(toValue)
  if (reply instanceof VerbatimReply) return decodeUtf8(reply.text)
  if (reply instanceof AttributedReply) return toValue(reply.value)
  return reply
}

/**
 * This package's error as effect's `Redis` error: the original is its `cause`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toEffectError = (error: RedisError): Redis.RedisError => new Redis.RedisError({ cause: error })

type Send = <A = unknown>(command: string, ...args: ReadonlyArray<string>) => Effect.Effect<A, Redis.RedisError>

const sendWith =
  (execute: (command: Command) => Effect.Effect<Reply, RedisError>): Send =>
  <A>(command: string, ...args: ReadonlyArray<string>) =>
    Effect.mapBothEager(execute([command, ...args]), {
      onSuccess: (reply) => toValue(reply) as A,
      onFailure: toEffectError
    })

/**
 * An exclusive connection held open by a fiber until `close`: `withExclusive` lends it for a
 * scope, `Redis.make`'s pool wants an open/close pair.
 */
const connectWith = (connection: RedisConnection["Service"]) =>
  Effect.gen(function* () {
    const lent = Deferred.makeUnsafe<ExclusiveConnection, RedisError>()
    const release = Deferred.makeUnsafe<void>()
    const holder = yield* Effect.forkDetach(
      connection
        .withExclusive((exclusive) => Effect.andThen(Deferred.succeed(lent, exclusive), Deferred.await(release)))
        .pipe(
          Effect.onExit((exit) => (Exit.isFailure(exit) ? Deferred.failCause(lent, exit.cause as never) : Effect.void))
        )
    )
    const exclusive = yield* Effect.mapError(Deferred.await(lent), toEffectError)
    return {
      send: sendWith((command) => exclusive.execute(command)),
      // Interrupting the holder closes the connection, failing what is still in flight on it.
      close: Fiber.interrupt(holder).pipe(Effect.asVoid)
    }
  })

/**
 * Builds effect's `Redis` service from the `RedisConnection` and `RedisPubSub` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("PersistenceRedis.make")(function* (options?: {
  readonly pool?: Redis.PoolOptions | undefined
}) {
  const connection = yield* RedisConnection
  const pubsub = yield* RedisPubSub.RedisPubSub
  return yield* Redis.make({
    send: sendWith((command) => connection.execute(command)),
    subscribe: (channel, onMessage) =>
      Effect.map(
        Effect.mapError(
          pubsub.listen("channel", channel, (message) =>
            onMessage({ channel: message.channel, message: message.message })
          ),
          toEffectError
        ),
        (ended) => Effect.mapError(ended, toEffectError)
      ),
    connect: connectWith(connection),
    pool: options?.pool
  })
})

/**
 * effect's `Redis` service from a `RedisConnection` and a `RedisPubSub` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: {
  readonly pool?: Redis.PoolOptions | undefined
}): Layer.Layer<Redis.Redis, never, RedisConnection | RedisPubSub.RedisPubSub> =>
  Layer.effect(Redis.Redis, make(options))

/**
 * Everything from one options record: the `RedisConnection` (any strategy), the
 * `RedisPubSub` on the same server, and effect's `Redis` service on both.
 *
 * @example
 * ```ts
 * import * as PersistenceRedis from "@effect-falkordb/redis/PersistenceRedis"
 *
 * const Live = PersistenceRedis.layerFromOptions({ url: "redis://127.0.0.1:6379", strategy: "single" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromOptions = (
  options: LayerOptions & { readonly pool?: Redis.PoolOptions | undefined }
): Layer.Layer<Redis.Redis | RedisConnection | RedisPubSub.RedisPubSub, RedisError> => {
  const { pool, ...connection } = options
  return everything(pool, connectionLayer(connection))
}

/**
 * Everything from `Config` (each field a `Config` or a plain value, see `ConfigInput`; the
 * strategy's defaults as in `RedisConnection.layerConfig`): the `RedisConnection`, the
 * `RedisPubSub` on its server, and effect's `Redis` service on both.
 *
 * @example
 * ```ts
 * import * as PersistenceRedis from "@effect-falkordb/redis/PersistenceRedis"
 * import { Config } from "effect"
 *
 * const Live = PersistenceRedis.layerConfig({
 *   url: Config.String("REDIS_URL"),
 *   strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY").pipe(
 *     Config.withDefault("multiplexed")
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: ConfigInput.ConfigInput<LayerOptions & { readonly pool?: Redis.PoolOptions | undefined }>
): Layer.Layer<Redis.Redis | RedisConnection | RedisPubSub.RedisPubSub, RedisError | Config.ConfigError> =>
  Layer.unwrap(
    Effect.map(ConfigInput.read(config), (read) => {
      const { pool, ...connection } = read.options
      const { pool: defaultPool, ...connectionDefaults } = read.defaults
      return everything(pool ?? defaultPool, connectionLayer(connection, connectionDefaults))
    })
  )

/** effect's `Redis` and the `RedisPubSub` (on the connection's server) over `connection`. */
const everything = <E>(
  pool: Redis.PoolOptions | undefined,
  connection: Layer.Layer<RedisConnection, E>
): Layer.Layer<Redis.Redis | RedisConnection | RedisPubSub.RedisPubSub, E | RedisError> =>
  layer({ pool }).pipe(Layer.provideMerge(RedisPubSub.layer()), Layer.provideMerge(connection))
