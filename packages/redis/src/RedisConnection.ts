/**
 * The one seam between everything above the wire and the wire: a `RedisConnection`
 * service. Connection strategies (Single, Pooled, Multiplexed) are Layers that provide it;
 * the graph client, the mock layer and users' code depend only on this interface.
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Strategies from "./internal/Strategies.ts"
import type * as Schema from "effect/Schema"
import * as ConfigInput from "./ConfigInput.ts"
import * as Cluster from "./internal/Cluster.ts"
import * as ExecuteAllInternal from "./internal/ExecuteAll.ts"
import * as OptionChecks from "./internal/OptionChecks.ts"
import * as MakeService from "./internal/MakeService.ts"
import * as Sentinel from "./internal/Sentinel.ts"
import * as Folded from "./internal/Folded.ts"
import * as Streamed from "./internal/Streamed.ts"
import type { RedisError } from "./RedisError.ts"
import * as RedisOptions from "./RedisOptions.ts"

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommandOptions {
  /**
   * Stop waiting after this long and fail with reason `Timeout`. A written command is not
   * cancelled: its late reply is read and dropped. Default: the client's `commandTimeout`.
   */
  readonly timeout?: Duration.Input | undefined
  /**
   * The command only reads and needs no order against other commands on its key. With
   * `routing: "key"`, it goes to the least loaded engine instead of its key's engine (so
   * reads of one hot key, like a graph's read-only queries, run in parallel); it may then
   * overtake an unawaited write of the same key. Other routings and strategies ignore it.
   */
  readonly readOnly?: boolean | undefined
  /**
   * Where a read-only command of this call goes, overriding the client's `readPreference`
   * (clients with replicas: Sentinel, or `replicas` configured). Writes always go to the primary.
   */
  readonly readPreference?: ReadPreference | undefined
}

/**
 * Where read-only commands go: `"primary"` (default), `"replica"` (a replica only; fails when
 * none is reachable) or `"preferReplica"` (a replica while one is connected, else the primary).
 * Replicas lag behind the primary (replication is asynchronous): a read from a replica may not
 * see a write the primary has acknowledged.
 *
 * @since 0.1.0
 * @category models
 */
export type ReadPreference = "primary" | "replica" | "preferReplica"

/**
 * Options of a pipeline.
 *
 * @since 0.1.0
 * @category models
 */
export interface PipelineOptions extends CommandOptions {
  /**
   * With several key-routed engines, a batch whose keys map to different engines fails
   * with reason `BatchSpansEngines` unless this is true; it then
   * runs on an exclusive connection, not ordered against unawaited commands on the engines.
   */
  readonly exclusiveFallback?: boolean | undefined
}

/**
 * Options of `executeAll`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteAllOptions extends CommandOptions {
  /**
   * `"default"`: the replies in command order, or the first failure in command order (an
   * error reply fails with reason `Reply`, as `execute` does). `"result"`: one
   * `Result` per command, in command order, so every command's outcome is a value (as
   * `Effect.all`'s `mode: "result"`); the call itself then fails only when nothing was sent
   * (an invalid or refused command).
   */
  readonly mode?: "default" | "result" | undefined
}

/**
 * The `executeAll` face: N independent commands put on their way at once, their caller
 * suspended once and resumed when the last of them has settled.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteAll {
  (
    commands: ReadonlyArray<Command>,
    options?: ExecuteAllOptions & { readonly mode?: "default" | undefined }
  ): Effect.Effect<ReadonlyArray<Reply>, RedisError>
  (
    commands: ReadonlyArray<Command>,
    options: ExecuteAllOptions & { readonly mode: "result" }
  ): Effect.Effect<ReadonlyArray<Result.Result<Reply, RedisError>>, RedisError>
  (
    commands: ReadonlyArray<Command>,
    options?: ExecuteAllOptions
  ): Effect.Effect<ReadonlyArray<Reply> | ReadonlyArray<Result.Result<Reply, RedisError>>, RedisError>
}

/**
 * A command already on its way. Awaiting it waits for the reply; awaiting with a timeout
 * gives up waiting without cancelling the command.
 *
 * @since 0.1.0
 * @category models
 */
export interface Future<A> {
  /** Waits for the reply. Error replies fail with reason `Reply`. */
  readonly await: Effect.Effect<A, RedisError>
  /** Waits at most `timeout`; the command itself is not cancelled. */
  readonly awaitTimeout: (timeout: Duration.Input) => Effect.Effect<A, RedisError>
  /** The reply if it has arrived already. */
  readonly poll: Effect.Effect<A | undefined, RedisError>
}

/**
 * One piece of a streamed reply (`executeStreamed`), in wire order. The outer `depth` levels
 * of the reply's arrays arrive as `Open` … `Close` around their elements; deeper values, and
 * empty or null arrays, arrive whole as `Value`s. `depth` 0 is the reply itself, 1 its
 * elements, 2 theirs. A reply that is not a non-empty array arrives as one `Value` at depth 0.
 *
 * @since 0.1.0
 * @category models
 */
export type ReplyPart =
  | { readonly _tag: "Open"; readonly depth: number; readonly length: number }
  | { readonly _tag: "Value"; readonly depth: number; readonly value: Reply }
  | { readonly _tag: "Close"; readonly depth: number }

/**
 * Builds a value from one reply's parts as they are read off the socket
 * (`executeFolded`), so a large array reply is never held whole: the outer `depth` levels of
 * arrays are never built, `open` / `value` / `close` arrive exactly as the `ReplyPart`s of
 * `executeStreamed` would, and `result` is asked once the reply is complete. A reply that is
 * not a non-empty array (`*0`, a null, a scalar) arrives as one `value` at depth 0.
 *
 * The calls are made synchronously while the socket's bytes are decoded, ahead of the replies
 * of other callers behind it: keep them short, and do not throw (a fold that throws fails its
 * own command with the defect; the rest of its reply is skipped as it arrives).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplyFold<A> {
  /** Levels of arrays folded part by part (1: the reply's elements; 2: theirs too). */
  readonly depth: number
  /** An array at `depth` (0 = the reply) began with `length` elements. */
  readonly open: (depth: number, length: number) => void
  /** A complete element of the open array at `depth - 1` (or the whole reply at depth 0). */
  readonly value: (depth: number, value: Reply) => void
  /** The array at `depth` is complete; `close(0)` ends the reply. */
  readonly close: (depth: number) => void
  /** What the fold built, asked once after the reply ended. */
  readonly result: () => A
}

/**
 * Options of a streamed command.
 *
 * Backpressure: while the stream holds more than `highWaterMark` bytes that its consumer has
 * not taken, the connection stops reading when no other command waits behind the reply (a
 * pooled connection always; a shared one while nobody else uses it). When other replies
 * wait behind it on a shared connection, reading never pauses: the stream buffers up to
 * `maxBuffered` bytes, then fails with reason `StreamOverflow` and the rest of the reply is
 * discarded as it arrives (the other callers' replies follow undisturbed).
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions extends CommandOptions {
  /** Levels of arrays streamed (1: the reply's elements; 2: theirs too). Default 2. */
  readonly depth?: number | undefined
  /** Buffered bytes past which a connection nobody else waits on pauses reading. Default 1 MiB. */
  readonly highWaterMark?: number | undefined
  /** Buffered bytes past which a stream on a busy shared connection fails. Default 64 MiB. */
  readonly maxBuffered?: number | undefined
}

/**
 * A connection held exclusively by one user for the duration of a scope: for blocking
 * commands, MULTI/EXEC with WATCH, or anything that changes connection state.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExclusiveConnection {
  readonly execute: (command: Command, options?: CommandOptions) => Effect.Effect<Reply, RedisError>
  readonly pipeline: (
    commands: ReadonlyArray<Command>,
    options?: CommandOptions
  ) => Effect.Effect<ReadonlyArray<Reply>, RedisError>
  /**
   * Streams a reply on this connection (see `RedisConnection.executeStreamed`), inside the
   * scope of `withExclusive`. A lagging consumer pauses reading (nobody else uses the
   * connection). Optional: `executeStreamed` (the function) falls back to `execute`.
   */
  readonly executeStreamed?: (command: Command, options?: StreamOptions) => Stream.Stream<ReplyPart, RedisError>
  /** Independent commands, one resume for all (see `RedisConnection`'s `executeAll`); on this connection, in order. */
  readonly executeAll: ExecuteAll
}

/**
 * What a client is and how it is sized.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionInfo {
  readonly strategy: "single" | "pooled" | "multiplexed" | "mock"
  /** Sockets the strategy holds (engines for multiplexed, pool size for pooled). */
  readonly connections: number
  /** Commands allowed in flight per connection (1 for single and pooled). */
  readonly window: number
  /** Routing across engines, for multiplexed clients. */
  readonly routing?: "key" | "spread" | undefined
  /**
   * The bounds of a self-sizing multiplexed client (`connections: { min, max }`); then
   * `connections` is `max`, and the engines in use at a moment are between the two.
   */
  readonly sizing?: { readonly min: number; readonly max: number } | undefined
  /**
   * A stable name of the server this client talks to (e.g. `127.0.0.1:6379/0`). Caches that
   * belong to a server, like the graph schema cache, are keyed by it.
   */
  readonly target: string
  /** RESP protocol version negotiated with HELLO (2 when HELLO was not sent). */
  readonly protocol: 2 | 3
  /**
   * For clients whose primary can change (Sentinel, Cluster): a counter bumped each time the
   * primary serving `key` (any key when omitted) changed — a failover, a slot moved to
   * another node. Caches of server state (the graph schema cache) re-validate when it moves:
   * the new primary may lack writes the old one acknowledged. Absent for a fixed server.
   */
  readonly primaryEpoch?: ((key?: string) => number) | undefined
}

/**
 * The connection service.
 *
 * - `execute` sends a command and waits for its reply. A top-level error reply fails with
 *   a `RedisError` with reason `Reply`; errors nested in an aggregate stay values (`ErrorReply`).
 * - `submit` puts the command on its way and returns a `Future` at once.
 * - `pipeline` sends the commands contiguously on one connection and returns one reply per
 *   command, error replies included as `ErrorReply` values (no failure for those).
 * - `executeAll` puts independent commands on their way at once (each routed like
 *   `execute`) and resumes the caller once, when the last has settled.
 * - `withExclusive` lends a connection of one's own for the scope of `use`.
 *
 * @since 0.1.0
 * @category services
 */
export class RedisConnection extends Context.Service<
  RedisConnection,
  {
    readonly info: ConnectionInfo
    readonly execute: (command: Command, options?: CommandOptions) => Effect.Effect<Reply, RedisError>
    readonly submit: (command: Command, options?: CommandOptions) => Effect.Effect<Future<Reply>, RedisError>
    readonly pipeline: (
      commands: ReadonlyArray<Command>,
      options?: PipelineOptions
    ) => Effect.Effect<ReadonlyArray<Reply>, RedisError>
    readonly withExclusive: <A, E, R>(
      use: (connection: ExclusiveConnection) => Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>>
    /**
     * Puts N independent commands on their way at once and resumes the caller once, when the
     * last of them has settled: a window of commands for the cost of one wait, where awaiting
     * N `submit` futures costs a suspend and resume each. Unlike `pipeline` the commands are
     * not contiguous (other callers' commands may come between them) and each is routed like
     * `execute` (by its own first key; on a cluster, to its slot's node), so one call may
     * span engines and nodes; on each engine they are written in the array's order. A batch
     * larger than the window goes out in pieces as replies return room. See `ExecuteAllOptions`
     * for the result shapes, and the README ("Four faces") for timeouts and interruption.
     *
     * @example
     * ```ts
     * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
     * import { Effect } from "effect"
     *
     * const program = Effect.gen(function* () {
     *   const redis = yield* RedisConnection.RedisConnection
     *   // One suspension for all three; fails with the first failure in command order.
     *   const [a, b, c] = yield* redis.executeAll([["GET", "a"], ["GET", "b"], ["INCR", "hits"]])
     *   // Every outcome as a value: a WRONGTYPE reply does not hide the other replies.
     *   const results = yield* redis.executeAll([["INCR", "n"], ["INCR", "a-list"]], { mode: "result" })
     *   return { a, b, c, results }
     * })
     * ```
     */
    readonly executeAll: ExecuteAll
    /**
     * Sends a command whose reply is streamed (see `ReplyPart`, `StreamOptions`): its parts
     * are handed over as they arrive instead of after the whole reply. Replies behind it
     * on the same connection keep their order. Stopping the stream early discards the rest
     * of the reply as it arrives. A service made by hand (`makeService`) without a streamed
     * path runs `execute` and hands over the parts of the whole reply.
     *
     * @example
     * ```ts
     * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
     * import { Effect, Stream } from "effect"
     *
     * const firstTen = Effect.gen(function* () {
     *   const redis = yield* RedisConnection.RedisConnection
     *   return yield* redis.executeStreamed(["LRANGE", "big", "0", "-1"], { depth: 1 }).pipe(
     *     Stream.filter((part) => part._tag === "Value" && part.depth === 1),
     *     Stream.take(10),
     *     Stream.runCollect
     *   )
     * })
     * ```
     */
    readonly executeStreamed: (command: Command, options?: StreamOptions) => Stream.Stream<ReplyPart, RedisError>
    /**
     * Executes a command whose reply is folded as it is read (see `ReplyFold`): `fold` is
     * called once for the command and its parts go to it instead of into a reply tree. Timeouts,
     * routing and errors are those of `execute`; an error reply fails as with `execute` and is
     * never folded. Optional: `RedisConnection.executeFolded` (the function) falls back to
     * `execute` and folds the whole reply.
     */
    readonly executeFolded?:
      | (<A>(command: Command, fold: () => ReplyFold<A>, options?: CommandOptions) => Effect.Effect<A, RedisError>)
      | undefined
    /**
     * Executes a command and decodes its reply with an `effect/Schema` (see `ReplySchema`);
     * a reply the schema does not accept fails with reason `Decode` (the command ran).
     *
     * @example
     * ```ts
     * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
     * import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
     * import { Effect } from "effect"
     *
     * const program = Effect.gen(function* () {
     *   const redis = yield* RedisConnection.RedisConnection
     *   const visits = yield* redis.executeAs(ReplySchema.Integer, ["INCR", "visits"]) // number
     *   const user = yield* redis.executeAs(ReplySchema.Hash, ["HGETALL", "user:1"]) // Record<string, string>
     *   return { visits, user }
     * })
     * ```
     */
    readonly executeAs: <S extends Schema.Top>(
      schema: S,
      command: Command,
      options?: CommandOptions
    ) => Effect.Effect<S["Type"], RedisError, S["DecodingServices"]>
    /**
     * The options this client was built from (address, credentials with the password
     * `Redacted`, database, TLS, sentinel …), for dedicated connections to the same server:
     * `RedisPubSub.layer()` without options uses them. A function, so that serialising the
     * service (a log, a span, JSON) never shows a URL's credentials. Absent for mocks and
     * hand-made services.
     */
    readonly connectOptions?: (() => LayerOptions) | undefined
  }
>()("@effect-falkordb/redis/RedisConnection") {}

/**
 * Options of a multiplexed client: `connections` engines ("FullDuplexPipes"), each with
 * its own socket and its own window of `window` commands.
 *
 * @since 0.1.0
 * @category models
 */
export interface MultiplexedOptions extends RedisOptions.RedisOptions {
  /**
   * Engines (sockets). Default 1. `{ min, max }` (min defaults to 1) sizes the client to its
   * load: one engine while one keeps up, more (up to `max`) while callers wait for the window
   * or while an extra engine measurably raises the rate, fewer again when the load falls. Keys
   * keep their order while engines come and go (see the README: "Engines that size themselves").
   */
  readonly connections?: number | Sizing | undefined
  /**
   * How commands are spread over several engines. `"spread"`: the least loaded engine;
   * order holds only for awaited calls. Must be stated when `connections > 1`.
   */
  readonly routing?: "spread" | "key" | undefined
}

/**
 * The bounds of a self-sizing multiplexed client.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sizing {
  /** Engines kept open even when idle. Default 1. */
  readonly min?: number | undefined
  /** Engines at most. */
  readonly max: number
}

/**
 * Options of a pooled client.
 *
 * @since 0.1.0
 * @category models
 */
export interface PooledOptions extends RedisOptions.RedisOptions {
  /** Connections in the pool. Default 8. */
  readonly size?: number | undefined
}

/**
 * Validates the options of `strategy` and builds its client; `adjust` patches the resolved
 * options (Sentinel sets the locator and the target).
 */
const buildStrategy = Effect.fnUntraced(function* (
  strategy: Strategy,
  options: LayerOptions,
  adjust: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions = (resolved) => resolved
) {
  switch (strategy) {
    case "single": {
      const resolved = adjust(yield* RedisOptions.resolve(options))
      return (yield* Strategies.makeSingle(resolved)).service
    }
    case "multiplexed": {
      const resolved = adjust(yield* RedisOptions.resolve(options))
      const { connections, routing } = yield* OptionChecks.checkMultiplexed(options)
      return typeof connections === "number"
        ? (yield* Strategies.makeMultiplexed(resolved, connections, routing)).service
        : (yield* Strategies.makeSized(resolved, connections, routing)).service
    }
    case "pooled": {
      const size = yield* OptionChecks.checkPooled(options)
      const resolved = adjust(yield* RedisOptions.resolve(options))
      return (yield* Strategies.makePooled(resolved, size)).service
    }
  }
})

/**
 * One connection; every command is pipelined in order over one socket.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSingle = Effect.fn("RedisConnection.makeSingle")(function* (options: RedisOptions.RedisOptions) {
  return yield* buildStrategy("single", options)
})

/**
 * Several multiplexed engines.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMultiplexed = Effect.fn("RedisConnection.makeMultiplexed")(function* (options: MultiplexedOptions) {
  return yield* buildStrategy("multiplexed", options)
})

/**
 * A pool of connections; each call borrows one exclusively.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePooled = Effect.fn("RedisConnection.makePooled")(function* (options: PooledOptions) {
  return yield* buildStrategy("pooled", options)
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layerSingle = (options: RedisOptions.RedisOptions): Layer.Layer<RedisConnection, RedisError> =>
  Layer.effect(RedisConnection, makeSingle(options))

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMultiplexed = (options: MultiplexedOptions): Layer.Layer<RedisConnection, RedisError> =>
  Layer.effect(RedisConnection, makeMultiplexed(options))

/**
 * @since 0.1.0
 * @category layers
 */
export const layerPooled = (options: PooledOptions): Layer.Layer<RedisConnection, RedisError> =>
  Layer.effect(RedisConnection, makePooled(options))

/**
 * The connection strategies.
 *
 * @since 0.1.0
 * @category models
 */
export type Strategy = "single" | "pooled" | "multiplexed"

/**
 * Every option of every strategy, plus the strategy (default `"multiplexed"`): what
 * `layer` and `layerConfig` take. An option that does not apply to the chosen
 * strategy (`size` for multiplexed, `connections`/`routing` for single or pooled, `window`
 * for pooled) fails with reason `Config` instead of being ignored; a default of one (from
 * `defaults`, or a `Config.withDefault` in `layerConfig`) is dropped.
 *
 * @since 0.1.0
 * @category models
 */
export interface LayerOptions extends MultiplexedOptions, PooledOptions {
  readonly strategy?: Strategy | undefined
  /**
   * Find the primary through these sentinels instead of `host`/`port` (see `layerSentinel`).
   * A `redis+sentinel://` URL sets it too.
   */
  readonly sentinel?: SentinelConfig | undefined
  /** Where read-only commands go by default (see `ReadPreference`). Default `"primary"`. */
  readonly readPreference?: ReadPreference | undefined
  /**
   * Replicas to read from (`"host:port"` or `{ host, port }`), instead of those the sentinels
   * know; without a sentinel, the primary is `url`/`host`/`port`.
   */
  readonly replicas?: ReadonlyArray<string | { readonly host: string; readonly port: number }> | undefined
  /** A Redis Cluster reached through these seed nodes instead of `host`/`port` (see `layerCluster`). */
  readonly cluster?: ClusterConfig | undefined
}

/**
 * How to reach a Redis Cluster.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClusterConfig {
  /**
   * Seed nodes (`"host:port"` or `{ host, port }`), asked for the slot map in turn. With a
   * `url` (`rediss://user:password@host:port`), its host and port are the first seed and its
   * scheme (TLS), user, password and database apply to every node; `nodes` may then be empty.
   */
  readonly nodes: ReadonlyArray<string | { readonly host: string; readonly port?: number | undefined }>
}

/**
 * How to find the primary through Sentinel.
 *
 * @since 0.1.0
 * @category models
 */
export interface SentinelConfig {
  /** Sentinel addresses, `"host:port"` (port 26379 by default) or `{ host, port }`. */
  readonly sentinels: ReadonlyArray<string | { readonly host: string; readonly port?: number | undefined }>
  /** The monitored name (`sentinel monitor <name> …`). */
  readonly name: string
  /** ACL user of the sentinels (their own, not the data servers'). */
  readonly sentinelUsername?: string | undefined
  /** Password of the sentinels (`requirepass` in the sentinel config), separate from `password`. */
  readonly sentinelPassword?: Redacted.Redacted<string> | string | undefined
  /**
   * Rotating credentials of the sentinels, instead of `sentinelUsername`/`sentinelPassword`:
   * an `Effect` asked at every connect to a sentinel, or a `Stream` whose latest emission is
   * used from then on (run while the client lives), as the data servers' `credentials`.
   */
  readonly sentinelCredentials?: RedisOptions.CredentialsOption | undefined
  /** TLS to the sentinels: `true` or TLS options (`node:tls`'s, plus `caFile`, `certFile`, `keyFile`). Default: none. */
  readonly sentinelTls?: boolean | RedisOptions.TlsOptions | undefined
}

/**
 * Options of a Sentinel client: the sentinels, plus the options of the data connections
 * (strategy, timeouts, `password` of the data servers …; their address comes from the sentinels).
 *
 * @since 0.1.0
 * @category models
 */
export interface SentinelOptions extends SentinelConfig, Omit<LayerOptions, "sentinel" | "host" | "port" | "path"> {}

/**
 * What `layerConfig` reads: the same as `LayerOptions` (durations may be `Duration`s, e.g.
 * `Config.Duration("TIMEOUT")`; the password a `Config.Redacted`), each field a `Config` or a
 * plain value.
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigOptions = LayerOptions

/**
 * Builds the client of `options.strategy` (default `"multiplexed"`). `defaults` fill the
 * options left undefined, and only those that apply to the chosen strategy: a library on
 * top (like the graph client) states its defaults once, e.g.
 * `{ connections: 8, routing: "spread" }`, and they are dropped for a single or pooled client.
 * `adjust` patches the validated options of every data connection (`RedisClientCache` adds
 * its `CLIENT TRACKING` hooks with it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFromOptions = Effect.fn("RedisConnection.makeFromOptions")(function* (
  options: LayerOptions,
  defaults: LayerOptions = {},
  adjust: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions = (resolved) => resolved
) {
  const { strategy, merged: checked, preference } = yield* OptionChecks.checkLayerOptions(options, defaults)
  const service = yield* buildClient(strategy, checked, preference, adjust)
  // Kept for dedicated connections to the same server (RedisPubSub.layer()); the password redacted.
  const connectOptions: LayerOptions =
    typeof checked.password === "string" ? { ...checked, password: Redacted.make(checked.password) } : checked
  return makeService({ ...service, connectOptions: () => connectOptions })
})

/** The client of a checked strategy and options: a cluster, a replicated client or one server. */
const buildClient = Effect.fnUntraced(function* (
  strategy: Strategy,
  checked: LayerOptions,
  preference: ReadPreference | undefined,
  adjust: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions
) {
  const merged = yield* Sentinel.expandSentinelUrl(checked)
  if (merged.cluster !== undefined) {
    const { seeds, tls } = yield* OptionChecks.checkCluster(merged, merged.cluster)
    // The URL stays: its scheme (TLS), user, password and database apply to every node, whose
    // host and port override the URL's.
    const { cluster: _cluster, ...nodeOptions } = merged
    return yield* Cluster.makeCluster({
      seeds,
      readPreference: preference ?? "primary",
      tls,
      connect: (address, replica) =>
        buildStrategy(strategy, { ...nodeOptions, host: address.host, port: address.port }, (resolved) =>
          replica === undefined ? adjust(resolved) : { ...adjust(resolved), locator: replica, replicaReads: true }
        )
    })
  }
  if (merged.sentinel !== undefined || merged.replicas !== undefined) {
    return yield* Sentinel.makeReplicated(merged, adjust, (adjustReplica) =>
      buildStrategy(strategy, merged, adjustReplica)
    )
  }
  if (preference !== undefined && preference !== "primary") return yield* OptionChecks.noReplicas(preference)
  return yield* buildStrategy(strategy, merged, adjust)
})

/**
 * The same as `makeFromOptions`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: LayerOptions,
  defaults?: LayerOptions,
  adjust?: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions
) => Effect.Effect<RedisConnection["Service"], RedisError, Scope.Scope> = makeFromOptions

/**
 * The resolved options of a connection to the primary: with a sentinel (`sentinel`, or a
 * `redis+sentinel://` URL) they carry the locator that follows failovers and the stable target
 * `sentinel:<name>/<db>`. For the dedicated connections of other services (`RedisPubSub`).
 *
 * @since 0.1.0
 * @category internal
 */
export const resolvePrimary = Effect.fnUntraced(function* (options: LayerOptions) {
  const merged = yield* Sentinel.expandSentinelUrl(options)
  const base = yield* RedisOptions.resolve(merged)
  if (merged.sentinel === undefined) return base
  const topology = yield* Sentinel.sentinelTopology(merged.sentinel, merged, base)
  const resolved: RedisOptions.ResolvedOptions = {
    ...base,
    target: `sentinel:${merged.sentinel.name}/${base.database}`,
    locator: topology.primary
  }
  return resolved
})

/**
 * A Redis Cluster client: the slot map comes from `CLUSTER SHARDS` (`CLUSTER SLOTS` on servers
 * before 7.0; asked of the seed nodes, then of the known nodes), each node gets a client of the
 * chosen strategy, and every command goes to the node of the hash slot of its keys (`GRAPH.*`
 * by the graph name; hash tags `{…}` honoured). A command whose keys span slots fails with
 * reason `CrossSlot` before anything is sent. `MOVED` updates the slot at once and sends the
 * command once more to the new owner (it did not run); one map refresh runs for any number of
 * concurrent redirections. `ASK` sends it once to the importing node after `ASKING`. A lost
 * node refreshes the map; a command never sent goes to the new owner, a written one is never
 * re-sent. `executeStreamed` (the graph client's rows) streams from the slot's node and
 * follows these the same way while no part was handed over yet. `submit` goes to the node's
 * own `submit` (per-key order kept while the slot stays put) and its future follows these the
 * same way, settling with the right node's reply; during a reshard, un-awaited submitted
 * commands of the moving slot may run out of submit order (see the README). Pipelines are split per node
 * and their replies put back in order. `GRAPH.LIST` is asked of every primary; other keyless commands go to one node. With `readPreference`
 * `"replica"` / `"preferReplica"`, read-only commands go to a replica of their slot (its
 * connections send `READONLY`); writes always go to the primary.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 *
 * const Live = RedisConnection.layerCluster({
 *   nodes: ["127.0.0.1:7000", "127.0.0.1:7001"],
 *   strategy: "multiplexed"
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCluster = (
  options: ClusterConfig & Omit<LayerOptions, "cluster" | "sentinel" | "host" | "port" | "path">,
  defaults?: LayerOptions
): Layer.Layer<RedisConnection, RedisError> => {
  const { nodes, ...rest } = options
  return layer({ ...rest, cluster: { nodes } }, defaults)
}

/**
 * A client of a primary watched by Sentinel: the sentinels are asked where the primary is
 * (`SENTINEL get-master-addr-by-name`) on every (re)connect, the server's `ROLE` is checked
 * before any command, and a failover (`+switch-master`, a lost connection, a `-READONLY`
 * reply) moves every connection of the chosen strategy to the new primary. A command that
 * was written when its connection went is never re-sent: it fails with `written: true`.
 * Writes the old primary acknowledged but had not replicated are lost by Redis itself.
 * When no sentinel answers, the error (reason `NoSentinel`) names every address tried.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 *
 * const Live = RedisConnection.layerSentinel({
 *   sentinels: ["127.0.0.1:26379", "127.0.0.1:26380", "127.0.0.1:26381"],
 *   name: "mymaster",
 *   strategy: "multiplexed",
 *   readPreference: "preferReplica"
 * })
 * // or RedisConnection.layer({ url: "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSentinel = (
  options: SentinelOptions,
  defaults?: LayerOptions
): Layer.Layer<RedisConnection, RedisError> => {
  const { sentinels, name, sentinelUsername, sentinelPassword, sentinelCredentials, sentinelTls, ...rest } = options
  return layer(
    { ...rest, sentinel: { sentinels, name, sentinelUsername, sentinelPassword, sentinelCredentials, sentinelTls } },
    defaults
  )
}

/**
 * The client of `options.strategy` (default `"multiplexed"`) as a layer: one switch over the
 * strategies for every layer built from a plain options record; `defaults` as in
 * `makeFromOptions`. The connections close when the layer's scope closes.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 *
 * const Live = RedisConnection.layer({ strategy: "pooled", url: "redis://127.0.0.1:6379", size: 4 })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: LayerOptions = {}, defaults?: LayerOptions): Layer.Layer<RedisConnection, RedisError> =>
  Layer.effect(RedisConnection, makeFromOptions(options, defaults))

/**
 * The same as `layer`.
 *
 * @deprecated Use `layer(options, defaults?)`; `layerFromOptions` goes in the next release.
 * @since 0.1.0
 * @category layers
 */
export const layerFromOptions: (
  options: LayerOptions,
  defaults?: LayerOptions
) => Layer.Layer<RedisConnection, RedisError> = layer

/**
 * A client whose options come from `Config`; it reads every option `layer`
 * takes, each field a `Config` or a plain value (see `ConfigInput`), e.g.
 * `layerConfig({ url: Config.String("REDIS_URL"), password: Config.Redacted("REDIS_PASSWORD") })`.
 * The strategy defaults to `"multiplexed"`; `defaults` as in `makeFromOptions`.
 *
 * A value a `Config` took from its `Config.withDefault` (no key found) counts as a default:
 * `connections: Config.Int("CONNECTIONS").pipe(Config.withDefault(4))` gives 4 engines to a
 * multiplexed client and is dropped for a single or pooled one. An option of another strategy
 * that was set (found in the source, a plain value, `Config.succeed`) fails with reason
 * `Config`, as in `layer`.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Config } from "effect"
 *
 * const Live = RedisConnection.layerConfig({
 *   url: Config.String("REDIS_URL"),
 *   strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY").pipe(
 *     Config.withDefault("multiplexed")
 *   ),
 *   // Applies to a multiplexed client only; as a default, it is dropped for the others.
 *   connections: Config.Int("REDIS_CONNECTIONS").pipe(Config.withDefault(4)),
 *   routing: Config.Literals(["spread", "key"], "REDIS_ROUTING").pipe(Config.withDefault("key")),
 *   commandTimeout: Config.Duration("REDIS_TIMEOUT").pipe(Config.withDefault("5 seconds")),
 *   metrics: true
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: ConfigInput.ConfigInput<ConfigOptions>,
  defaults?: LayerOptions
): Layer.Layer<RedisConnection, RedisError | Config.ConfigError> =>
  Layer.effect(
    RedisConnection,
    Effect.flatMap(ConfigInput.read(config), (read) => makeFromOptions(read.options, { ...defaults, ...read.defaults }))
  )

/**
 * Executes a command on the `RedisConnection` in context and decodes its reply with an
 * `effect/Schema`: the accessor of the service's `executeAs` method (see `ReplySchema` for the
 * common reply shapes). A reply the schema does not accept fails with reason `Decode` (the
 * command ran: `written: true`).
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
 *
 * // Effect<number, RedisError, RedisConnection>
 * const visits = RedisConnection.executeAs(ReplySchema.Integer, ["INCR", "visits"])
 * const greeting = RedisConnection.executeAs(ReplySchema.NullableText, ["GET", "greeting"]) // string | null
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const executeAs = <S extends Schema.Top>(
  schema: S,
  command: Command,
  options?: CommandOptions
): Effect.Effect<S["Type"], RedisError, RedisConnection | S["DecodingServices"]> =>
  RedisConnection.use((redis) => redis.executeAs(schema, command, options))

/**
 * What a `RedisConnection` made by hand (a wrapper, a mock) implements: everything but
 * `executeAs`, which `makeService` derives from `execute`, and `executeStreamed`, which it
 * falls back to `execute` for when absent.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServiceParts extends Omit<RedisConnection["Service"], "executeAs" | "executeStreamed"> {
  readonly executeStreamed?:
    | ((command: Command, options?: StreamOptions) => Stream.Stream<ReplyPart, RedisError>)
    | undefined
}

/**
 * A `RedisConnection` service from its parts: `executeAs` decodes the replies of `execute`;
 * without an `executeStreamed`, streaming runs `execute` and hands over the parts of the whole
 * reply. A wrapper that spreads the service it wraps keeps that service's `executeStreamed`
 * and `executeFolded` (the graph client's `stream` and `query`), which then bypass the
 * wrapper's `execute`: set them to `undefined` to send everything through it, as below.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * // A wrapper that counts the commands of the service it wraps.
 * const counting = (inner: RedisConnection.RedisConnection["Service"], counter: { n: number }) =>
 *   RedisConnection.makeService({
 *     ...inner,
 *     execute: (command, options) => Effect.andThen(Effect.sync(() => counter.n++), inner.execute(command, options)),
 *     // Streamed and folded replies go through `execute` too (whole replies), so they are counted.
 *     executeStreamed: undefined,
 *     executeFolded: undefined
 *   })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeService: (parts: ServiceParts) => RedisConnection["Service"] = MakeService.makeService

/**
 * Executes `command` on `connection` and folds its reply as it is read (see `ReplyFold`): a
 * large array reply becomes the fold's value without ever being held whole. A service
 * without `executeFolded` (a mock, a wrapper) runs `execute` and folds the whole reply: the
 * same result, only with the reply held first.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * // The total length of a long list's elements, without keeping the elements.
 * const totalLength = Effect.gen(function* () {
 *   const redis = yield* RedisConnection.RedisConnection
 *   return yield* RedisConnection.executeFolded(redis, ["LRANGE", "big", "0", "-1"], () => {
 *     let total = 0
 *     return {
 *       depth: 1,
 *       open: () => {},
 *       value: (depth, value) => {
 *         if (depth === 1 && typeof value === "string") total += value.length
 *       },
 *       close: () => {},
 *       result: () => total
 *     }
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category streaming
 */
export const executeFolded = <A>(
  connection: Pick<RedisConnection["Service"], "execute" | "executeFolded">,
  command: Command,
  fold: () => ReplyFold<A>,
  options?: CommandOptions
): Effect.Effect<A, RedisError> => Folded.executeFolded(connection, command, fold, options)

/**
 * Streams `command`'s reply on `connection` (see `ReplyPart`): a client of any strategy, a
 * cluster client (from the node owning the command's slot, following `MOVED` / `ASK`), or a
 * connection lent by `withExclusive`. A service without `executeStreamed` (a mock, a
 * wrapper) runs `execute` and hands over the parts of the whole reply: the same parts, only
 * not before the reply is complete.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect, Stream } from "effect"
 *
 * const firstTen = Effect.gen(function* () {
 *   const redis = yield* RedisConnection.RedisConnection
 *   // Elements of a long list as they arrive; the rest of the reply is skipped.
 *   return yield* RedisConnection.executeStreamed(redis, ["LRANGE", "big", "0", "-1"], { depth: 1 }).pipe(
 *     Stream.filter((part) => part._tag === "Value" && part.depth === 1),
 *     Stream.take(10),
 *     Stream.runCollect
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category streaming
 */
export const executeStreamed = (
  connection: Pick<RedisConnection["Service"], "execute" | "executeStreamed"> | ExclusiveConnection,
  command: Command,
  options?: StreamOptions
): Stream.Stream<ReplyPart, RedisError> => Streamed.executeStreamed(connection, command, options)

/**
 * Builds the `executeAll` of a service implemented by hand (a wrapper, a mock) from a
 * function that settles every command to a `Result`, in command order: the default mode
 * then fails with the first failure in command order, `mode: "result"` hands the results over.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * // A wrapper that runs each command through its inner service's execute.
 * const executeAllVia = (inner: RedisConnection.RedisConnection["Service"]) =>
 *   RedisConnection.makeExecuteAll((commands, options) =>
 *     Effect.forEach(commands, (command) => Effect.result(inner.execute(command, options)))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeExecuteAll: (
  settle: (
    commands: ReadonlyArray<Command>,
    options: ExecuteAllOptions | undefined
  ) => Effect.Effect<ReadonlyArray<Result.Result<Reply, RedisError>>, RedisError>
) => ExecuteAll = ExecuteAllInternal.fromResults
