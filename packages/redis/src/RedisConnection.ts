/**
 * The one seam between everything above the wire and the wire: a `RedisConnection`
 * service. Connection strategies (Single, Pooled, Multiplexed) are Layers that provide it;
 * the graph client, the mock layer and users' code depend only on this interface.
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RedisError } from "./RedisError.ts"

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommandOptions {
  /**
   * Stop waiting after this long and fail with `RedisTimeout`. A written command is not
   * cancelled: its late reply is read and dropped. Default: the client's `commandTimeout`.
   */
  readonly timeout?: Duration.Input | undefined
  /**
   * The command only reads. Multiplexed clients may spread read-only commands across
   * engines; retry policies may re-run them.
   */
  readonly readOnly?: boolean | undefined
}

/**
 * Options of a pipeline.
 *
 * @since 0.1.0
 * @category models
 */
export interface PipelineOptions extends CommandOptions {
  /**
   * With several key-routed engines, a batch whose keys map to different engines fails
   * with `RedisCommandError { reason: "BatchSpansEngines" }` unless this is true; it then
   * runs on an exclusive connection, not ordered against unawaited commands on the engines.
   */
  readonly exclusiveFallback?: boolean | undefined
}

/**
 * A command already on its way. Awaiting it waits for the reply; awaiting with a timeout
 * gives up waiting without cancelling the command.
 *
 * @since 0.1.0
 * @category models
 */
export interface Future<A> {
  /** Waits for the reply. Error replies fail with `RedisReplyError`. */
  readonly await: Effect.Effect<A, RedisError>
  /** Waits at most `timeout`; the command itself is not cancelled. */
  readonly awaitTimeout: (timeout: Duration.Input) => Effect.Effect<A, RedisError>
  /** The reply if it has arrived already. */
  readonly poll: Effect.Effect<A | undefined, RedisError>
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
   * A stable name of the server this client talks to (e.g. `127.0.0.1:6379/0`). Caches that
   * belong to a server, like the graph schema cache, are keyed by it.
   */
  readonly target: string
  /** RESP protocol version negotiated with HELLO (2 when HELLO was not sent). */
  readonly protocol: 2 | 3
}

/**
 * The connection service.
 *
 * - `execute` sends a command and waits for its reply. A top-level error reply fails with
 *   `RedisReplyError`; errors nested in an aggregate stay values (`ErrorReply`).
 * - `submit` puts the command on its way and returns a `Future` at once.
 * - `pipeline` sends the commands contiguously on one connection and returns one reply per
 *   command, error replies included as `ErrorReply` values (no failure for those).
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
  }
>()("@effect-falkordb/redis/RedisConnection") {}
