/**
 * How a client tells its user that it cannot (re)connect: one warning per change of cause
 * (a wrong password logged once, not once per reconnect attempt), one line when connections
 * work again. Shared by the engines and subscriber of a client, so a pool of eight failing
 * the same way still logs once.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { RedisError } from "../RedisError.ts"

/** Reply codes of a handshake the server refused on credentials or permissions. */
const AUTH_CODES: ReadonlySet<string> = new Set(["WRONGPASS", "NOAUTH", "NOPERM"])

/**
 * True when a connect failed on its credentials (`WRONGPASS`, `NOAUTH`, `NOPERM` in the
 * handshake, or the credentials provider failed): waiting a moment will not fix it, so
 * commands fail at once instead of waiting for a reconnect.
 *
 * @internal
 */
export const isAuthFailure = (error: RedisError): boolean => {
  const reason = error.reason
  if (reason._tag === "Reply") return reason.code !== undefined && AUTH_CODES.has(reason.code)
  return reason._tag === "CredentialsProvider"
}

/** What makes two failures "the same" for reporting: the reason and its code, never the message's details. */
const kindOf = (error: RedisError): string => {
  const reason = error.reason
  if (reason._tag === "Reply") return `Reply:${reason.code ?? ""}:${reason.command}`
  const cause = (reason as { readonly cause?: unknown }).cause
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  return `${reason._tag}:${code}`
}

/**
 * @internal
 */
export class ConnectReport {
  /** The kind last reported, while connects keep failing. */
  private reported: string | undefined = undefined

  /**
   * Something failed (`what`, e.g. "cannot connect to host:6379/0"): a warning when the kind
   * of failure differs from the last one reported.
   */
  failed(what: string, error: RedisError, next = "retrying with backoff"): Effect.Effect<void> {
    const kind = kindOf(error)
    if (kind === this.reported) return Effect.void
    this.reported = kind
    return Effect.logWarning(`${what}: ${error.message}; ${next}`).pipe(
      Effect.annotateLogs({ "redis.reason": error.reason._tag })
    )
  }

  /** A connect succeeded: one line when failures were reported before. */
  restored(target: string): Effect.Effect<void> {
    if (this.reported === undefined) return Effect.void
    this.reported = undefined
    return Effect.logInfo(`connected to ${target} again`).pipe(Effect.annotateLogs({ "redis.target": target }))
  }
}
