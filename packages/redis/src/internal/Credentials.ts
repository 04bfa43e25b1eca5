/**
 * The `credentials` option at work: an Effect asked on every connect and reconnect, or a
 * Stream run once per client (while any of its connections lives) whose every emission
 * re-authenticates the live connections with `AUTH`. Shared by every connection built from
 * the same option value (the engines of a client, its pub/sub connection, the nodes of a
 * cluster), so a token source is asked once per rotation, not once per socket.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { CredentialsProvider, RedisError } from "../RedisError.ts"
import type { Credentials, CredentialsOption } from "../RedisOptions.ts"
import { ConnectReport } from "./ConnectReport.ts"

/** A connection that can take new credentials without dropping what it carries. */
export interface Reauthenticatable {
  readonly reauthenticate: (credentials: Credentials) => Effect.Effect<void, RedisError>
}

const providerError = (message: string, cause?: unknown): RedisError =>
  new RedisError({ reason: new CredentialsProvider({ message, cause }) })

/** Checks what a provider yielded: a password (a `Redacted`, or a string wrapped now) and an optional username. */
const normalize = (value: unknown): Credentials | RedisError => {
  if (typeof value !== "object" || value === null) {
    return providerError("the credentials provider yielded no object; expected { username?, password: Redacted }")
  }
  const { password, username } = value as { readonly password?: unknown; readonly username?: unknown }
  if (username !== undefined && (typeof username !== "string" || username === "" || /\s/.test(username))) {
    return providerError("the credentials provider yielded a username that is not a non-empty word")
  }
  if (Redacted.isRedacted(password)) return { username, password: password as Redacted.Redacted<string> }
  if (typeof password === "string") return { username, password: Redacted.make(password) }
  return providerError("the credentials provider yielded no password; expected { username?, password: Redacted }")
}

/** The provider's failure (or defect) as reason `CredentialsProvider`; interruption stays interruption. */
const asProviderFailure = <A>(effect: Effect.Effect<A, unknown>): Effect.Effect<A, RedisError> =>
  Effect.catchCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.fail(providerError("the credentials provider failed", Cause.squash(cause)))
  )

/**
 * @internal
 */
export class CredentialSource {
  /** The last credentials a Stream emitted (an Effect's answer is never kept). */
  current: Credentials | undefined = undefined
  /** A Stream that failed (or ended) before emitting, until it emits again. */
  private failure: RedisError | undefined = undefined
  private readonly waiters = new Set<(effect: Effect.Effect<Credentials, RedisError>) => void>()
  private readonly attached = new Set<Reauthenticatable>()
  private fiber: Fiber.Fiber<void> | undefined = undefined
  private readonly report = new ConnectReport()
  readonly option: CredentialsOption
  private readonly baseDelay: number
  private readonly maxDelay: number

  constructor(option: CredentialsOption, baseDelay: number, maxDelay: number) {
    this.option = option
    this.baseDelay = baseDelay
    this.maxDelay = maxDelay
  }

  /** Credentials for a connect, within `timeout` ms (what is left of `connectTimeout`). */
  get(timeout: number, connectTimeout: number): Effect.Effect<Credentials, RedisError> {
    const late = () =>
      Effect.fail(providerError(`the credentials provider did not answer within ${connectTimeout} ms (connectTimeout)`))
    const option = this.option
    if (!Stream.isStream(option)) {
      return asProviderFailure(option).pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: late }),
        Effect.flatMap((value) => {
          const credentials = normalize(value)
          return credentials instanceof RedisError ? Effect.fail(credentials) : Effect.succeed(credentials)
        })
      )
    }
    return Effect.suspend(() => {
      if (this.current !== undefined) return Effect.succeed(this.current)
      if (this.failure !== undefined) return Effect.fail(this.failure)
      return Effect.callback<Credentials, RedisError>((resume) => {
        this.waiters.add(resume)
        return Effect.sync(() => this.waiters.delete(resume))
      }).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: late }))
    })
  }

  /**
   * Registers a connection for the scope: a Stream starts with the first registration and
   * stops with the last one, and each of its emissions re-authenticates every registered one.
   */
  attach(connection: Reauthenticatable): Effect.Effect<void, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.suspend(() => {
        this.attached.add(connection)
        const option = this.option
        if (!Stream.isStream(option) || this.fiber !== undefined) return Effect.void
        return Effect.map(Effect.forkDetach(this.run(option), { startImmediately: true }), (fiber) => {
          this.fiber = fiber
        })
      }),
      () =>
        Effect.suspend(() => {
          this.attached.delete(connection)
          const fiber = this.fiber
          if (this.attached.size > 0 || fiber === undefined) return Effect.void
          this.fiber = undefined
          return Fiber.interrupt(fiber)
        })
    )
  }

  private settleWaiters(result: Effect.Effect<Credentials, RedisError>): void {
    for (const resume of this.waiters) resume(result)
    this.waiters.clear()
  }

  /** One emission: kept for the next connects, then sent to every live connection. */
  private emit(value: unknown): Effect.Effect<void, RedisError> {
    const credentials = normalize(value)
    if (credentials instanceof RedisError) return Effect.fail(credentials)
    this.current = credentials
    this.failure = undefined
    this.settleWaiters(Effect.succeed(credentials))
    return Effect.forEach(
      Array.from(this.attached),
      (connection) =>
        Effect.catch(connection.reauthenticate(credentials), (error) =>
          this.report.failed(
            "re-authentication with the new credentials failed",
            error,
            "the connection keeps its session; its next connect uses the new credentials"
          )
        ),
      { concurrency: "unbounded", discard: true }
    )
  }

  /** Runs the Stream; a failure (or an end before any emission) is retried with backoff. */
  private run(stream: Stream.Stream<unknown, unknown>): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      let attempt = 0
      for (;;) {
        const emitted = this.current
        const exit = yield* Effect.exit(asProviderFailure(Stream.runForEach(stream, (value) => this.emit(value))))
        // A finite stream that emitted: its last credentials stay in use.
        if (Exit.isSuccess(exit) && this.current !== undefined) return
        const error = Exit.isSuccess(exit)
          ? providerError("the credentials stream ended before it emitted any credentials")
          : Cause.findErrorOption(exit.cause).pipe((found) => (found._tag === "Some" ? found.value : undefined))
        if (error === undefined) return
        if (this.current === undefined) {
          this.failure = error
          this.settleWaiters(Effect.fail(error))
        }
        yield* this.report.failed("the credentials stream failed", error)
        attempt = this.current !== emitted ? 1 : attempt + 1
        const base = Math.min(this.maxDelay, this.baseDelay * 2 ** Math.min(attempt, 30))
        yield* Effect.sleep(base + Math.random() * base * 0.2)
      }
    })
  }
}

/** One source per option value, so the connections of one client (and a cluster's nodes) share it. */
const sources = new WeakMap<object, CredentialSource>()

/**
 * The source of a `credentials` option value.
 *
 * @internal
 */
export const credentialSource = (option: CredentialsOption, baseDelay: number, maxDelay: number): CredentialSource => {
  let source = sources.get(option)
  if (source === undefined) {
    source = new CredentialSource(option, baseDelay, maxDelay)
    sources.set(option, source)
  }
  return source
}
