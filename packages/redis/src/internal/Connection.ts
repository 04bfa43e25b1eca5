/**
 * One socket of an engine, and the reader that matches replies to their callers.
 *
 * The reader runs in the socket's data callback: the decoder is fed synchronously and each
 * reply is matched by position against the in-flight FIFO (RESP3 pushes go to the hooks,
 * never to a request; a streamed command's array reply goes to its sink). Once the chunk is
 * decoded every reply's outcome is recorded and its permits returned (`Engine.settle`), then
 * the callers are woken in order (a caller with a window of futures finds its next replies
 * there already). No Effect is run per reply, and the reader never waits on the writer, the
 * window or user code (so huge values cannot deadlock TCP). When the socket closes, what it
 * owed fails with `written: true`.
 *
 * @internal
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { PushReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Net from "node:net"
import { ConnectionLost, Protocol, RedisError } from "../RedisError.ts"
import type { Engine } from "./Engine.ts"
import type { LossReason } from "./EngineMetrics.ts"
import type { ReplyStream, RequestSink } from "./ReplyStream.ts"
import type { AnyRequest } from "./Request.ts"
import { RingBuffer } from "./RingBuffer.ts"
import type { SocketReader } from "./Socket.ts"

/**
 * A socket of an engine: its in-flight FIFO, its decoder and the reader that settles what a
 * chunk of replies answered.
 *
 * @internal
 */
export class Connection {
  readonly inflight = new RingBuffer<AnyRequest>()
  readonly decoder: Decoder
  readonly closed: Deferred.Deferred<void> = Deferred.makeUnsafe()
  dead = false
  failure: RedisError | undefined = undefined
  /** Why it was lost, for the reconnect metric. */
  lost: LossReason = "closed"
  /** The server ended its side (FIN). */
  ended = false
  replies = 0
  /** When the last byte arrived, or when the oldest owed command was written if later. */
  lastByteAt = performance.now()
  /**
   * What the chunk being decoded answered, in order: the first `settledCount` entries. The
   * arrays are kept from chunk to chunk (their slots cleared once used), not made per chunk.
   */
  private settledRequests: Array<AnyRequest | undefined> = []
  private settledReplies: Array<Reply | undefined> = []
  private settledCount = 0
  /** The other pair, while a chunk's pair is being woken (see `flushSettled`). */
  private spareRequests: Array<AnyRequest | undefined> | undefined = []
  private spareReplies: Array<Reply | undefined> | undefined = []
  private drainWaiter: (() => void) | undefined = undefined
  /** The streamed or folded reply being read, if any (see `ReplyStream`, `ReplyFolder`). */
  private activeStream: RequestSink | undefined = undefined
  /** Streams that received parts during the chunk being decoded: woken once it is done. */
  private streamWakes: Array<ReplyStream> = []
  /** Reading is paused for a streamed reply whose consumer lags (nothing else is owed). */
  paused = false
  /**
   * The chunk being delivered ends in a malformed reply: the connection dies once its callers
   * are woken, so what they send is queued for the next connection, not taken for this one.
   */
  condemned = false

  readonly socket: Net.Socket
  readonly engine: Engine

  /** `reader`: the socket is read through it (`Socket.SocketReader`), else by its `'data'` events. */
  constructor(socket: Net.Socket, engine: Engine, reader?: SocketReader) {
    this.socket = socket
    this.engine = engine
    this.decoder = new Decoder((reply) => this.onReply(reply), {
      maxBulkLength: engine.options.maxReplyBytes,
      maxLineLength: engine.options.maxLineLength,
      selectSink: () => this.selectSink()
    })
    const onData = (chunk: Uint8Array) => {
      if (this.dead) return
      this.lastByteAt = performance.now()
      const error = this.decoder.feed(chunk)
      if (error !== undefined) this.condemned = true
      this.flushSettled()
      if (this.streamWakes.length > 0) this.wakeStreams()
      // A reply just uncovered one whose caller timed out: the dead-peer rule watches it.
      if (this.owesTimedOut && engine.options.deadPeerTimeout !== Number.POSITIVE_INFINITY) engine.watch()
      if (error !== undefined) {
        this.fatal(
          new RedisError({
            reason: new Protocol({
              message: `malformed reply from ${engine.options.target}: ${error.message}`,
              offset: error.offset,
              cause: error
            })
          }),
          "protocol"
        )
      }
      // What the callers woken by this chunk sent goes out in one write (or, if the
      // connection died meanwhile, to the writer, which keeps it for the next one).
      engine.flushQueued()
    }
    if (reader !== undefined) reader.attach(onData)
    else socket.on("data", onData)
    socket.on("drain", () => this.wakeDrain())
    socket.once("end", () => {
      this.ended = true
    })
    socket.on("error", (cause) => {
      if (this.failure === undefined) {
        // After the peer's FIN, a reset (a write racing the close) is still the server closing.
        if (!this.ended) this.lost = "error"
        this.failure = new RedisError({
          reason: new ConnectionLost({
            written: true,
            message: `connection to ${engine.options.target} failed: ${cause.message}`,
            cause
          })
        })
      }
    })
    socket.on("close", () => this.onClose())
  }

  private onReply(reply: Reply): void {
    if (this.dead) return
    // RESP3 out-of-band pushes (invalidation, pub/sub) never match a request; a client
    // cache reads its invalidations here.
    if (reply instanceof PushReply) {
      this.engine.options.hooks?.onPush(reply)
      return
    }
    const request = this.inflight.peek()
    if (request === undefined) {
      this.fatal(
        new RedisError({
          reason: new Protocol({
            message: `${this.engine.options.target} sent a reply no command was waiting for; the connection was reset`
          })
        }),
        "protocol"
      )
      return
    }
    this.replies++
    if (request.commands.length === 1) {
      this.inflight.shift()
      this.answered(request, reply)
      return
    }
    const replies = request.replies ?? (request.replies = [])
    replies.push(reply)
    if (replies.length === request.commands.length) {
      this.inflight.shift()
      this.answered(request, reply)
    }
  }

  /** Queues a request answered by the chunk being decoded, to be settled once it is through. */
  private answered(request: AnyRequest, reply: Reply): void {
    const at = this.settledCount++
    this.settledRequests[at] = request
    this.settledReplies[at] = reply
  }

  /** A streamed command is owed next: its array reply is streamed into its sink. */
  private selectSink(): RequestSink | undefined {
    const sink = this.inflight.peek()?.sink
    if (sink === undefined) return undefined
    this.activeStream = sink
    sink.begin(this)
    return sink
  }

  /** The streamed or folded reply ended (its `close(0)`): it leaves the FIFO, settled with the chunk. */
  streamEnded(sink: RequestSink, request: AnyRequest, reply: Reply): void {
    if (this.activeStream === sink) this.activeStream = undefined
    this.inflight.shift()
    this.replies++
    this.answered(request, reply)
  }

  /** Wakes `stream`'s consumer once the current chunk is decoded. */
  wakeLater(stream: ReplyStream): void {
    this.streamWakes.push(stream)
  }

  private wakeStreams(): void {
    const streams = this.streamWakes
    this.streamWakes = []
    for (const stream of streams) stream.wake()
  }

  /** Other commands are owed replies behind the streamed one. */
  get othersWaiting(): boolean {
    return this.inflight.length > 1
  }

  /** Stops reading the socket: the streamed reply's consumer lags and nobody else waits. */
  pause(): void {
    if (this.paused || this.dead) return
    this.paused = true
    this.socket.pause()
  }

  /** Reads the socket again; the silence clock restarts (a paused socket is not a stalled peer). */
  resume(): void {
    if (!this.paused) return
    this.paused = false
    this.lastByteAt = performance.now()
    if (!this.dead) this.socket.resume()
  }

  /**
   * Completes what one chunk answered, after the whole chunk is decoded: completing a
   * Deferred can resume its caller at once, and no caller code may run (and send) while the
   * chunk's replies are still being matched against the FIFO — an extra reply in the chunk
   * must meet the FIFO as the server saw it. Every outcome of the chunk is recorded before
   * the first caller is woken: a caller with several commands in flight (a window of
   * futures) then finds its next replies already there and goes on without suspending again.
   */
  private flushSettled(): void {
    const count = this.settledCount
    if (count === 0) return
    const requests = this.settledRequests
    const replies = this.settledReplies
    // The spare pair takes what arrives meanwhile (nothing should: replies come from the
    // socket's data event, never from a woken caller), fresh arrays if it is itself in use.
    this.settledRequests = this.spareRequests ?? []
    this.settledReplies = this.spareReplies ?? []
    this.spareRequests = undefined
    this.spareReplies = undefined
    this.settledCount = 0
    const engine = this.engine
    engine.replying = true
    engine.replyChunk = count
    engine.replyTime = this.lastByteAt
    let cleared = false
    try {
      let settled = 0
      for (let i = 0; i < count; i++) {
        const request = requests[i]!
        const reply = replies[i]!
        replies[i] = undefined
        requests[i] = undefined
        if (engine.settle(request, reply)) requests[settled++] = request
      }
      for (let i = 0; i < settled; i++) {
        const request = requests[i]!
        requests[i] = undefined
        request.notify()
      }
      cleared = true
    } finally {
      engine.replying = false
      // Nothing is retained: if a step threw, what it left behind is cleared before reuse.
      if (!cleared) {
        requests.fill(undefined, 0, count)
        replies.fill(undefined, 0, count)
      }
      this.spareRequests = requests
      this.spareReplies = replies
    }
  }

  /** Tears the connection down; everything in flight fails with `failure`. */
  fatal(failure: RedisError, lost?: LossReason): void {
    if (this.dead) return
    this.failure = failure
    if (lost !== undefined) this.lost = lost
    this.dead = true
    this.engine.detach(this)
    this.socket.destroy()
  }

  /** The reply owed next belongs to a caller who already timed out (see the dead-peer rule). */
  get owesTimedOut(): boolean {
    const head = this.inflight.peek()
    return head?.expired === true
  }

  /**
   * Writes one buffer, or several in order (corked, so they leave in one `writev`: large
   * arguments go by reference, not copied); true when the socket asks us to wait for `drain`.
   */
  write(bytes: Uint8Array | ReadonlyArray<Uint8Array>): boolean {
    if (bytes instanceof Uint8Array) return !this.socket.write(bytes)
    const socket = this.socket
    let full = false
    socket.cork()
    try {
      // The last write's answer counts what is buffered for all of them.
      for (let i = 0; i < bytes.length; i++) full = !socket.write(bytes[i])
    } finally {
      socket.uncork()
    }
    return full
  }

  readonly awaitDrain: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (this.dead || !this.socket.writableNeedDrain) return resume(Effect.void)
    this.drainWaiter = () => resume(Effect.void)
  })

  private wakeDrain(): void {
    const waiter = this.drainWaiter
    this.drainWaiter = undefined
    waiter?.()
  }

  private onClose(): void {
    this.dead = true
    this.engine.detach(this)
    this.wakeDrain()
    const failure =
      this.failure ??
      new RedisError({
        reason: new ConnectionLost({
          written: true,
          message: `connection to ${this.engine.options.target} closed by the server`
        })
      })
    const stream = this.activeStream
    this.activeStream = undefined
    this.paused = false
    stream?.fail(failure)
    for (const request of this.inflight.drain()) this.engine.fail(request, failure)
    Deferred.doneUnsafe(this.closed, Exit.void)
  }
}
