/**
 * The dedicated pub/sub connection behind `RedisPubSub`: one socket per service, shared by
 * every subscription, never used for ordinary commands (a subscribed RESP2 connection
 * refuses them, and keeping it apart means the shared engines never meet a push frame).
 *
 * - In RESP2 the server's messages arrive as arrays, in RESP3 as push frames (`>`); both
 *   are read here, nothing is dropped.
 * - Channels are reference-counted: the first listener of a channel sends `SUBSCRIBE`, the
 *   last one to leave sends `UNSUBSCRIBE`. A listener is "subscribed" only once the server
 *   acknowledged every `SUBSCRIBE` sent for its channel.
 * - After a lost connection the supervisor reconnects with the engine's backoff and
 *   re-subscribes every channel. Messages published during the gap are lost: Redis
 *   pub/sub is at-most-once.
 * - New credentials (a `credentials` Stream emitted) re-authenticate a RESP3 connection in
 *   place with `AUTH`, subscriptions untouched; RESP2 refuses `AUTH` while subscribed, so a
 *   RESP2 connection takes them at its next connect.
 *
 * @internal
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { type Command, encodeCommands } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, PushReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Net from "node:net"
import { Closed, ConnectionLost, fromErrorReply, Offline, Protocol, RedisError } from "../RedisError.ts"
import type { Credentials, ResolvedOptions } from "../RedisOptions.ts"
import type { Kind } from "../RedisPubSub.ts"
import { ConnectReport } from "./ConnectReport.ts"
import { authCommand, handshakeCommands, handshakeFailure, openSocket } from "./Socket.ts"

const SUBSCRIBE: Record<Kind, string> = { channel: "SUBSCRIBE", pattern: "PSUBSCRIBE", shard: "SSUBSCRIBE" }
const UNSUBSCRIBE: Record<Kind, string> = { channel: "UNSUBSCRIBE", pattern: "PUNSUBSCRIBE", shard: "SUNSUBSCRIBE" }
const ACKS: Record<string, Kind> = { subscribe: "channel", psubscribe: "pattern", ssubscribe: "shard" }

const textEncoder = new TextEncoder()

/** @internal */
export interface RawMessage {
  readonly kind: Kind
  readonly channel: string
  readonly pattern: string | undefined
  readonly payload: Uint8Array
}

/** @internal */
export interface Listener {
  readonly onMessage: (message: RawMessage) => void
  /** The subscriber closed (or failed for good): the listener's stream ends with this error. */
  readonly onEnd: (error: RedisError) => void
}

interface Entry {
  readonly kind: Kind
  readonly name: string
  readonly listeners: Set<Listener>
  confirmed: boolean
  readonly waiters: Set<(error: RedisError | undefined) => void>
}

const keyOf = (kind: Kind, name: string): string => `${kind}\u0000${name}`

/** Owned bytes: a decoded bulk string may be a view into a larger socket chunk. */
const ownedBytes = (reply: Reply): Uint8Array =>
  reply instanceof Uint8Array ? reply.slice() : textEncoder.encode(replyToString(reply) ?? "")

/** @internal */
export class Subscriber {
  private readonly entries = new Map<string, Entry>()
  /** Subscribe acknowledgements still owed per channel (a channel may be re-subscribed before its ack). */
  private readonly owedAcks = new Map<string, number>()
  private socket: Net.Socket | undefined = undefined
  private closing = false
  /** Successful connects, the first one included. */
  connects = 0
  /** `AUTH`s written on the subscribed RESP3 connection, answered in order (a reply, not a push). */
  private readonly pendingAuth: Array<(reply: Reply | undefined) => void> = []
  readonly options: ResolvedOptions
  private readonly report: ConnectReport

  constructor(options: ResolvedOptions) {
    this.options = options
    this.report = options.report ?? new ConnectReport()
  }

  // ---------------------------------------------------------------------------
  // listeners

  /**
   * Adds a listener to channels (or patterns) and waits until the server acknowledged
   * each of them. The returned effect removes it again (unsubscribing channels left empty).
   */
  add(kind: Kind, names: ReadonlyArray<string>, listener: Listener): Effect.Effect<void, RedisError> {
    return Effect.callback<void, RedisError>((resume) => {
      if (this.closing) return resume(Effect.fail(this.closedError()))
      const fresh: Array<string> = []
      let waiting = 0
      let failed = false
      const onAck = (error: RedisError | undefined) => {
        if (failed) return
        if (error !== undefined) {
          failed = true
          return resume(Effect.fail(error))
        }
        if (--waiting === 0) resume(Effect.void)
      }
      const joined: Array<Entry> = []
      for (const name of new Set(names)) {
        const key = keyOf(kind, name)
        let entry = this.entries.get(key)
        if (entry === undefined) {
          entry = { kind, name, listeners: new Set(), confirmed: false, waiters: new Set() }
          this.entries.set(key, entry)
          fresh.push(name)
        }
        entry.listeners.add(listener)
        joined.push(entry)
        if (!entry.confirmed) {
          waiting++
          entry.waiters.add(onAck)
        }
      }
      if (fresh.length > 0) this.send(kind, fresh)
      if (waiting === 0) resume(Effect.void)
      return Effect.sync(() => {
        for (const entry of joined) entry.waiters.delete(onAck)
      })
    })
  }

  /** Removes a listener; channels it leaves empty are unsubscribed. */
  remove(kind: Kind, names: ReadonlyArray<string>, listener: Listener): void {
    const emptied: Array<string> = []
    for (const name of new Set(names)) {
      const key = keyOf(kind, name)
      const entry = this.entries.get(key)
      if (entry === undefined || !entry.listeners.delete(listener)) continue
      if (entry.listeners.size === 0) {
        this.entries.delete(key)
        emptied.push(name)
      }
    }
    if (emptied.length > 0 && this.socket !== undefined && !this.closing) {
      this.write([[UNSUBSCRIBE[kind], ...emptied]])
    }
  }

  /** The channels and patterns with listeners, for tests and `info`. */
  get subscriptions(): number {
    return this.entries.size
  }

  private send(kind: Kind, names: ReadonlyArray<string>): void {
    // Disconnected: the next connection subscribes everything in `entries`.
    if (this.socket === undefined) return
    for (const name of names) {
      const key = keyOf(kind, name)
      this.owedAcks.set(key, (this.owedAcks.get(key) ?? 0) + 1)
    }
    this.write([[SUBSCRIBE[kind], ...names]])
  }

  private write(commands: Array<Command>): void {
    this.socket?.write(encodeCommands(commands))
  }

  // ---------------------------------------------------------------------------
  // frames

  /** A frame of the subscribed connection: a message, an acknowledgement or an error. */
  private onFrame(reply: Reply): void {
    if (this.pendingAuth.length > 0 && !(reply instanceof PushReply) && this.answersAuth(reply)) {
      this.pendingAuth.shift()!(reply)
      return
    }
    if (reply instanceof ErrorReply) {
      // A refused SUBSCRIBE (an unknown command on an old server, an ACL denial): the
      // listeners still waiting for an acknowledgement fail with it.
      const error = fromErrorReply(reply, "SUBSCRIBE")
      for (const entry of this.entries.values()) {
        if (entry.confirmed) continue
        for (const waiter of entry.waiters) waiter(error)
        entry.waiters.clear()
      }
      return
    }
    const items = reply instanceof PushReply ? reply.items : Array.isArray(reply) ? reply : undefined
    if (items === undefined || items.length < 2) return
    const type = replyToString(items[0]!)
    switch (type) {
      case "message":
      case "smessage": {
        const channel = replyToString(items[1]!) ?? ""
        const kind: Kind = type === "message" ? "channel" : "shard"
        this.dispatch(keyOf(kind, channel), {
          kind,
          channel,
          pattern: undefined,
          payload: ownedBytes(items[2]!)
        })
        return
      }
      case "pmessage": {
        const pattern = replyToString(items[1]!) ?? ""
        this.dispatch(keyOf("pattern", pattern), {
          kind: "pattern",
          channel: replyToString(items[2]!) ?? "",
          pattern,
          payload: ownedBytes(items[3]!)
        })
        return
      }
      default: {
        const kind = type === undefined ? undefined : ACKS[type]
        if (kind === undefined) return
        const key = keyOf(kind, replyToString(items[1]!) ?? "")
        const owed = (this.owedAcks.get(key) ?? 1) - 1
        if (owed > 0) {
          this.owedAcks.set(key, owed)
          return
        }
        this.owedAcks.delete(key)
        const entry = this.entries.get(key)
        if (entry === undefined || entry.confirmed) return
        entry.confirmed = true
        for (const waiter of entry.waiters) waiter(undefined)
        entry.waiters.clear()
      }
    }
  }

  /**
   * Whether a RESP3 reply (not a push) answers the oldest `AUTH`: `+OK` only does, and so does
   * an error while no `SUBSCRIBE` awaits its acknowledgement; with both outstanding, an error
   * is the `AUTH`'s when it says `WRONGPASS`, else the refused `SUBSCRIBE`'s.
   */
  private answersAuth(reply: Reply): boolean {
    if (!(reply instanceof ErrorReply)) return true
    if (reply.code === "WRONGPASS") return true
    for (const entry of this.entries.values()) if (!entry.confirmed) return false
    return true
  }

  /**
   * New credentials: `AUTH` on the subscribed connection when it speaks RESP3, within
   * `connectTimeout`; nothing to do on RESP2 or while disconnected (the next connect asks
   * the credentials anyway). A refusal fails with the server's reply (code `WRONGPASS` …).
   */
  reauthenticate(credentials: Credentials): Effect.Effect<void, RedisError> {
    return Effect.suspend(() => {
      const socket = this.socket
      if (this.options.protocol !== 3 || socket === undefined || this.closing) return Effect.void
      return Effect.callback<void, RedisError>((resume) => {
        const answer = (reply: Reply | undefined) => {
          if (reply instanceof ErrorReply) {
            resume(
              Effect.fail(
                fromErrorReply(
                  reply,
                  "AUTH",
                  `re-authentication of the pub/sub connection to ${this.options.target} failed: ${reply.message}`
                )
              )
            )
          } else resume(Effect.void)
        }
        this.pendingAuth.push(answer)
        this.write([authCommand(credentials)])
        return Effect.sync(() => {
          const index = this.pendingAuth.indexOf(answer)
          // Still owed a reply: keep the slot so the replies stay matched, answered to no one.
          if (index >= 0) this.pendingAuth[index] = () => {}
        })
      }).pipe(
        Effect.timeoutOrElse({
          duration: this.options.connectTimeout,
          orElse: () =>
            Effect.fail(
              new RedisError({
                reason: new Offline({
                  message: `the pub/sub connection to ${this.options.target} did not answer AUTH with the new credentials within ${this.options.connectTimeout} ms (connectTimeout)`
                })
              })
            )
        })
      )
    })
  }

  private dispatch(key: string, message: RawMessage): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    for (const listener of entry.listeners) listener.onMessage(message)
  }

  // ---------------------------------------------------------------------------
  // connection life

  /** Connects, handshakes and subscribes everything registered; resolves with the close signal. */
  private readonly connect: Effect.Effect<Deferred.Deferred<void>, RedisError> = Effect.gen(
    { self: this },
    function* () {
      const locator = this.options.locator
      const generation = locator?.generation
      let socket: Net.Socket
      let target = this.options.target
      const credentials =
        this.options.credentials === undefined
          ? undefined
          : yield* this.options.credentials.get(this.options.connectTimeout, this.options.connectTimeout)
      const handshake = handshakeCommands(this.options, credentials)
      if (locator === undefined) socket = yield* openSocket(this.options)
      else {
        // Sentinel: the primary named now, checked with ROLE like the engines' connections.
        const located = yield* locator.locate
        target = `${this.options.target} at ${located.host}:${located.port}`
        socket = yield* openSocket(this.options, { _tag: "Tcp", host: located.host, port: located.port }, target)
        handshake.push(["ROLE"])
      }
      const closed = Deferred.makeUnsafe<void>()
      const replies: Array<Reply> = []
      const handshaken = Deferred.makeUnsafe<Array<Reply>, RedisError>()
      let subscribed = false
      const decoder = new Decoder(
        (reply) => {
          if (subscribed) return this.onFrame(reply)
          replies.push(reply)
          if (replies.length === handshake.length) Deferred.doneUnsafe(handshaken, Exit.succeed(replies))
        },
        { maxBulkLength: this.options.maxReplyBytes, maxLineLength: this.options.maxLineLength }
      )
      socket.on("data", (chunk: Buffer) => {
        const error = decoder.feed(chunk)
        if (error !== undefined) {
          const failure = new RedisError({
            reason: new Protocol({
              message: `malformed frame on the pub/sub connection to ${this.options.target}: ${error.message}`,
              offset: error.offset,
              cause: error
            })
          })
          Deferred.doneUnsafe(handshaken, Exit.fail(failure))
          socket.destroy()
        }
      })
      socket.on("error", () => {})
      socket.on("close", () => {
        if (this.socket === socket) this.lost()
        Deferred.doneUnsafe(
          handshaken,
          Exit.fail(
            new RedisError({
              reason: new ConnectionLost({
                written: true,
                message: `the pub/sub connection to ${this.options.target} closed during the handshake`
              })
            })
          )
        )
        Deferred.doneUnsafe(closed, Exit.void)
      })
      socket.write(encodeCommands(handshake))
      const answers = yield* Deferred.await(handshaken).pipe(
        Effect.timeoutOrElse({
          duration: this.options.connectTimeout,
          orElse: () =>
            Effect.fail(
              new RedisError({
                reason: new Offline({
                  message: `${this.options.target} did not answer the pub/sub handshake within ${this.options.connectTimeout} ms`
                })
              })
            )
        }),
        Effect.onError(() => Effect.sync(() => socket.destroy()))
      )
      const failure = handshakeFailure(handshake, answers, target)
      if (failure !== undefined) {
        socket.destroy()
        return yield* failure
      }
      if (locator !== undefined) {
        const role = answers[answers.length - 1]
        const actual = Array.isArray(role) ? replyToString(role[0] as Reply) : undefined
        // A stale answer of the sentinels, or a failover while connecting: try again later.
        const problem =
          actual !== locator.role
            ? `${target} reports the role "${actual}", not "${locator.role}" (a failover in progress?); reconnecting`
            : locator.generation !== generation
              ? `${target}: a failover happened while connecting; reconnecting`
              : undefined
        if (problem !== undefined) {
          socket.destroy()
          return yield* new RedisError({ reason: new Offline({ message: problem }) })
        }
      }
      subscribed = true
      if (this.closing) {
        socket.destroy()
        return yield* this.closedError()
      }
      this.socket = socket
      this.connects++
      const byKind = new Map<Kind, Array<string>>()
      for (const entry of this.entries.values()) {
        const names = byKind.get(entry.kind) ?? []
        names.push(entry.name)
        byKind.set(entry.kind, names)
      }
      for (const [kind, names] of byKind) this.send(kind, names)
      return closed
    }
  )

  /** The connection was lost: every channel must be acknowledged again on the next one. */
  private lost(): void {
    this.socket = undefined
    this.owedAcks.clear()
    // AUTHs of the lost connection: the next connect authenticates with the latest credentials.
    for (const answer of this.pendingAuth.splice(0)) answer(undefined)
    for (const entry of this.entries.values()) entry.confirmed = false
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.options.reconnectMaxDelay, this.options.reconnectBaseDelay * 2 ** Math.min(attempt, 30))
    return base + Math.random() * base * 0.2
  }

  /** Reconnects forever (with backoff) after each loss. */
  readonly supervise = (first: Deferred.Deferred<void>): Effect.Effect<never> =>
    Effect.gen({ self: this }, function* () {
      let closed: Deferred.Deferred<void> | undefined = first
      let attempt = 0
      for (;;) {
        if (closed !== undefined) {
          yield* Deferred.await(closed)
          closed = undefined
          attempt = 0
        } else {
          attempt++
          yield* Effect.sleep(this.backoff(attempt))
        }
        const next = yield* Effect.exit(this.connect)
        if (Exit.isSuccess(next)) {
          closed = next.value
          yield* this.report.restored(this.options.target)
        } else {
          const error = Cause.findErrorOption(next.cause)
          if (Option.isSome(error)) yield* this.report.failed(`cannot connect to ${this.options.target}`, error.value)
        }
      }
    })

  closedError(): RedisError {
    return new RedisError({
      reason: new Closed({ written: false, message: `the pub/sub client of ${this.options.target} is closed` })
    })
  }

  /** Ends every listener and closes the socket. */
  readonly close: Effect.Effect<void> = Effect.sync(() => {
    this.closing = true
    const error = this.closedError()
    for (const entry of this.entries.values()) {
      for (const waiter of entry.waiters) waiter(error)
      for (const listener of entry.listeners) listener.onEnd(error)
    }
    this.entries.clear()
    const socket = this.socket
    this.socket = undefined
    socket?.destroy()
  })

  /** Whether a subscribed connection is up (a `Locatable`). */
  get online(): boolean {
    return this.socket !== undefined
  }

  /** A failover: drops the connection; the supervisor reconnects to the new primary and subscribes again. */
  reset(_message: string): void {
    this.socket?.destroy()
  }

  /** Connects now (a wrong address fails the construction), then supervises in the background. */
  static make(options: ResolvedOptions): Effect.Effect<Subscriber, RedisError, Scope.Scope> {
    return Effect.gen(function* () {
      const subscriber = new Subscriber(options)
      if (options.credentials !== undefined) yield* options.credentials.attach(subscriber)
      const closed = yield* subscriber.connect
      if (options.locator !== undefined) {
        const unregister = options.locator.register(subscriber)
        yield* Effect.addFinalizer(() => Effect.sync(unregister))
      }
      yield* Effect.forkScoped(subscriber.supervise(closed))
      yield* Effect.addFinalizer(() => subscriber.close)
      return subscriber
    })
  }
}
