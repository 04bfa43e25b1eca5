/**
 * What a command on its way is: the request record a caller admits to an engine, its state
 * (queued, written, settled, abandoned), and how its caller waits for the outcome (a resume
 * slot on the hot path, a Deferred made on demand, or the request itself as a `Future`).
 * Only the engine changes a request's state.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type { Future } from "../RedisConnection.ts"
import { RedisError, Timeout } from "../RedisError.ts"
import type { RequestSink } from "./ReplyStream.ts"

/** Admitted, waiting in the engine's queue to be written. */
export const QUEUED = 0
/** Written to the socket; its reply is owed. */
export const WRITTEN = 1
/** Its reply arrived (or it failed): done with. */
export const SETTLED = 2
/** Its caller gave up before it was written: never sent. */
export const ABANDONED = 3

/**
 * Bounds a wait that happens before a request is written by the request's own timeout: past
 * it the request fails with `Timeout { written: false }`, `waitedFor` saying what it waited for
 * (`onTimeout` is told, for a metric).
 */
export const boundUnsentWait = <A, R>(
  wait: Effect.Effect<A, RedisError, R>,
  request: { readonly timeout: number; readonly reportedTimeout: number },
  waitedFor: string,
  onTimeout?: () => void
): Effect.Effect<A, RedisError, R> =>
  request.timeout === Number.POSITIVE_INFINITY
    ? wait
    : Effect.timeoutOrElse(wait, {
        duration: request.timeout,
        orElse: () => {
          onTimeout?.()
          return Effect.fail(
            new RedisError({
              reason: new Timeout({
                written: false,
                timeout: request.reportedTimeout,
                message: `${waitedFor} within ${request.reportedTimeout} ms; the command was not sent`
              })
            })
          )
        }
      })

/**
 * Requests that wake one caller together (`executeAll`): each settled request calls
 * `settled` once, and the group resumes its caller when the count reaches zero.
 *
 * @internal
 */
export interface RequestGroup {
  readonly settled: () => void
}

/**
 * A command (or a contiguous batch) on its way; `A` is what it resolves to (a `Reply`, or
 * all the replies of a batch). Only the engine changes its state; callers wait with `wait`.
 *
 * @internal
 */
export class Request<A = unknown> {
  state = QUEUED
  replies: Array<Reply> | undefined = undefined
  deadline = 0
  /**
   * How the waiting caller is resumed: an `Effect.callback` resume on the hot path
   * (`execute`), or a Deferred for futures (`submit`) and the slow path, made on demand.
   */
  resume: ((effect: Effect.Effect<A, RedisError>) => void) | undefined = undefined
  private deferredValue: Deferred.Deferred<A, RedisError> | undefined = undefined
  /** The outcome, once settled, expired or failed. */
  exit: Exit.Exit<A, RedisError> | undefined = undefined
  /** Written, its caller gone (timed out or interrupted), its reply still owed (see `Engine.overdue`). */
  overdue = false
  commands: ReadonlyArray<Command>
  /** Batches resolve to all their replies, error replies included as values. */
  readonly batch: boolean
  /** Window permits held (0 for the handshake). */
  readonly permits: number
  readonly timeout: number
  /** The timeout the caller configured, for errors (a pooled call runs on what is left of it). */
  readonly reportedTimeout: number
  /** The caller stopped waiting because its timeout passed (the reply may still be owed). */
  expired = false
  /** When it was admitted, for the latency metric (0: not measured). */
  startedAt = 0
  /**
   * Set for a streamed (`executeStreamed`) or folded (`executeFolded`) command: its array reply
   * goes to this sink, not into a tree.
   */
  sink: RequestSink | undefined = undefined
  /**
   * Set for a command of an `executeAll` batch: its outcome counts the batch down, and the
   * batch's one caller is woken when the last of its commands has settled.
   */
  group: RequestGroup | undefined = undefined
  constructor(
    commands: ReadonlyArray<Command>,
    batch: boolean,
    permits: number,
    timeout: number,
    reportedTimeout: number = timeout
  ) {
    this.commands = commands
    this.batch = batch
    this.permits = permits
    this.timeout = timeout
    this.reportedTimeout = reportedTimeout
  }
  get deferred(): Deferred.Deferred<A, RedisError> {
    if (this.deferredValue === undefined) {
      this.deferredValue = Deferred.makeUnsafe()
      if (this.exit !== undefined) Deferred.doneUnsafe(this.deferredValue, this.exit)
    }
    return this.deferredValue
  }
  get done(): boolean {
    return this.exit !== undefined
  }
  /** Completes the request once; later completions (a late reply after a timeout) are ignored. */
  complete(exit: Exit.Exit<A, RedisError>): void {
    if (this.exit !== undefined) return
    this.exit = exit
    this.notify()
  }
  /**
   * Records the outcome without waking anyone yet (see `Connection.flushSettled`); false
   * when it was already settled.
   */
  record(exit: Exit.Exit<A, RedisError>): boolean {
    if (this.exit !== undefined) return false
    this.exit = exit
    return true
  }
  /** Wakes whoever waits for the recorded outcome. */
  notify(): void {
    const exit = this.exit!
    const resume = this.resume
    if (resume !== undefined) {
      this.resume = undefined
      resume(exit)
    }
    if (this.deferredValue !== undefined) Deferred.doneUnsafe(this.deferredValue, exit)
    if (this.group !== undefined) this.group.settled()
  }
  get written(): boolean {
    return this.state === WRITTEN || this.state === SETTLED
  }
  /**
   * Waits for the outcome without cancelling the request. The first waiter takes the resume
   * slot (no Deferred); further concurrent waiters share a Deferred made on demand. Giving
   * up the wait does not cancel anything: the command stays on its way, and the slot is not
   * even freed (no canceller to allocate per wait): resuming an interrupted wait is a no-op,
   * and a later waiter takes the Deferred.
   */
  wait(): Effect.Effect<A, RedisError> {
    // Already settled (a window of futures finds most of its replies so): the outcome itself.
    if (this.exit !== undefined) return this.exit
    return Effect.callback<A, RedisError>((resume) => {
      if (this.exit !== undefined) return resume(this.exit)
      if (this.resume !== undefined) return resume(Deferred.await(this.deferred))
      this.resume = resume
    })
  }
}

/**
 * A request seen as the `Future` of a submitted command: the request itself, so a submit
 * allocates no wrapper. Its faces are made when they are read (each read gives an equivalent
 * effect).
 *
 * @internal
 */
export class FutureRequest<A> extends Request<A> implements Future<A> {
  get await(): Effect.Effect<A, RedisError> {
    return this.wait()
  }
  get awaitTimeout(): (timeout: Duration.Input) => Effect.Effect<A, RedisError> {
    return (timeout) => {
      const millis = Duration.toMillis(Duration.fromInputUnsafe(timeout))
      return Effect.timeoutOrElse(this.wait(), {
        duration: millis,
        orElse: () =>
          Effect.fail(
            new RedisError({
              reason: new Timeout({
                written: this.written,
                timeout: millis,
                message: `stopped waiting after ${millis} ms; the command is ${this.written ? "sent and still owed a reply" : "still queued"} and was not cancelled`
              })
            })
          )
      })
    }
  }
  get poll(): Effect.Effect<A | undefined, RedisError> {
    return Effect.suspend(() => (this.exit !== undefined ? this.exit : Effect.succeed(undefined)))
  }
}

/**
 * The caller of `request` is gone, when the engine it was admitted to is not at hand (a
 * lane that forwards to it): an unwritten request is never sent; a written one's reply is
 * still read in position (only the engine's overdue count, a routing hint, does not see it).
 */
export const abandonRequest = (request: Request<any>): void => {
  request.resume = undefined
  if (request.state === QUEUED) request.state = ABANDONED
}

/** A request of any outcome type, as the engine's queues and FIFO hold them. */
// The engine matches replies by position, whatever each caller awaits.
export type AnyRequest = Request<any>
