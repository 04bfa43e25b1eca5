/**
 * The one error of the connection engine, in Effect 4's shape (like `effect/sql/SqlError`
 * and `effect/socket/Socket`'s `SocketError`): a `RedisError` (`_tag: "RedisError"`) whose
 * `reason` is one of the tagged reason classes below, each with only its own fields.
 * `message`, `hint`, `isRetryable` and `written` come from the reason, so
 * `Effect.catchReason("RedisError", "Timeout", …)` and `Effect.catchReasons` work. The
 * convention (shared with the graph client's `FalkorError`, see ARCHITECTURE.md §5): `message`
 * says what happened, `hint` what to do (also on the stack's second line, so an uncaught error
 * prints it), `cause` is the reason.
 *
 * `written` answers "may the command have run on the server?": `false` means it was never
 * sent (a retry is safe), `true` means it was sent (the client never re-sends it).
 *
 * Not to be confused with `effect/persistence/Redis`'s `RedisError`: it has the same tag
 * but no `reason` (only a `cause`), and it belongs to effect's own Redis service. The two
 * never meet in one error channel here; an adapter between the two services maps this
 * error into that one. Tell them apart with `isRedisError` (this package's TypeId).
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * const visits = Effect.gen(function* () {
 *   const redis = yield* RedisConnection.RedisConnection
 *   return yield* redis.execute(["INCR", "visits"], { timeout: "1 second" })
 * }).pipe(
 *   Effect.catchReason("RedisError", "Timeout", (reason) =>
 *     Effect.succeed(reason.written ? "sent, may have counted" : "never sent")
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { ErrorReply } from "@effect-falkordb/resp/Reply"
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"
import type * as Types from "effect/Types"

const TypeId = "~@effect-falkordb/redis/RedisError" as const
const ReasonTypeId = "~@effect-falkordb/redis/RedisError/Reason" as const

/** Error codes Redis sends before it runs a command: the command had no effect. */
const NOT_EXECUTED_CODES: ReadonlySet<string> = new Set(["LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN"])

/** What every reason carries besides its own fields. */
interface ReasonMarker {
  readonly [ReasonTypeId]: typeof ReasonTypeId
}

/** The constructor of a reason class: its own fields `A` in, a tagged, yieldable error out. */
type ReasonConstructor<Tag extends string, Extra> = new <A extends Record<string, unknown>>(
  args: Types.VoidIfEmpty<{ readonly [P in keyof A]: A[P] }>
) => Cause.YieldableError & { readonly _tag: Tag } & Readonly<A> & ReasonMarker & Extra

/** The base of a reason: a tagged error marked as a reason of `RedisError`. */
const Reason = <Tag extends string>(tag: Tag): ReasonConstructor<Tag, {}> =>
  class extends Data.TaggedError(tag) {
    readonly [ReasonTypeId] = ReasonTypeId
  } as unknown as ReasonConstructor<Tag, {}>

/** The base of a refusal: a call the client never sent, which would fail the same way again. */
const Refusal = <Tag extends string>(
  tag: Tag
): ReasonConstructor<Tag, { readonly written: boolean; readonly isRetryable: boolean }> =>
  class extends Data.TaggedError(tag) {
    readonly [ReasonTypeId] = ReasonTypeId
    get written(): boolean {
      return false
    }
    get isRetryable(): boolean {
      return false
    }
  } as unknown as ReasonConstructor<Tag, { readonly written: boolean; readonly isRetryable: boolean }>

/**
 * The server answered with an error reply (`-ERR …`, `-WRONGTYPE …`). `code` is the
 * upper-case first word when there is one (`ERR`, `WRONGTYPE`, `MOVED`, `ASK`, `LOADING`,
 * `BUSY`, `READONLY`, `NOSCRIPT` …; many FalkorDB errors have none); `serverMessage` is the
 * whole line as sent. The server received the command (`written: true`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class Reply extends Reason("Reply")<{
  readonly code: string | undefined
  readonly serverMessage: string
  readonly command: string
  readonly message: string
}> {
  get written(): boolean {
    return true
  }
  /** `LOADING`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN` and `MASTERDOWN` are transient server states. */
  get isRetryable(): boolean {
    return this.notExecuted
  }
  /**
   * True when the code says the server refused the command before running it: a transient
   * state (`LOADING`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`), checked by Redis
   * before it executes anything. Such a command had no effect, so resending it is safe.
   * Any other error reply (a script that failed halfway, say) may have had effects.
   */
  get notExecuted(): boolean {
    return this.code !== undefined && NOT_EXECUTED_CODES.has(this.code)
  }
  get hint(): string {
    switch (this.code) {
      case "WRONGTYPE":
        return "the key holds a value of another type; check the key name or delete the key"
      case "NOAUTH":
      case "WRONGPASS":
        return "check the password/user in the connection URL or options"
      case "LOADING":
        return "the server is loading its dataset; the command did not run, retry after a short delay"
      case "BUSY":
        return "the server is running a long script or function; the command did not run, retry later (or SCRIPT KILL)"
      case "MASTERDOWN":
        return "this replica lost its primary and does not serve stale data; the command did not run, retry later"
      case "TRYAGAIN":
      case "CLUSTERDOWN":
        return "the cluster cannot serve the command now; it did not run, retry after a short delay"
      case "READONLY":
        return "this server is a replica; send writes to the primary"
      case "NOSCRIPT":
        return "the script is not cached on this server; send it with EVAL (or SCRIPT LOAD) first"
      case "MOVED":
      case "ASK":
        return "the server is a cluster node; this client does not follow cluster redirections"
      default:
        return "the server rejected the command; see the message"
    }
  }
}

/**
 * The connection was lost while the command was on the wire (`written: true`: it may or
 * may not have run, and the client never re-sends it) or before it was sent
 * (`written: false`: a retry is safe).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ConnectionLost extends Reason("ConnectionLost")<{
  readonly written: boolean
  readonly message: string
  readonly cause?: unknown
}> {
  get isRetryable(): boolean {
    return !this.written
  }
  get hint(): string {
    return this.written
      ? "the command was sent and may have run; check its effect before running it again (it is never re-sent)"
      : "the command was never sent; it is safe to retry"
  }
}

/**
 * The client stopped waiting after `timeout` milliseconds. A written command is not
 * cancelled: its late reply is read and dropped, so nothing desynchronises.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Timeout extends Reason("Timeout")<{
  readonly written: boolean
  readonly timeout: number
  readonly message: string
}> {
  get isRetryable(): boolean {
    return !this.written
  }
  get hint(): string {
    return this.written
      ? "the command was sent and may still run; raise the timeout (or pass timeout: Duration.infinity) or make the command cheaper"
      : "the command was never sent (the window or the connection was busy); raise the timeout or the window"
  }
}

/**
 * The server sent bytes that are not valid RESP, or a reply nobody asked for. Fatal for
 * that connection: every command in flight on it fails with this reason.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Protocol extends Reason("Protocol")<{
  readonly message: string
  readonly offset?: number | undefined
  readonly cause?: unknown
}> {
  get written(): boolean {
    return true
  }
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return "the peer is not speaking RESP correctly (wrong port, a proxy, or a server bug); the connection was reset"
  }
}

/**
 * The server could not be reached: the first connect failed, the client is configured to
 * fail fast while disconnected, or the outage outlasted `offlineTimeout`. The command was
 * never sent.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Offline extends Reason("Offline")<{
  readonly message: string
  readonly cause?: unknown
}> {
  get written(): boolean {
    return false
  }
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "the server is unreachable; check that it runs and that the address is right"
  }
}

/**
 * The client was closed (its scope ended) before or while the command ran. `written`
 * says whether the command had been sent.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Closed extends Reason("Closed")<{
  readonly written: boolean
  readonly message: string
}> {
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return "the client's scope has closed; use the client only inside the scope/layer that provides it"
  }
}

/**
 * Invalid configuration, found when the client is built. `field` names the option.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Config extends Refusal("Config")<{
  readonly field: string
  readonly message: string
}> {
  get hint(): string {
    return `fix the "${this.field}" option`
  }
}

/**
 * A command or an option the client cannot send: an argument that is not a string,
 * number, bigint or `Uint8Array`, an empty command, a non-positive timeout.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidArgument extends Refusal("InvalidArgument")<{
  readonly message: string
}> {
  get hint(): string {
    return "arguments must be strings, finite numbers, bigints or Uint8Arrays; timeouts positive durations"
  }
}

/**
 * The command changes the state of its connection (`MULTI`, `WATCH`, `SELECT`, a blocking
 * `submit` …), so it cannot run on a shared or pooled connection.
 *
 * @since 0.1.0
 * @category reasons
 */
export class NotMultiplexable extends Refusal("NotMultiplexable")<{
  readonly command: string
  readonly message: string
}> {
  get hint(): string {
    return "run this command through withExclusive"
  }
}

/**
 * The command changes how the server replies (pub/sub, `MONITOR`, `CLIENT REPLY`), which
 * this client does not support.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Unsupported extends Refusal("Unsupported")<{
  readonly command: string
  readonly message: string
}> {
  get hint(): string {
    return "this client does not support the command's reply mode (pub/sub, MONITOR, CLIENT REPLY); use a dedicated client for it"
  }
}

/**
 * With key routing, the batch's keys map to different engines.
 *
 * @since 0.1.0
 * @category reasons
 */
export class BatchSpansEngines extends Refusal("BatchSpansEngines")<{
  readonly message: string
}> {
  get hint(): string {
    return "keep a batch's keys on one engine (hash tags {…}), or pass { exclusiveFallback: true }"
  }
}

/**
 * The batch has more commands than the window has permits, so it can never be admitted.
 *
 * @since 0.1.0
 * @category reasons
 */
export class BatchTooLarge extends Refusal("BatchTooLarge")<{
  readonly commands: number
  readonly window: number
  readonly message: string
}> {
  get hint(): string {
    return "split the batch or raise the window"
  }
}

/**
 * The reply did not have the shape the caller asked for (`executeAs`). The command ran.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Decode extends Reason("Decode")<{
  readonly command: string
  readonly message: string
  readonly cause?: unknown
}> {
  get written(): boolean {
    return true
  }
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return "the reply does not match the schema: check the command (and the key's type) or the schema"
  }
}

/**
 * A write reached a replica: `-READONLY You can't write against a read only replica`. Redis
 * refuses it before running it, so it had no effect and resending it (to the primary) is safe.
 * A Sentinel client that receives it on a primary connection reconnects to the primary the
 * sentinels name. Read preferences never send writes to replicas, so this means the primary was
 * demoted, or a command marked `readOnly` writes.
 *
 * @example
 * ```ts
 * import * as RedisError from "@effect-falkordb/redis/RedisError"
 *
 * const reason = new RedisError.ReadOnlyReplica({
 *   command: "SET",
 *   serverMessage: "You can't write against a read only replica.",
 *   message: "SET failed: You can't write against a read only replica."
 * })
 * console.log(reason.isRetryable) // true
 * ```
 *
 * @since 0.1.0
 * @category reasons
 */
export class ReadOnlyReplica extends Reason("ReadOnlyReplica")<{
  readonly command: string
  readonly serverMessage: string
  readonly message: string
}> {
  /** Refused before it ran. */
  get written(): boolean {
    return false
  }
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "the server is a replica; send writes to the primary (a Sentinel client reconnects to the new primary by itself)"
  }
}

/**
 * No sentinel named a usable server for the monitored name: every address tried is listed
 * with what went wrong there.
 *
 * @example
 * ```ts
 * import * as RedisError from "@effect-falkordb/redis/RedisError"
 *
 * const reason = new RedisError.NoSentinel({
 *   name: "mymaster",
 *   tried: ["127.0.0.1:26379: connection refused"],
 *   message: "no sentinel answered for mymaster"
 * })
 * console.log(reason.tried.length) // 1
 * ```
 *
 * @since 0.1.0
 * @category reasons
 */
export class NoSentinel extends Reason("NoSentinel")<{
  readonly name: string
  /** `host:port: what happened`, one per sentinel tried, in order. */
  readonly tried: ReadonlyArray<string>
  readonly message: string
}> {
  get written(): boolean {
    return false
  }
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "check the sentinel addresses, the monitored name and sentinelPassword; during a failover the sentinels may need a moment"
  }
}

/**
 * A cluster command whose keys hash to different slots: refused before it was sent.
 *
 * @example
 * ```ts
 * import * as RedisError from "@effect-falkordb/redis/RedisError"
 *
 * const reason = new RedisError.CrossSlot({ message: "the keys of MSET hash to different slots" })
 * console.log(reason.written) // false
 * ```
 *
 * @since 0.1.0
 * @category reasons
 */
export class CrossSlot extends Refusal("CrossSlot")<{
  readonly message: string
}> {
  get hint(): string {
    return "keep the command's keys in one slot with a hash tag, e.g. {user1}:a and {user1}:b"
  }
}

/**
 * A streamed reply (`RedisConnection.executeStreamed`) on a shared connection outgrew its
 * buffer while its consumer lagged and other callers' replies waited behind it: the stream
 * fails with this reason rather than stall them or hold unbounded memory. The rest of the
 * reply is read and discarded, so the connection stays in step. The command ran.
 *
 * @example
 * ```ts
 * import * as RedisError from "@effect-falkordb/redis/RedisError"
 *
 * const reason = new RedisError.StreamOverflow({ limit: 1024, message: "over the limit" })
 * console.log(reason.written) // true
 * ```
 *
 * @since 0.1.0
 * @category reasons
 */
export class StreamOverflow extends Reason("StreamOverflow")<{
  /** The buffer bound in bytes (`maxBuffered`). */
  readonly limit: number
  readonly message: string
}> {
  get written(): boolean {
    return true
  }
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return "consume the stream faster, raise maxBuffered, or stream on a connection of its own (pooled strategy or withExclusive), where reading simply pauses"
  }
}

/**
 * The `credentials` option failed: its Effect failed or did not answer within
 * `connectTimeout`, or its Stream failed or ended before its first emission. The connect
 * that needed them did not happen (nothing was sent); the client asks again on its next
 * reconnect, with backoff. The message names the option, never a secret.
 *
 * @example
 * ```ts
 * import * as RedisError from "@effect-falkordb/redis/RedisError"
 *
 * const reason = new RedisError.CredentialsProvider({
 *   message: "the credentials provider did not answer within 10000 ms (connectTimeout)"
 * })
 * console.log(reason.written) // false
 * ```
 *
 * @since 0.1.0
 * @category reasons
 */
export class CredentialsProvider extends Reason("CredentialsProvider")<{
  readonly message: string
  readonly cause?: unknown
}> {
  get written(): boolean {
    return false
  }
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "check the credentials option (the token source it calls, its permissions and its network); the client asks it again on the next reconnect"
  }
}

/**
 * Every reason a command can fail for.
 *
 * @since 0.1.0
 * @category models
 */
export type RedisErrorReason =
  | Reply
  | ConnectionLost
  | Timeout
  | Protocol
  | Offline
  | Closed
  | Config
  | InvalidArgument
  | NotMultiplexable
  | Unsupported
  | BatchSpansEngines
  | BatchTooLarge
  | Decode
  | ReadOnlyReplica
  | NoSentinel
  | CrossSlot
  | StreamOverflow
  | CredentialsProvider

/**
 * The error of every engine call. `message` is the reason's message followed by its hint
 * (so an uncaught error printed by `runMain` says what to do); `reason.message` is the
 * message alone.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * const value = Effect.gen(function* () {
 *   const redis = yield* RedisConnection.RedisConnection
 *   return yield* redis.execute(["GET", "greeting"])
 * }).pipe(
 *   Effect.catchReasons("RedisError", {
 *     Offline: () => Effect.succeed(null),
 *     Reply: (reason) => Effect.die(`${reason.code}: ${reason.serverMessage}`)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisError extends Data.TaggedError("RedisError")<{
  readonly reason: RedisErrorReason
}> {
  readonly [TypeId] = TypeId
  /** The reason, also as the JavaScript `cause` (like `SqlError`): printed beneath the error. */
  override readonly cause: RedisErrorReason = this.reason
  constructor(props: { readonly reason: RedisErrorReason }) {
    super(props)
    // "RedisError: <message>" then the hint, so what runMain prints says what to do.
    hintOnStack(this)
  }
  override get message(): string {
    return this.reason.message
  }
  get hint(): string {
    return this.reason.hint
  }
  get isRetryable(): boolean {
    return this.reason.isRetryable
  }
  /** `false`: the command was never sent; `true`: it was sent (whether it may have run: `mayHaveRun`). */
  get written(): boolean {
    return this.reason.written
  }
  /**
   * Whether the command may have run on the server: it was sent, and the server did not refuse
   * it before running it (`Reply.notExecuted`: `LOADING`, `BUSY`, … — any other error reply,
   * a script that failed halfway say, may have had effects). The graph client's
   * `FalkorError.mayHaveRun` answers the same question.
   */
  get mayHaveRun(): boolean {
    const reason = this.reason
    return reason.written && !(reason._tag === "Reply" && reason.notExecuted)
  }
}

/** V8's own `stack` accessor of errors (one function for every error), read once. */
const nativeStack = Object.getOwnPropertyDescriptor(new Error(), "stack")?.get

const withHint = (stack: string, hint: string): string => {
  const newline = stack.indexOf("\n")
  return newline === -1
    ? `${stack}\n  hint: ${hint}`
    : `${stack.slice(0, newline)}\n  hint: ${hint}${stack.slice(newline)}`
}

/** Settles `stack` as a plain value (what it reads, or what a caller sets). */
const settleStack = (error: Error, value: unknown): void => {
  Object.defineProperty(error, "stack", { value, writable: true, configurable: true, enumerable: false })
}

/** One accessor for every hinted error: the stack is formatted, and hinted, when first read. */
const hintedStack: PropertyDescriptor = {
  configurable: true,
  enumerable: false,
  get(this: Error & { readonly hint: string }) {
    const stack: unknown = nativeStack!.call(this)
    const value = typeof stack === "string" ? withHint(stack, this.hint) : stack
    settleStack(this, value)
    return value
  },
  set(this: Error, value: unknown) {
    settleStack(this, value)
  }
}

/**
 * Puts the error's `hint` on the second line of its stack ("Name: message", then
 * "  hint: …"), so an uncaught error printed by `runMain` or `Cause.pretty` says what to do.
 * The stack is formatted only when first read, as without the hint: an error nobody prints
 * costs no formatting. The graph client's `FalkorError` uses it too (ARCHITECTURE.md §5).
 *
 * @example
 * ```ts
 * import { hintOnStack } from "@effect-falkordb/redis/RedisError"
 *
 * class CacheFull extends Error {
 *   readonly hint = "raise maxEntries"
 *   constructor() {
 *     super("the cache is full")
 *     hintOnStack(this)
 *   }
 * }
 * new CacheFull().stack?.split("\n")[1] // "  hint: raise maxEntries"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const hintOnStack = (error: Error & { readonly hint: string }): void => {
  if (nativeStack !== undefined && Object.hasOwn(error, "stack")) {
    Object.defineProperty(error, "stack", hintedStack)
  } else if (typeof error.stack === "string") {
    // Another engine (no lazy stack accessor): the line is added now.
    settleStack(error, withHint(error.stack, error.hint))
  }
}

/**
 * Is this a `RedisError` of this package (not `effect/persistence/Redis`'s)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isRedisError = (u: unknown): u is RedisError => Predicate.hasProperty(u, TypeId)

/**
 * Is this one of the reasons of a `RedisError`?
 *
 * @since 0.1.0
 * @category guards
 */
export const isRedisErrorReason = (u: unknown): u is RedisErrorReason => Predicate.hasProperty(u, ReasonTypeId)

/**
 * Wraps a reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (reason: RedisErrorReason): RedisError => new RedisError({ reason })

/**
 * A top-level error reply of `command` as a `RedisError` with reason `Reply` (`ReadOnlyReplica`
 * for `-READONLY`). `message`
 * defaults to `"<command> failed: <line>"`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromErrorReply = (reply: ErrorReply, command: string, message?: string): RedisError =>
  reply.code === "READONLY"
    ? new RedisError({
        reason: new ReadOnlyReplica({
          command,
          serverMessage: reply.message,
          message: message ?? `${command} failed: ${reply.message}`
        })
      })
    : new RedisError({
        reason: new Reply({
          code: reply.code,
          serverMessage: reply.message,
          command,
          message: message ?? `${command} failed: ${reply.message}`
        })
      })
