/**
 * The engine side of a streamed reply (`RedisConnection.executeStreamed`): the decoder's
 * `ReplySink` for one command, a buffer of parts between the socket and the consumer, and
 * the rules that bound it.
 *
 * - The decoder hands over the outer levels of the reply as they complete; each part is
 *   buffered and the consumer is woken once per socket chunk.
 * - Backpressure: past `highWaterMark` buffered bytes, reading the socket pauses while no
 *   other command waits behind the streamed reply (a pooled connection, or a shared one
 *   nobody else uses at the moment); it resumes when the consumer takes the buffer.
 * - A shared connection with replies waiting behind is never paused (the reader resumes at
 *   once when a command is written behind a paused stream): the buffer grows up to
 *   `maxBuffered` bytes, then the stream fails with reason `StreamOverflow` and the rest of
 *   the reply is discarded as it arrives.
 * - A consumer that stops (interruption, `Stream.take`) discards the rest of the reply as
 *   it arrives; the connection stays in step and nothing is retained.
 *
 * @internal
 */
import type { ReplySink } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { ReplyPart } from "../RedisConnection.ts"
import { ConnectionLost, RedisError, StreamOverflow } from "../RedisError.ts"
import { Engine } from "./Engine.ts"
import { abandonRequest, type Request } from "./Request.ts"

/** What the connection reading the reply offers its stream. */
export interface StreamHost {
  readonly decoder: { readonly offset: number }
  readonly othersWaiting: boolean
  readonly paused: boolean
  readonly pause: () => void
  readonly resume: () => void
  readonly wakeLater: (stream: ReplyStream) => void
  /** The reply ended (its `close(0)`): `reply` settles the request. */
  readonly streamEnded: (sink: RequestSink, request: Request<any>, reply: Reply) => void
}

/**
 * The decoder's sink for one command's reply (a `ReplyStream`, or a `ReplyFolder`): told when
 * the reply begins on the wire, and when the connection is lost under it.
 */
export interface RequestSink extends ReplySink {
  readonly begin: (host: StreamHost) => void
  readonly fail: (error: RedisError) => void
}

/** Sizing of a streamed reply's buffer, in bytes of the wire. */
export interface StreamLimits {
  readonly depth: number
  readonly highWaterMark: number
  readonly maxBuffered: number
}

/** The latest streams made, newest last (at most 8): tests read their counters. */
export const recent: Array<ReplyStream> = []

/** Stands for "the reply began streaming" in the request's outcome (never seen by callers). */
const STARTED = Exit.succeed(null)

/** @internal */
export class ReplyStream implements RequestSink {
  readonly depth: number
  private readonly highWaterMark: number
  private readonly maxBuffered: number
  private parts: Array<ReplyPart> = []
  private bytes = 0
  private lastOffset = 0
  private host: StreamHost | undefined = undefined
  private waiter: (() => boolean) | undefined = undefined
  private wakeQueued = false
  /** The reply began on the wire (its first array header was read). */
  started = false
  /** The reply is complete (`close(0)`, or a whole reply in `outcome`). */
  ended = false
  failure: RedisError | undefined = undefined
  /** The consumer is gone or the stream failed: the rest of the reply is dropped as it arrives. */
  discarding = false
  /** Completed when the engine owes nothing more for this command (a pooled borrow may end). */
  readonly finished: Deferred.Deferred<void> = Deferred.makeUnsafe()
  /** Parts delivered to the consumer so far (tests, diagnostics). */
  delivered = 0
  /** The most bytes ever buffered at once (tests, diagnostics). */
  peakBuffered = 0
  readonly request: Request<Reply>
  private readonly engine: unknown

  constructor(engine: unknown, request: Request<Reply>, limits: StreamLimits) {
    this.engine = engine
    this.request = request
    this.depth = limits.depth
    this.highWaterMark = limits.highWaterMark
    this.maxBuffered = limits.maxBuffered
    request.sink = this
    recent.push(this)
    if (recent.length > 8) recent.shift()
    // The request's own outcome (a whole reply, an error, a timeout before the reply began).
    request.resume = (exit) => this.outcome(exit as Exit.Exit<Reply, RedisError>)
  }

  /** Parts buffered and not yet taken by the consumer. */
  get buffered(): number {
    return this.parts.length
  }

  /** Bytes of the wire buffered and not yet taken by the consumer. */
  get bufferedBytes(): number {
    return this.bytes
  }

  /** Bytes of the reply read off the socket so far (after its first line, `*<n>`). */
  get received(): number {
    if (this.host === undefined) return 0
    return (this.ended ? this.endOffset : this.host.decoder.offset) - this.startOffset
  }

  private endOffset = 0

  /** Reading is paused for this stream's consumer. */
  get pausing(): boolean {
    return this.host?.paused === true
  }

  private startOffset = 0

  /** Called by the connection when the reply's first array header is read. */
  begin(host: StreamHost): void {
    this.host = host
    this.started = true
    this.lastOffset = host.decoder.offset
    this.startOffset = this.lastOffset
    // A timeout no longer applies: the reply is arriving.
    this.request.complete(STARTED)
    if (this.failure !== undefined) this.discarding = true
  }

  // ReplySink -------------------------------------------------------------------------------

  open(depth: number, length: number): void {
    if (this.discarding) return
    this.push({ _tag: "Open", depth, length })
  }

  value(depth: number, value: Reply): void {
    if (this.discarding) return
    this.push({ _tag: "Value", depth, value })
  }

  close(depth: number): void {
    if (depth === 0) {
      this.endOffset = this.host!.decoder.offset
      this.ended = true
      this.host!.streamEnded(this, this.request, null)
      Deferred.doneUnsafe(this.finished, Exit.void)
    }
    if (this.discarding) return
    this.push({ _tag: "Close", depth })
  }

  private push(part: ReplyPart): void {
    const host = this.host!
    const offset = host.decoder.offset
    this.bytes += offset - this.lastOffset
    this.lastOffset = offset
    this.parts.push(part)
    if (this.bytes > this.peakBuffered) this.peakBuffered = this.bytes
    if (this.waiter !== undefined && !this.wakeQueued) {
      this.wakeQueued = true
      host.wakeLater(this)
    }
    if (this.bytes > this.highWaterMark && !this.ended) this.pressure(host)
  }

  /** The consumer lags: pause reading when nobody else waits, else buffer up to the bound. */
  private pressure(host: StreamHost): void {
    if (!host.othersWaiting) {
      host.pause()
      return
    }
    if (host.paused) host.resume()
    if (this.bytes <= this.maxBuffered) return
    this.failWith(
      new RedisError({
        reason: new StreamOverflow({
          limit: this.maxBuffered,
          message: `a streamed reply buffered more than ${this.maxBuffered} bytes (maxBuffered) while its consumer lagged and other replies waited behind it on the shared connection; the rest of the reply is discarded`
        })
      })
    )
  }

  // outcomes ----------------------------------------------------------------------------------

  /** The request's outcome: a whole reply (not an array, or an empty one), or an error. */
  private outcome(exit: Exit.Exit<Reply, RedisError>): void {
    if (exit === STARTED) return
    if (Exit.isSuccess(exit)) {
      this.ended = true
      this.parts.push({ _tag: "Value", depth: 0, value: exit.value })
    } else {
      const error = Cause.findErrorOption(exit.cause)
      this.failure ??= Option.isSome(error)
        ? error.value
        : new RedisError({
            reason: new ConnectionLost({
              written: this.request.written,
              message: "the streamed command ended without a reply"
            })
          })
    }
    Deferred.doneUnsafe(this.finished, Exit.void)
    this.wake()
  }

  /** The connection was lost while the reply streamed. */
  fail(error: RedisError): void {
    if (this.ended) return
    this.failWith(error)
    Deferred.doneUnsafe(this.finished, Exit.void)
    this.wake()
  }

  private failWith(error: RedisError): void {
    this.failure ??= error
    this.discarding = true
    this.parts = []
    this.bytes = 0
    if (this.host?.paused === true) this.host.resume()
    if (this.waiter !== undefined && !this.wakeQueued && this.host !== undefined) {
      this.wakeQueued = true
      this.host.wakeLater(this)
    }
  }

  /**
   * The consumer is gone. Unsent: never sent. Sent: the rest of the reply is discarded as it
   * arrives (nothing kept), and the reading resumes if it was paused.
   */
  cancel(): void {
    if (this.ended || this.failure !== undefined) {
      this.parts = []
      this.bytes = 0
      return
    }
    this.discarding = true
    this.parts = []
    this.bytes = 0
    this.waiter = undefined
    if (this.host?.paused === true) this.host.resume()
    if (this.engine instanceof Engine) this.engine.abandon(this.request)
    else abandonRequest(this.request)
    // Never written: the engine owes nothing for it.
    if (!this.request.written) Deferred.doneUnsafe(this.finished, Exit.void)
  }

  // the consumer ------------------------------------------------------------------------------

  wake(): void {
    this.wakeQueued = false
    const waiter = this.waiter
    if (waiter === undefined) return
    // Cleared first: resuming may run the consumer at once, and its next pull sets a new waiter.
    this.waiter = undefined
    if (!waiter()) this.waiter ??= waiter
  }

  /** One pull of the stream: every part buffered so far, or the end, or the failure. */
  readonly pull: Effect.Effect<ReadonlyArray<ReplyPart>, RedisError | Cause.Done> = Effect.callback<
    ReadonlyArray<ReplyPart>,
    RedisError | Cause.Done
  >((resume) => {
    const step = (): boolean => {
      if (this.parts.length > 0) {
        const chunk = this.parts
        this.delivered += chunk.length
        this.parts = []
        this.bytes = 0
        if (this.host?.paused === true && !this.ended) this.host.resume()
        resume(Effect.succeed(chunk))
        return true
      }
      if (this.failure !== undefined) {
        resume(Effect.fail(this.failure))
        return true
      }
      if (this.ended) {
        resume(Cause.done())
        return true
      }
      return false
    }
    if (step()) return
    this.waiter = step
    return Effect.sync(() => {
      if (this.waiter === step) this.waiter = undefined
    })
  })
}
