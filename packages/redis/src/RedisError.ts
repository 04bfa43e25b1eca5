/**
 * Typed errors of the connection engine. Every error says what happened, whether the
 * command may have run on the server (`written`), whether retrying is safe, and a hint of
 * what to do about it.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * The server answered the command with an error reply (`-ERR …`, `-WRONGTYPE …`).
 * `code` is the upper-case first word when there is one (many FalkorDB errors have none);
 * `message` is the whole line as sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisReplyError extends Data.TaggedError("RedisReplyError")<{
  readonly code: string | undefined
  readonly message: string
  readonly command: string
}> {
  /** `LOADING`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN` and `MASTERDOWN` are transient server states. */
  get isRetryable(): boolean {
    return (
      this.code === "LOADING" ||
      this.code === "BUSY" ||
      this.code === "TRYAGAIN" ||
      this.code === "CLUSTERDOWN" ||
      this.code === "MASTERDOWN"
    )
  }
  get hint(): string {
    switch (this.code) {
      case "WRONGTYPE":
        return "the key holds a value of another type; check the key name or delete the key"
      case "NOAUTH":
      case "WRONGPASS":
        return "check the password/user in the connection URL or options"
      case "LOADING":
        return "the server is loading its dataset; retry after a short delay"
      case "READONLY":
        return "this server is a replica; send writes to the primary"
      case "MOVED":
      case "ASK":
        return "the server is a cluster node; this client does not follow cluster redirections"
      default:
        return "the server rejected the command; see the message"
    }
  }
}

/**
 * The connection was lost while the command was queued or on the wire. With
 * `written: true` the command may or may not have run on the server: the client never
 * re-sends it. With `written: false` it was never sent, so a retry is safe.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisConnectionLost extends Data.TaggedError("RedisConnectionLost")<{
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
 * The caller stopped waiting after `timeout` milliseconds. The command is not cancelled
 * once written; its late reply is read and dropped, so nothing desynchronises.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisTimeout extends Data.TaggedError("RedisTimeout")<{
  readonly written: boolean
  readonly timeout: number
  readonly message: string
}> {
  get isRetryable(): boolean {
    return !this.written
  }
  get hint(): string {
    return this.written
      ? "the command was sent and may still run; raise the timeout or make the command cheaper"
      : "the command was never sent (the window or the connection was busy); raise the timeout or the window"
  }
}

/**
 * The server sent bytes that are not valid RESP, or a reply nobody asked for. Fatal for
 * that connection: every command in flight on it fails with this error.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisProtocolError extends Data.TaggedError("RedisProtocolError")<{
  readonly message: string
  readonly offset?: number
  readonly cause?: unknown
}> {
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return "the peer is not speaking RESP correctly (wrong port, a proxy, or a server bug); the connection was reset"
  }
}

/**
 * The client is disconnected and configured to fail fast, or gave up reconnecting.
 * The command was never sent.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisOffline extends Data.TaggedError("RedisOffline")<{
  readonly message: string
  readonly cause?: unknown
}> {
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "the server is unreachable; check that it runs and the address is right, or wait for the reconnect"
  }
}

/**
 * The window was full and the caller asked to fail fast instead of waiting.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisQueueFull extends Data.TaggedError("RedisQueueFull")<{
  readonly window: number
  readonly message: string
}> {
  get isRetryable(): boolean {
    return true
  }
  get hint(): string {
    return "too many commands in flight; raise the window, add connections, or let callers wait"
  }
}

/**
 * The client was closed (its scope ended) before or while the command ran.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisClosed extends Data.TaggedError("RedisClosed")<{
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
 * @category errors
 */
export class RedisConfigError extends Data.TaggedError("RedisConfigError")<{
  readonly field: string
  readonly message: string
}> {
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    return `fix the "${this.field}" option`
  }
}

/**
 * A command or batch that cannot be admitted as asked: a batch larger than the window, a
 * batch whose keys span several engines, a command that cannot be encoded.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisCommandError extends Data.TaggedError("RedisCommandError")<{
  readonly reason: "BatchTooLarge" | "BatchSpansEngines" | "InvalidArgument" | "NotMultiplexable" | "Unsupported"
  readonly message: string
}> {
  get isRetryable(): boolean {
    return false
  }
  get hint(): string {
    switch (this.reason) {
      case "BatchTooLarge":
        return "split the batch or raise the window"
      case "BatchSpansEngines":
        return "keep a batch's keys on one engine (hash tags {…}), or pass { exclusiveFallback: true }"
      case "InvalidArgument":
        return "arguments must be strings, numbers, bigints or Uint8Arrays"
      case "NotMultiplexable":
        return "run this command through withExclusive"
      case "Unsupported":
        return "this client does not support the command's reply mode yet (pub/sub, MONITOR, CLIENT REPLY); use a dedicated client for it"
      default: {
        // Exhaustive: a new reason without a hint is a type error here, not a silent fallback.
        const unhandled: never = this.reason
        return unhandled
      }
    }
  }
}

/**
 * Every error the engine can fail a command with.
 *
 * @since 0.1.0
 * @category errors
 */
export type RedisError =
  | RedisReplyError
  | RedisConnectionLost
  | RedisTimeout
  | RedisProtocolError
  | RedisOffline
  | RedisQueueFull
  | RedisClosed
  | RedisConfigError
  | RedisCommandError
