/**
 * Redis Pub/Sub as scoped `Stream`s: `subscribe`, `psubscribe` (patterns) and `ssubscribe`
 * (sharded channels) on one dedicated connection per service, `publish` / `spublish`
 * through the ordinary `RedisConnection`.
 *
 * - A subscription is acknowledged by the server before `subscribe` returns: a message
 *   published after that is delivered. It lasts until its scope closes (or the fiber is
 *   interrupted), then the channel is unsubscribed once no other subscriber needs it.
 * - After a lost connection the client reconnects and subscribes again. Messages published
 *   while it was disconnected are lost: Redis Pub/Sub is at-most-once. With a sentinel the
 *   connection follows a failover to the new primary.
 * - Each subscription buffers at most `bufferSize` messages (default 1024) for a slow
 *   consumer; past that the `overflow` policy drops the oldest (`"dropOldest"`, default) or
 *   the newest (`"dropNewest"`) message. Memory stays bounded whatever the publishers do.
 * - Messages of one channel arrive in publish order.
 *
 * @example
 * ```ts
 * import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
 * import { Effect, Stream } from "effect"
 *
 * const firstThree = Effect.scoped(
 *   Effect.gen(function* () {
 *     const pubsub = yield* RedisPubSub.RedisPubSub
 *     const messages = yield* pubsub.subscribe("news", { bufferSize: 256 })
 *     yield* pubsub.publish("news", "hello")
 *     return yield* messages.pipe(Stream.take(3), Stream.map((m) => m.message), Stream.runCollect)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ConfigInput from "./ConfigInput.ts"
import { type RawMessage, Subscriber } from "./internal/Subscriber.ts"
import { RedisConnection, resolvePrimary, type SentinelConfig } from "./RedisConnection.ts"
import { Config as ConfigReason, Decode, RedisError } from "./RedisError.ts"
import type * as RedisOptions from "./RedisOptions.ts"

/**
 * What a subscription listens to: channels (`SUBSCRIBE`), patterns (`PSUBSCRIBE`) or
 * sharded channels (`SSUBSCRIBE`).
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = "channel" | "pattern" | "shard"

/**
 * A message received on a subscription.
 *
 * @since 0.1.0
 * @category models
 */
export class PubSubMessage {
  /** `"channel"` (subscribe), `"pattern"` (psubscribe) or `"shard"` (ssubscribe). */
  readonly kind: Kind
  /** The channel it was published on. */
  readonly channel: string
  /** The pattern that matched, for pattern subscriptions. */
  readonly pattern: string | undefined
  /** The payload as sent. */
  readonly payload: Uint8Array
  constructor(raw: RawMessage) {
    this.kind = raw.kind
    this.channel = raw.channel
    this.pattern = raw.pattern
    this.payload = raw.payload
  }
  /** The payload as UTF-8 text. */
  get message(): string {
    return decodeUtf8(this.payload)
  }
}

/**
 * What a slow consumer's full buffer does with the next message.
 *
 * @since 0.1.0
 * @category models
 */
export type Overflow = "dropOldest" | "dropNewest"

/**
 * @since 0.1.0
 * @category models
 */
export interface SubscribeOptions {
  /** Messages buffered for this subscription. Default 1024. */
  readonly bufferSize?: number | undefined
  /** Default `"dropOldest"`. */
  readonly overflow?: Overflow | undefined
}

/**
 * The Pub/Sub service.
 *
 * - `subscribe(channels)` / `psubscribe(patterns)` / `ssubscribe(channels)`: the stream of a
 *   subscription the server has acknowledged, valid for the current scope. The stream ends
 *   when the scope closes and fails with reason `Closed` when the service closes.
 * - `listen`: the same as a callback (no buffer of its own; the callback must not block).
 * - `publish` / `spublish`: `PUBLISH` / `SPUBLISH` through the `RedisConnection`; the number
 *   of clients that received the message.
 * - `dropped`: messages dropped by full buffers since the service started.
 *
 * @since 0.1.0
 * @category services
 */
export class RedisPubSub extends Context.Service<
  RedisPubSub,
  {
    readonly subscribe: (
      channels: string | ReadonlyArray<string>,
      options?: SubscribeOptions
    ) => Effect.Effect<Stream.Stream<PubSubMessage, RedisError>, RedisError, Scope.Scope>
    readonly psubscribe: (
      patterns: string | ReadonlyArray<string>,
      options?: SubscribeOptions
    ) => Effect.Effect<Stream.Stream<PubSubMessage, RedisError>, RedisError, Scope.Scope>
    readonly ssubscribe: (
      channels: string | ReadonlyArray<string>,
      options?: SubscribeOptions
    ) => Effect.Effect<Stream.Stream<PubSubMessage, RedisError>, RedisError, Scope.Scope>
    readonly listen: (
      kind: Kind,
      names: string | ReadonlyArray<string>,
      onMessage: (message: PubSubMessage) => void
    ) => Effect.Effect<Effect.Effect<never, RedisError>, RedisError, Scope.Scope>
    readonly publish: (channel: string, message: string | Uint8Array) => Effect.Effect<number, RedisError>
    readonly spublish: (channel: string, message: string | Uint8Array) => Effect.Effect<number, RedisError>
    readonly dropped: Effect.Effect<number>
  }
>()("@effect-falkordb/redis/RedisPubSub") {}

const DEFAULT_BUFFER = 1024

const namesOf = (names: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof names === "string" ? [names] : names

const configError = (field: string, message: string): RedisError =>
  new RedisError({ reason: new ConfigReason({ field, message }) })

/**
 * Where the subscriber connection goes: the server's options, or a primary watched by Sentinel
 * (`sentinel: { sentinels, name, … }` or a `redis+sentinel://` URL, as for `RedisConnection`).
 * With a sentinel the subscriber follows failovers: it reconnects to the new primary (checked
 * with `ROLE`) and subscribes again; messages published meanwhile are lost, as on any reconnect.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends RedisOptions.RedisOptions {
  readonly sentinel?: SentinelConfig | undefined
}

/** The server options of the connection in context, for a subscriber next to it. */
const serverOf = (connection: RedisConnection["Service"]): Effect.Effect<Options, RedisError> => {
  const built = connection.connectOptions?.()
  if (built === undefined) {
    return Effect.fail(
      configError(
        "options",
        "RedisPubSub.layer() without options reads the address of the RedisConnection in context, and this one (a mock or a hand-made service) does not say it; pass the server's options: RedisPubSub.layer({ url })"
      )
    )
  }
  if (built.cluster !== undefined) {
    return Effect.fail(
      configError(
        "options",
        "RedisPubSub over a Redis Cluster connection is not supported: pass one node's options, RedisPubSub.layer({ host, port })"
      )
    )
  }
  const {
    strategy: _strategy,
    size: _size,
    connections: _connections,
    routing: _routing,
    window: _window,
    replicas: _replicas,
    readPreference: _readPreference,
    cluster: _cluster,
    ...server
  } = built
  return Effect.succeed(server)
}

/**
 * Builds the service: connects the dedicated subscriber connection now (a wrong address
 * fails here) and publishes through the `RedisConnection` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("RedisPubSub.make")(function* (options?: Options) {
  const connection = yield* RedisConnection
  const resolved = yield* resolvePrimary(options ?? (yield* serverOf(connection)))
  const subscriber = yield* Subscriber.make(resolved)
  let dropped = 0

  const listen = (
    kind: Kind,
    input: string | ReadonlyArray<string>,
    onMessage: (message: PubSubMessage) => void
  ): Effect.Effect<Effect.Effect<never, RedisError>, RedisError, Scope.Scope> =>
    Effect.gen(function* () {
      const names = namesOf(input)
      if (names.length === 0) return yield* configError(kind, "subscribe to at least one channel or pattern")
      let end: ((error: RedisError) => void) | undefined
      let ended: RedisError | undefined
      const listener = {
        onMessage: (raw: RawMessage) => onMessage(new PubSubMessage(raw)),
        onEnd: (error: RedisError) => {
          ended = error
          end?.(error)
        }
      }
      // Registered before waiting for the acknowledgement, so an interrupt while waiting
      // still unsubscribes.
      yield* Effect.addFinalizer(() => Effect.sync(() => subscriber.remove(kind, names, listener)))
      yield* subscriber.add(kind, names, listener)
      return Effect.callback<never, RedisError>((resume) => {
        if (ended !== undefined) return resume(Effect.fail(ended))
        end = (error) => resume(Effect.fail(error))
      })
    })

  const subscribeKind =
    (kind: Kind) =>
    (
      input: string | ReadonlyArray<string>,
      options?: SubscribeOptions
    ): Effect.Effect<Stream.Stream<PubSubMessage, RedisError>, RedisError, Scope.Scope> =>
      Effect.gen(function* () {
        const capacity = options?.bufferSize ?? DEFAULT_BUFFER
        if (!Number.isSafeInteger(capacity) || capacity < 1) {
          return yield* configError("bufferSize", `bufferSize must be an integer >= 1 (got ${capacity})`)
        }
        const overflow = options?.overflow ?? "dropOldest"
        if (overflow !== "dropOldest" && overflow !== "dropNewest") {
          return yield* configError(
            "overflow",
            `overflow must be "dropOldest" or "dropNewest" (got "${String(overflow)}")`
          )
        }
        const queue = yield* Queue.make<PubSubMessage, RedisError>({
          capacity,
          strategy: overflow === "dropOldest" ? "sliding" : "dropping"
        })
        yield* Effect.addFinalizer(() => Queue.shutdown(queue))
        const ended = yield* listen(kind, input, (message) => {
          if (Queue.sizeUnsafe(queue) >= capacity) dropped++
          Queue.offerUnsafe(queue, message)
        })
        yield* Effect.forkScoped(Effect.catch(ended, (error) => Queue.fail(queue, error)))
        return Stream.fromQueue(queue)
      })

  const publishWith = (command: "PUBLISH" | "SPUBLISH") => (channel: string, message: string | Uint8Array) =>
    Effect.flatMap(connection.execute([command, channel, message]), (reply) =>
      typeof reply === "number"
        ? Effect.succeed(reply)
        : Effect.fail(
            new RedisError({
              reason: new Decode({ command, message: `${command} answered ${String(reply)}, not an integer` })
            })
          )
    )

  return RedisPubSub.of({
    subscribe: subscribeKind("channel"),
    psubscribe: subscribeKind("pattern"),
    ssubscribe: subscribeKind("shard"),
    listen,
    publish: publishWith("PUBLISH"),
    spublish: publishWith("SPUBLISH"),
    dropped: Effect.sync(() => dropped)
  })
})

/**
 * The service as a layer. Without `options` the subscriber connects to the server of the
 * `RedisConnection` in context (its address, credentials, database, TLS, sentinel), which must
 * come from this package's layers; with `options`, to the server they address (the same server
 * as the connection, since messages are published through it).
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
 * import { Layer } from "effect"
 *
 * const Live = RedisPubSub.layer().pipe(
 *   Layer.provideMerge(RedisConnection.layer({ url: "redis://127.0.0.1:6379", strategy: "single" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<RedisPubSub, RedisError, RedisConnection> =>
  Layer.effect(RedisPubSub, make(options))

/**
 * The service with its options from `Config` (each field a `Config` or a plain value, see
 * `ConfigInput`), publishing through the `RedisConnection` in context.
 *
 * @example
 * ```ts
 * import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
 * import { Config } from "effect"
 *
 * const Live = RedisPubSub.layerConfig({ url: Config.String("REDIS_URL") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: ConfigInput.ConfigInput<Options>
): Layer.Layer<RedisPubSub, RedisError | Config.ConfigError, RedisConnection> =>
  Layer.effect(
    RedisPubSub,
    Effect.flatMap(ConfigInput.read(config), (read) => make({ ...read.defaults, ...read.options }))
  )
