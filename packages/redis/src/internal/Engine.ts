/**
 * One multiplexed socket ("engine"), ARCHITECTURE.md §3 (how a reply finds its caller): admission, the writer and the
 * supervisor. The request records are in `Request.ts`, the socket's reader in
 * `Connection.ts`, socket opening and the handshake commands in `Socket.ts`.
 *
 * - Callers admit a request through the FullDuplexWindow and append it to the engine's
 *   pending list (synchronously, no fiber per command).
 * - Pending requests are written together, as ONE buffer, skipping abandoned ones and
 *   pushing the rest onto the in-flight FIFO: at the end of the tick, when a chunk of
 *   replies has woken its callers (half-way through the chunk and at its end), or by the
 *   writer fiber when the socket must drain or the connection is being replaced.
 * - The reader (`Connection`) settles what a chunk of replies answered through `settle`
 *   and wakes the callers once the chunk is decoded; it never waits on the writer.
 * - The supervisor fiber connects, handshakes before any user command, waits for the
 *   connection to end, fails what was written with `written: true`, and reconnects with
 *   capped exponential backoff and jitter.
 * - Timeouts are swept by one timer per engine, not one timer per command: an expired
 *   request's Deferred is failed, but it stays in the FIFO so its late reply is consumed in
 *   position and only then returns its permit.
 *
 * @internal
 */
import { type Command, encodeCommandParts, encodeCommands } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { Closed, ConnectionLost, Offline, fromErrorReply, RedisError, Timeout } from "../RedisError.ts"
import type { Credentials, ResolvedOptions } from "../RedisOptions.ts"
import { commandName } from "./CommandValidation.ts"
import { Connection } from "./Connection.ts"
import type { ClientMetrics } from "./EngineMetrics.ts"
import { FullDuplexWindow } from "./FullDuplexWindow.ts"
import { ABANDONED, type AnyRequest, boundUnsentWait, QUEUED, Request, SETTLED, WRITTEN } from "./Request.ts"
import { RingBuffer } from "./RingBuffer.ts"
import { ConnectReport, isAuthFailure } from "./ConnectReport.ts"
import { authCommand, handshakeCommands, handshakeFailure, openSocket, SocketReader } from "./Socket.ts"

/** Backoff of the readiness probe while the server loads its dataset: 10 ms doubling to 100 ms. */
const LOADING_FIRST_DELAY = 10
const LOADING_MAX_DELAY = 100

/** The fewest queued requests a caller writes itself under load (see `enqueue`). */
const EAGER_MIN = 32

/** The most common outcome (SET, and most writes), made once instead of once per reply. */
const EXIT_OK: Exit.Exit<Reply, RedisError> = Exit.succeed("OK")

/**
 * Drops the references in `slots[0, count)` so sent commands can be collected. A plain loop:
 * `Array.prototype.fill` with a range takes V8's slow C++ path on this holey array.
 */
const clearSlots = (slots: Array<unknown>, count: number): void => {
  for (let i = 0; i < count; i++) slots[i] = undefined
}

/**
 * @internal
 */
export class Engine {
  readonly window: FullDuplexWindow
  /** Admitted requests not yet taken by a write, oldest first. */
  /** (A ring, like the FIFO: it is kept from flush to flush instead of an array grown per flush.) */
  private readonly pending = new RingBuffer<AnyRequest>()
  /** The writer fiber, when it sleeps until something is pending. */
  private wakeWriter: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  /** A flush of `pending` is scheduled for the end of this tick. */
  private flushScheduled = false
  private carry: Array<AnyRequest> = []
  private connection: Connection | undefined = undefined
  private ready: Deferred.Deferred<void> = Deferred.makeUnsafe()
  closing = false
  /** Why the last connect attempt failed, for the messages of commands that never got out. */
  lastError: RedisError | undefined = undefined
  /**
   * The last connect failed on its credentials (`WRONGPASS`, `NOAUTH`, `NOPERM`, a failing
   * provider): until a connect succeeds, commands fail at once rather than wait for it.
   */
  private authFailed = false
  /**
   * Written commands whose caller stopped waiting and whose reply is still owed. A server that
   * runs one command per connection at a time (FalkorDB's queries) may be busy with such a
   * command for long: routers steer new commands to engines that owe none.
   */
  overdue = 0
  /**
   * Set where routers pick this engine by load among others (`makePickers`): then `overdue`
   * must count written commands whose caller was interrupted. Elsewhere nothing reads it, and a
   * call whose command is already written needs no interruption handler: that saves Effect's
   * finalizer per call (about a sixth of the client's CPU per command at 1024 callers).
   */
  countsOverdue = false
  /** When the connection was lost, while disconnected. */
  private offlineSince: number | undefined = undefined
  private offlineTimer: ReturnType<typeof setTimeout> | undefined = undefined
  /** The outage outlasted `offlineTimeout`: commands fail with `Offline` until a reconnect. */
  private offlineExpired = false
  /** Successful connects, the first one included. */
  connects = 0
  /** Readiness probes answered with `-LOADING` (the server was loading its dataset). */
  loadingProbes = 0
  private readonly defaultDeadlines = new RingBuffer<AnyRequest>()
  private readonly customDeadlines = new Set<AnyRequest>()
  private sweeper: ReturnType<typeof setInterval> | undefined = undefined

  readonly options: ResolvedOptions
  /** Set when the client has `metrics` on; every hook below is skipped otherwise. */
  readonly metrics: ClientMetrics | undefined
  /** Reports connect failures once per change (shared by the client's engines). */
  private readonly report: ConnectReport

  constructor(options: ResolvedOptions) {
    this.options = options
    this.metrics = options.instruments
    this.report = options.report ?? new ConnectReport()
    this.window = new FullDuplexWindow(options.window)
  }

  get online(): boolean {
    return this.connection !== undefined && !this.connection.dead
  }

  /**
   * Forgets a connection that died, at once (not when the supervisor next runs): from now on
   * commands queue for the next connection and waiters wait for it.
   */
  detach(connection: Connection): void {
    if (this.connection !== connection) return
    this.connection = undefined
    this.failCommitted(connection)
    this.ready = Deferred.makeUnsafe()
    this.options.hooks?.onConnection("lost", false)
  }

  /** True when the connection owes its next reply to a caller who timed out. */
  get suspect(): boolean {
    const connection = this.connection
    return connection !== undefined && !connection.dead && connection.owesTimedOut
  }

  /**
   * Before a pooled connection is lent again: if it still owes its next reply to a caller
   * who timed out, nobody is waiting on it and it may be dead, so it is replaced, and the
   * borrower waits for the new connection (bounded by its own timeout).
   */
  readonly refresh: Effect.Effect<void> = Effect.suspend(() => {
    const connection = this.connection
    if (connection === undefined || connection.dead || !connection.owesTimedOut) return Effect.void
    connection.fatal(
      new RedisError({
        reason: new ConnectionLost({
          written: true,
          message: `the pooled connection to ${this.options.target} still owed a reply to a caller who timed out, so it was replaced before it was lent again; the commands it owed may have run`
        })
      }),
      "replaced"
    )
    return Effect.asVoid(this.awaitConnection)
  })

  // ---------------------------------------------------------------------------
  // admission

  refusal(): RedisError | undefined {
    if (this.closing) return this.closedError(false, "is closed")
    if ((this.offlineExpired || this.authFailed) && !this.online) return this.offline()
    if (this.options.offlineQueue === "failFast" && !this.online) return this.offline()
    return undefined
  }

  private offline(): RedisError {
    const cause = this.lastError
    const since =
      this.offlineSince === undefined
        ? ""
        : ` for ${Math.round(performance.now() - this.offlineSince)} ms${this.offlineExpired ? ` (offlineTimeout ${this.options.offlineTimeout} ms)` : ""}`
    return new RedisError({
      reason: new Offline({
        message: `${this.options.target} is not connected${since}${cause === undefined ? "" : `: ${cause.reason.message}`}`,
        cause
      })
    })
  }

  /**
   * While disconnected, unwritten commands wait for the reconnect at most `offlineTimeout`:
   * then they fail with `Offline`, and so does every new command until a connection is back.
   */
  private startOfflineTimer(): void {
    if (this.offlineSince === undefined) this.offlineSince = performance.now()
    if (this.offlineTimer !== undefined || this.options.offlineTimeout === Number.POSITIVE_INFINITY) return
    this.offlineTimer = setTimeout(() => {
      this.offlineTimer = undefined
      if (this.online || this.closing) return
      this.offlineExpired = true
      this.failUnwritten(this.offline())
    }, this.options.offlineTimeout)
  }

  private clearOfflineTimer(): void {
    if (this.offlineTimer !== undefined) clearTimeout(this.offlineTimer)
    this.offlineTimer = undefined
    this.offlineExpired = false
    this.offlineSince = undefined
  }

  /**
   * Admits a request: window permits, then the queue. Fails only with a refusal or a timeout.
   * The request takes its place when this is called, not when the effect runs: with room it is
   * queued at once, and with a full window it joins the window's queue at once, so a request
   * admitted after this call (a key move's drain `PING`) is never sent before it, however late
   * the caller's fiber runs.
   */
  admit(request: AnyRequest): Effect.Effect<void, RedisError> {
    const refusal = this.refusal()
    if (refusal !== undefined) return Effect.fail(refusal)
    if (this.metrics !== undefined && request.startedAt === 0) request.startedAt = performance.now()
    if (this.window.tryTake(request.permits)) {
      this.enqueue(request)
      return Effect.void
    }
    this.metrics?.windowWait()
    const reservation = this.window.reserve(request.permits, () => this.enqueue(request))
    return boundUnsentWait(
      // Granted just as the wait ended (timeout or interruption): it is queued, so it is abandoned.
      this.window.awaitGrant(reservation, () => this.abandon(request)),
      request,
      `no room in the window of ${this.options.target} (${this.window.size} commands in flight)`
    )
  }

  enqueue(request: AnyRequest): void {
    if (this.closing || this.offlineExpired) {
      // Admitted after a wait for the window, while closing or after the offline bound.
      this.fail(request, this.refusal() ?? this.closedError(false, "is closed"))
      return
    }
    const connection = this.connection
    if (request.timeout !== Number.POSITIVE_INFINITY) {
      // While a chunk of replies wakes its callers, the chunk's arrival time is "now" (the
      // sweeper's resolution is coarser than the chunk): one clock read per chunk, not per command.
      request.deadline = (this.replying ? this.replyTime : performance.now()) + request.timeout
      if (request.timeout === this.options.commandTimeout) this.defaultDeadlines.push(request)
      else this.customDeadlines.add(request)
      if (this.sweeper === undefined) this.startSweeper()
    }
    if (this.replying) {
      // Written with the rest of the chunk's commands when the chunk is through
      // (`flushQueued`), and once half-way: the server starts on the first half while the
      // client produces the second (at most two writes per chunk instead of one per caller).
      if (
        this.pending.length === 0 &&
        this.carry.length === 0 &&
        connection !== undefined &&
        !connection.dead &&
        !connection.condemned &&
        !connection.socket.writableNeedDrain &&
        !this.holding(connection)
      ) {
        // Taken for the chunk's write at once: nothing queued is left for an interrupted
        // caller to abandon (see `failCommitted` for a connection that dies before that write).
        this.take(connection, request)
        this.committedCount++
        if (this.outgoingCount >= EAGER_MIN && this.outgoingCount * 2 >= this.replyChunk) this.send(connection)
        return
      }
      this.pending.push(request)
      if (this.pending.length >= EAGER_MIN && this.pending.length * 2 >= this.replyChunk) this.flushQueued()
      return
    }
    // Idle fast path: nothing queued, nothing owed, the socket ready — write now instead of
    // waking the writer fiber (one scheduler hop less per round trip at low load). Under load
    // requests queue and are written together at the end of the tick.
    if (
      this.pending.length === 0 &&
      this.carry.length === 0 &&
      connection !== undefined &&
      !connection.dead &&
      connection.inflight.length === 0 &&
      !connection.socket.writableNeedDrain
    ) {
      this.pending.push(request)
      this.writePending(connection)
      return
    }
    this.pending.push(request)
    // Eager flush: once a good part of a round is queued (half of what is owed, at least
    // EAGER_MIN), the caller writes the queue itself, in order, and the server starts on it
    // while the rest is produced.
    if (
      connection !== undefined &&
      this.pending.length >= EAGER_MIN &&
      this.pending.length >= connection.inflight.length >> 1
    ) {
      this.flushQueued()
    } else if (!this.flushScheduled) {
      this.flushScheduled = true
      process.nextTick(this.scheduledFlush)
    }
  }

  /**
   * True while a chunk of replies wakes its callers: what they send is written once the
   * whole chunk is through (`flushQueued`), as one buffer, instead of in many small writes.
   */
  replying = false
  /** Requests the chunk being delivered completed. */
  replyChunk = 0
  /** When that chunk arrived. */
  replyTime = 0

  private readonly scheduledFlush = (): void => {
    this.flushScheduled = false
    this.flushQueued()
  }

  /**
   * True while `connection` owes more written replies than `holdWritesAbove`: new commands
   * wait in `pending` (still unsent, so a caller can take them back) until a reply brings the
   * count down. Never while the connection is paused behind a streamed reply: writing resumes
   * its reading, and a held command must not wait on a slow stream consumer.
   */
  private holding(connection: Connection): boolean {
    return connection.inflight.length - this.committedCount > this.options.holdWritesAbove && !connection.paused
  }

  /**
   * Writes everything pending now when the connection can take it; otherwise the writer
   * fiber takes it (after a reconnect, or once the socket drains).
   */
  flushQueued(): void {
    const connection = this.connection
    // Held (`holdWritesAbove`): a reply still owed will call this again, when fewer are owed.
    if (connection !== undefined && !connection.dead && this.holding(connection)) return
    // Commands a chunk's callers sent, taken for this connection as they came (see `enqueue`).
    if (this.outgoingCount > 0 && connection !== undefined && !connection.dead) this.send(connection)
    if (this.pending.length === 0) return
    if (
      this.carry.length === 0 &&
      connection !== undefined &&
      !connection.dead &&
      !connection.socket.writableNeedDrain
    ) {
      this.writePending(connection)
      return
    }
    const wake = this.wakeWriter
    if (wake !== undefined) {
      this.wakeWriter = undefined
      wake(Effect.void)
    }
  }

  /** The writer fiber's wait for work: resumes at once when something is pending. */
  private readonly awaitPending: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (this.pending.length > 0) return resume(Effect.void)
    this.wakeWriter = resume
    return Effect.sync(() => {
      if (this.wakeWriter === resume) this.wakeWriter = undefined
    })
  })

  /** The caller stopped waiting: a request not yet written is never sent. */
  abandon(request: AnyRequest): void {
    // The interrupted caller is gone: a late completion must not resume it.
    request.resume = undefined
    if (request.state === QUEUED) request.state = ABANDONED
    else this.markOverdue(request)
  }

  private markOverdue(request: AnyRequest): void {
    if (request.state !== WRITTEN || request.overdue) return
    request.overdue = true
    this.overdue++
  }

  private clearOverdue(request: AnyRequest): void {
    if (!request.overdue) return
    request.overdue = false
    this.overdue--
  }

  /**
   * The callback path of one call (`Effect.callback`): when the window has room the request
   * is admitted now and the reader resumes the caller directly (no Deferred); otherwise it
   * takes its place in the window's queue now (`admit`) and the caller waits for room (bounded
   * by the timeout). Returns the canceller: an interrupted caller's unwritten command is never sent.
   */
  start<A>(
    request: Request<A>,
    resume: (effect: Effect.Effect<A, RedisError>) => void
  ): Effect.Effect<void> | undefined {
    const refusal = this.refusal()
    if (refusal !== undefined) {
      resume(Effect.fail(refusal))
      return undefined
    }
    if (this.metrics !== undefined) request.startedAt = performance.now()
    if (this.window.tryTake(request.permits)) {
      request.resume = resume
      this.enqueue(request)
      // Already written (or settled): an interruption has nothing to stop, only `overdue` to count.
      if (request.state !== QUEUED && !this.countsOverdue) return undefined
      return Effect.sync(() => this.abandon(request))
    }
    resume(this.run(request))
    return undefined
  }

  /** Admits the request and waits for its outcome; interrupting the wait abandons an unwritten request. */
  run<A>(request: Request<A>): Effect.Effect<A, RedisError> {
    return Effect.onInterrupt(Effect.andThen(this.admit(request), Deferred.await(request.deferred)), () =>
      Effect.sync(() => this.abandon(request))
    )
  }

  // ---------------------------------------------------------------------------
  // completion (called from the socket callbacks, outside any fiber)

  /**
   * Records a request's reply and returns its permits; true when its waiters are still to be
   * woken (`notify`), which the caller does once the whole chunk is recorded.
   */
  settle(request: AnyRequest, reply: Reply): boolean {
    if (this.options.locator?.role === "master" && isReadOnlyReply(request, reply)) {
      // A located primary that refuses writes was demoted: reconnect to the primary named now.
      this.reset(`${this.options.target} answered READONLY: it is a replica now; reconnecting to the primary`)
    }
    this.clearOverdue(request)
    request.state = SETTLED
    let exit: Exit.Exit<any, RedisError>
    if (request.batch) {
      exit = Exit.succeed(request.replies ?? [reply])
    } else if (reply instanceof ErrorReply) {
      exit = Exit.fail(fromErrorReply(reply, commandName(request.commands[0])))
    } else {
      exit = reply === "OK" ? EXIT_OK : Exit.succeed(reply)
    }
    request.commands = EMPTY_COMMANDS
    request.replies = undefined
    if (this.metrics !== undefined) this.observe(request)
    // Permits first: completing the Deferred may resume the caller, who must see them back.
    if (request.permits > 0) this.window.release(request.permits)
    return request.record(exit)
  }

  fail(request: AnyRequest, error: RedisError): void {
    this.clearOverdue(request)
    request.state = SETTLED
    request.commands = EMPTY_COMMANDS
    request.replies = undefined
    if (this.metrics !== undefined) this.observe(request)
    if (request.permits > 0) this.window.release(request.permits)
    request.complete(Exit.fail(error))
  }

  private expire(request: AnyRequest): void {
    if (request.done) return
    const written = request.written
    if (!written) request.state = ABANDONED
    else this.markOverdue(request)
    request.expired = true
    if (this.metrics !== undefined) this.observe(request)
    const timeout = request.reportedTimeout
    request.complete(
      Exit.fail(
        new RedisError({
          reason: new Timeout({
            written,
            timeout,
            message: written
              ? `no reply from ${this.options.target} within ${timeout} ms; the command was sent and may still run`
              : `not sent to ${this.options.target} within ${timeout} ms${this.online ? "" : ` (disconnected${this.lastError === undefined ? "" : `: ${this.lastError.message}`})`}`
          })
        })
      )
    )
  }

  /** Records the latency of a request completing now (once: a late reply after a timeout is not counted). */
  private observe(request: AnyRequest): void {
    if (request.startedAt !== 0 && request.exit === undefined) this.metrics!.completed(request)
  }

  /** Keeps the sweeper running (it stops itself when nothing is left to watch). */
  watch(): void {
    this.startSweeper()
  }

  private startSweeper(): void {
    if (this.sweeper === undefined) this.sweeper = setInterval(() => this.sweep(), 10)
  }

  private sweep(): void {
    const now = performance.now()
    const connection = this.connection
    if (
      connection !== undefined &&
      !connection.dead &&
      connection.inflight.length > 0 &&
      !connection.paused &&
      now - connection.lastByteAt >= this.options.stallTimeout
    ) {
      connection.fatal(
        new RedisError({
          reason: new ConnectionLost({
            written: true,
            message: `no byte from ${this.options.target} for ${this.options.stallTimeout} ms while ${connection.inflight.length} commands were owed (stallTimeout); the connection was replaced and the commands may have run`
          })
        }),
        "stall"
      )
    }
    for (;;) {
      const head = this.defaultDeadlines.peek()
      if (head === undefined) break
      if (head.done) {
        this.defaultDeadlines.shift()
      } else if (head.deadline <= now) {
        this.defaultDeadlines.shift()
        this.expire(head)
      } else break
    }
    for (const request of this.customDeadlines) {
      if (request.done) this.customDeadlines.delete(request)
      else if (request.deadline <= now) {
        this.customDeadlines.delete(request)
        this.expire(request)
      }
    }
    const live = this.connection
    if (
      live !== undefined &&
      !live.dead &&
      live.owesTimedOut &&
      now - live.lastByteAt >= this.options.deadPeerTimeout
    ) {
      // The dead-peer rule: nobody waits for the reply owed next and nothing arrived for
      // deadPeerTimeout, so the peer is presumed dead (half-open, or stopped mid-reply).
      live.fatal(
        new RedisError({
          reason: new ConnectionLost({
            written: true,
            message: `no byte from ${this.options.target} for ${this.options.deadPeerTimeout} ms while the reply owed next belonged to a caller who had timed out (deadPeerTimeout); the connection was presumed dead and replaced, and the ${live.inflight.length} commands it owed may have run`
          })
        }),
        "deadPeer"
      )
    }
    const owed = this.connection !== undefined && this.connection.inflight.length > 0
    const watching =
      owed &&
      (this.options.stallTimeout !== Number.POSITIVE_INFINITY ||
        (this.options.deadPeerTimeout !== Number.POSITIVE_INFINITY && this.connection!.owesTimedOut))
    if (this.defaultDeadlines.length === 0 && this.customDeadlines.size === 0 && !watching) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  /** Fails every request not yet written (offline fail-fast, or close). */
  private failUnwritten(error: RedisError): void {
    const unwritten = this.carry.length === 0 ? this.pending.drain() : this.carry.concat(this.pending.drain())
    this.carry = []
    for (const request of unwritten) this.fail(request, error)
  }

  // ---------------------------------------------------------------------------
  // the writer fiber

  private readonly awaitConnection: Effect.Effect<Connection> = Effect.suspend(() => {
    const connection = this.connection
    if (connection !== undefined && !connection.dead) return Effect.succeed(connection)
    return Effect.andThen(Deferred.await(this.ready), this.awaitConnection)
  })

  /**
   * The commands of the write being assembled: the first `outgoingCount` entries (kept from
   * write to write, their slots cleared once encoded).
   */
  private readonly outgoing: Array<Command | undefined> = []
  private outgoingCount = 0
  /**
   * Requests a chunk's callers sent, taken for the write at the chunk's end (see `enqueue`):
   * the newest this many in flight, until `send` writes them.
   */
  private committedCount = 0

  /**
   * The connection died while a chunk's callers were still being woken (a caller's own code
   * tore it down): what they sent was taken for its write but never written. It fails as not
   * sent rather than waiting for the next connection, because a call that needed no
   * interruption handler (`start`) could no longer be stopped if its caller gave up meanwhile.
   * (A chunk that ends in a malformed reply is known before anyone is woken: see
   * `Connection.condemned`; its callers' commands wait for the next connection as usual.)
   */
  private failCommitted(connection: Connection): void {
    clearSlots(this.outgoing, this.outgoingCount)
    this.outgoingCount = 0
    const count = this.committedCount
    if (count === 0) return
    this.committedCount = 0
    const unsent: Array<AnyRequest> = new Array(count)
    for (let i = count - 1; i >= 0; i--) unsent[i] = connection.inflight.pop()!
    const error = new RedisError({
      reason: new ConnectionLost({
        written: false,
        message: `the connection to ${this.options.target} was lost before the command was written; it was not sent`
      })
    })
    for (const request of unsent) this.fail(request, error)
  }

  /** Writes a batch; returns true when the socket wants a `drain` first. */
  private write(connection: Connection, batch: ReadonlyArray<AnyRequest>): boolean {
    for (let i = 0; i < batch.length; i++) this.take(connection, batch[i])
    return this.send(connection)
  }

  /** Writes everything pending, in order; returns true when the socket wants a `drain` first. */
  private writePending(connection: Connection): boolean {
    for (let request = this.pending.shift(); request !== undefined; request = this.pending.shift()) {
      this.take(connection, request)
    }
    return this.send(connection)
  }

  /** Adds a request to the write being assembled, unless its caller gave up on it before. */
  private take(connection: Connection, request: AnyRequest): void {
    if (request.state !== QUEUED) {
      // Abandoned (interrupted or timed out before it was written): never sent.
      if (request.state === ABANDONED) {
        request.state = SETTLED
        if (request.permits > 0) this.window.release(request.permits)
      }
      return
    }
    request.state = WRITTEN
    connection.inflight.push(request)
    const commands = request.commands
    for (let i = 0; i < commands.length; i++) this.outgoing[this.outgoingCount++] = commands[i]
  }

  /** Encodes and writes what `take` assembled; returns true when the socket wants a `drain` first. */
  private send(connection: Connection): boolean {
    const count = this.outgoingCount
    if (count === 0) return false
    this.outgoingCount = 0
    this.committedCount = 0
    const outgoing = this.outgoing as ReadonlyArray<Command>
    // Large binary arguments (GRAPH.BULK blobs) are written by reference rather than copied.
    let bytes: Uint8Array | ReadonlyArray<Uint8Array>
    try {
      bytes = encodeCommandParts(outgoing, count)
    } finally {
      clearSlots(this.outgoing, count)
    }
    // Replies now wait behind a paused streamed reply: read on (its stream buffers, bounded).
    if (connection.paused) connection.resume()
    // Nothing was owed before this write: the silence clock (stall and dead-peer rules) starts now.
    if (connection.inflight.length === count) connection.lastByteAt = performance.now()
    if (this.options.stallTimeout !== Number.POSITIVE_INFINITY) this.startSweeper()
    return connection.write(bytes)
  }

  readonly writer: Effect.Effect<never> = Effect.gen({ self: this }, function* () {
    for (;;) {
      const connection = yield* this.awaitConnection
      let batch: Array<AnyRequest>
      if (this.carry.length > 0) {
        batch = this.carry
        this.carry = []
      } else {
        yield* this.awaitPending
        batch = this.pending.drain()
      }
      if (connection !== this.connection || connection.dead) {
        // The connection went away while we waited: keep these for the next one, in order.
        this.carry = this.carry.length === 0 ? batch : batch.concat(this.carry)
        continue
      }
      if (this.write(connection, batch)) yield* connection.awaitDrain
    }
  })

  // ---------------------------------------------------------------------------
  // connection life

  /**
   * Connects and handshakes; the connection is ready for user commands when this succeeds.
   * The whole of it (TCP, TLS, handshake, waiting for a loading server) fits in
   * `connectTimeout`. User commands wait meanwhile: they reach only a ready connection.
   */
  readonly connect: Effect.Effect<Connection, RedisError> = Effect.gen({ self: this }, function* () {
    const deadline = performance.now() + this.options.connectTimeout
    const locator = this.options.locator
    let address = this.options.address
    let target = this.options.target
    const generation = locator?.generation
    if (locator !== undefined) {
      // Sentinel: where the primary (or a replica) is now, asked on every (re)connect.
      const located = yield* locator.locate
      address = { _tag: "Tcp", host: located.host, port: located.port }
      target = `${this.options.target} at ${located.host}:${located.port}`
    }
    // Asked before the socket opens: no connection idles while a token source answers.
    const credentials =
      this.options.credentials === undefined
        ? undefined
        : yield* this.options.credentials.get(Math.max(0, deadline - performance.now()), this.options.connectTimeout)
    // A plain socket is read without 'data' events (see `SocketReader`); TLS keeps them.
    const reader = this.options.tls === undefined ? new SocketReader() : undefined
    const socket = yield* openSocket(this.options, address, target, reader)
    const connection = new Connection(socket, this, reader)
    yield* this.handshake(connection, deadline, credentials).pipe(
      // Suspended: `exchange` writes when called, and ROLE must follow AUTH.
      Effect.andThen(
        Effect.suspend(() =>
          locator === undefined ? Effect.void : this.checkRole(connection, locator.role, target, deadline)
        )
      ),
      Effect.andThen(
        Effect.suspend(() =>
          locator === undefined || locator.generation === generation
            ? Effect.void
            : Effect.fail(
                new RedisError({
                  reason: new Offline({ message: `${target}: a failover happened while connecting; reconnecting` })
                })
              )
        )
      ),
      Effect.onError(() =>
        Effect.sync(() => connection.fatal(new RedisError({ reason: new Offline({ message: "handshake failed" }) })))
      )
    )
    this.authenticatedWith = credentials
    return connection
  })

  /** The credentials of the `credentials` option the connection last authenticated with. */
  private authenticatedWith: Credentials | undefined = undefined

  /**
   * New credentials (a `credentials` Stream emitted): `AUTH` on the live connection, written
   * at once, behind what is already on the wire and ahead of what waits to be written; the
   * commands in flight keep their places and replies. Without a live connection there is
   * nothing to do: the next connect asks for the credentials anyway.
   */
  reauthenticate(credentials: Credentials): Effect.Effect<void, RedisError> {
    return Effect.suspend(() => {
      const connection = this.connection
      if (connection === undefined || connection.dead || this.closing) return Effect.void
      const deadline = performance.now() + this.options.connectTimeout
      const late = `${this.options.target} did not answer AUTH with the new credentials within ${this.options.connectTimeout} ms (connectTimeout)`
      return Effect.flatMap(this.exchange(connection, [authCommand(credentials)], deadline, late), ([reply]) => {
        if (reply instanceof ErrorReply) {
          return Effect.fail(
            fromErrorReply(reply, "AUTH", `re-authentication on ${this.options.target} failed: ${reply.message}`)
          )
        }
        this.authenticatedWith = credentials
        return Effect.void
      })
    })
  }

  /**
   * A located server must hold the role it was located for: a sentinel's answer may be stale
   * during a failover, so the server itself is asked (`ROLE`) before any user command.
   */
  private checkRole(
    connection: Connection,
    role: "master" | "slave",
    target: string,
    deadline: number
  ): Effect.Effect<void, RedisError> {
    return Effect.flatMap(this.exchange(connection, [["ROLE"]], deadline), ([reply]) => {
      const actual = Array.isArray(reply) ? reply[0] : reply
      const text =
        actual instanceof ErrorReply
          ? `${actual.message}`
          : ((actual === undefined ? undefined : replyToString(actual)) ?? String(actual))
      if (text === role) return Effect.void
      return Effect.fail(
        new RedisError({
          reason: new Offline({
            message: `${target} reports the role "${text}", not "${role}" (a failover in progress?); reconnecting`
          })
        })
      )
    })
  }

  /** Tears the connection down for a failover: what it owes fails with `written: true`, never re-sent. */
  reset(message: string): void {
    const connection = this.connection
    if (connection === undefined || connection.dead) return
    connection.fatal(new RedisError({ reason: new ConnectionLost({ written: true, message }) }), "failover")
  }

  /** Sends a batch on a connection that is not ready yet and waits for its replies until `deadline`. */
  private exchange(
    connection: Connection,
    commands: Array<Command>,
    deadline: number,
    late = `${this.options.target} accepted the connection but did not answer the handshake within ${this.options.connectTimeout} ms${this.options.tls === undefined ? " (is it a TLS port? then use rediss://)" : ""}`
  ): Effect.Effect<Array<Reply>, RedisError> {
    const request = new Request(commands, true, 0, this.options.connectTimeout)
    request.state = WRITTEN
    connection.inflight.push(request)
    connection.write(encodeCommands(commands))
    return Deferred.await(request.deferred as Deferred.Deferred<Array<Reply>, RedisError>).pipe(
      Effect.timeoutOrElse({
        duration: Math.max(0, deadline - performance.now()),
        orElse: () =>
          Effect.fail(
            new RedisError({
              reason: new Offline({ message: late })
            })
          )
      })
    )
  }

  /**
   * AUTH/HELLO, SELECT, CLIENT SETNAME, then a PING as the readiness probe: those three are
   * allowed while the server loads its dataset (they would succeed on a server that refuses
   * every user command with `-LOADING`), PING is not. While the probe answers `-LOADING`
   * the probe is repeated with a short bounded backoff; past the deadline the connect fails
   * with reason `Offline` and the supervisor tries again later.
   */
  private handshake(
    connection: Connection,
    deadline: number,
    credentials: Credentials | undefined
  ): Effect.Effect<void, RedisError> {
    return Effect.gen({ self: this }, function* () {
      const commands = handshakeCommands(this.options, credentials)
      const replies = yield* this.exchange(connection, commands, deadline)
      const failure = handshakeFailure(commands, replies.slice(0, -1), this.options.target)
      if (failure !== undefined) return yield* failure
      let probe = replies[replies.length - 1]
      const stillLoading = `${this.options.target} was still loading its dataset after ${this.options.connectTimeout} ms (connectTimeout); commands wait for a later reconnect`
      let delay = LOADING_FIRST_DELAY
      while (probe instanceof ErrorReply && probe.code === "LOADING") {
        this.loadingProbes++
        const left = deadline - performance.now()
        if (left <= delay) {
          return yield* new RedisError({
            reason: new Offline({
              message: stillLoading
            })
          })
        }
        yield* Effect.sleep(delay)
        delay = Math.min(delay * 2, LOADING_MAX_DELAY)
        probe = (yield* this.exchange(connection, [["PING"]], deadline, stillLoading))[0]
      }
      // NOPERM: a least-privilege user may not PING, but the server answered, so it is ready.
      if (probe instanceof ErrorReply && probe.code !== "NOPERM") {
        return yield* fromErrorReply(
          probe,
          "PING",
          `handshake with ${this.options.target} failed at PING: ${probe.message}`
        )
      }
    })
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.options.reconnectMaxDelay, this.options.reconnectBaseDelay * 2 ** Math.min(attempt, 30))
    return base + Math.random() * base * 0.2
  }

  /** Runs the connection lifecycle forever, starting from an established connection. */
  /** Makes a handshaken connection the one user commands go to. */
  install(connection: Connection): void {
    this.connects++
    this.connection = connection
    this.options.hooks?.onConnection("connected", this.connects > 1)
    this.lastError = undefined
    this.authFailed = false
    this.clearOfflineTimer()
    Deferred.doneUnsafe(this.ready, Exit.void)
    // Whatever waited for a connection goes out now.
    this.flushQueued()
  }

  /**
   * Runs the connection lifecycle forever, starting from the installed connection: waits
   * for its loss, then reconnects (with backoff) and installs the next one.
   */
  readonly supervise: Effect.Effect<never> = Effect.gen({ self: this }, function* () {
    let attempt = 0
    for (;;) {
      const connection = this.connection
      if (connection !== undefined) {
        yield* Deferred.await(connection.closed)
        // `detach` has already forgotten it (and made a fresh `ready`).
        if (this.closing) {
          // Nothing will be sent any more: the close need not wait for these.
          this.failUnwritten(this.closedError(false, "closed while disconnected; the command was never sent"))
          return yield* Effect.never
        }
        this.metrics?.reconnect(connection.lost)
        if (this.options.offlineQueue === "failFast") this.failUnwritten(this.offline())
        else this.startOfflineTimer()
        // A connection that did work earns an immediate reconnect; one that died at once backs off.
        attempt = connection.replies > 1 ? 0 : attempt + 1
        if (attempt > 0) yield* Effect.sleep(this.backoff(attempt))
      }
      const next = yield* Effect.exit(this.connect)
      if (Exit.isSuccess(next)) {
        if (this.closing) {
          next.value.fatal(this.closedError(false, "is closed"))
          return yield* Effect.never
        }
        this.install(next.value)
        yield* this.report.restored(this.options.target)
        // A credentials Stream emitted while this connect used the previous ones.
        const latest = this.options.credentials?.current
        if (latest !== undefined && latest !== this.authenticatedWith) yield* Effect.ignore(this.reauthenticate(latest))
      } else {
        const error = Cause.findErrorOption(next.cause)
        const failure = Option.isSome(error) ? error.value : this.offline()
        this.lastError = failure
        this.authFailed = isAuthFailure(failure)
        yield* this.report.failed(`cannot connect to ${this.options.target}`, failure)
        if (this.options.offlineQueue === "failFast" || this.authFailed) this.failUnwritten(this.offline())
        attempt++
        yield* Effect.sleep(this.backoff(attempt))
      }
    }
  })

  /** A `Closed` error for a command that was (`written`) or was not sent. */
  closedError(written: boolean, detail: string): RedisError {
    return new RedisError({
      reason: new Closed({ written, message: `the client of ${this.options.target} ${detail}` })
    })
  }

  /**
   * The first step of a close: refuse new commands, and fail at once those that cannot be
   * sent (no connection). Later, a loss of the connection fails the unwritten ones at once
   * too (see `supervise`), so a close never waits for what cannot complete.
   */
  stopAdmitting(): void {
    this.closing = true
    this.clearOfflineTimer()
    if (!this.online)
      this.failUnwritten(this.closedError(false, "closed while disconnected; the command was never sent"))
  }

  /**
   * Stops admitting, waits for what is owed (bounded by `closeTimeout`), then closes and
   * fails the rest. Commands that cannot complete (no connection to send them on) fail at
   * once instead of running out `closeTimeout`.
   */
  readonly close: Effect.Effect<void> = Effect.gen({ self: this }, function* () {
    this.stopAdmitting()
    if (this.window.inUse > 0) {
      yield* Effect.timeoutOption(this.window.awaitIdle, this.options.closeTimeout)
    }
    this.failUnwritten(this.closedError(false, "closed before the command was sent"))
    const connection = this.connection
    if (connection !== undefined) {
      connection.fatal(
        this.closedError(true, `closed before the reply arrived (closeTimeout ${this.options.closeTimeout} ms)`)
      )
      yield* Deferred.await(connection.closed)
    }
    if (this.sweeper !== undefined) clearInterval(this.sweeper)
    this.sweeper = undefined
  })
}

const EMPTY_COMMANDS: ReadonlyArray<Command> = []

const isReadOnlyError = (reply: Reply | undefined): boolean => reply instanceof ErrorReply && reply.code === "READONLY"

/** A `-READONLY` reply to the request, or inside its batch. */
const isReadOnlyReply = (request: AnyRequest, reply: Reply): boolean =>
  isReadOnlyError(reply) || request.replies?.some(isReadOnlyError) === true

/**
 * Builds an engine in a scope: the first connect happens now and fails the construction
 * (a wrong address fails fast); later losses reconnect in the background.
 *
 * @internal
 */
export const makeEngine = (options: ResolvedOptions): Effect.Effect<Engine, RedisError, Scope.Scope> =>
  Effect.gen(function* () {
    const engine = new Engine(options)
    // Before the first connect: a credentials Stream starts with its first connection.
    if (options.credentials !== undefined) {
      yield* options.credentials.attach(options.exclusive === true ? { reauthenticate: () => Effect.void } : engine)
    }
    // Installed before any fiber runs, so a close that comes at once still finds (and closes) it.
    engine.install(yield* engine.connect)
    if (options.locator !== undefined) {
      const unregister = options.locator.register(engine)
      yield* Effect.addFinalizer(() => Effect.sync(unregister))
    }
    if (engine.metrics !== undefined) {
      const unregister = engine.metrics.register(engine)
      yield* Effect.addFinalizer(() => Effect.sync(unregister))
    }
    yield* Effect.forkScoped(engine.supervise)
    yield* Effect.forkScoped(engine.writer)
    // Added after the fibers, so it runs first on close: the fibers still serve the drain.
    yield* Effect.addFinalizer(() => engine.close)
    return engine
  })
