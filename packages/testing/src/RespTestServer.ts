/**
 * A scriptable RESP server on a real loopback TCP socket, for tests of anything that
 * speaks RESP: clients, connection engines, the graph client.
 *
 * Each request is decoded with the resp `Decoder` and handed to a `handler` that decides
 * the answer: a `Reply` (encoded in the connection's protocol), raw bytes, or a list of
 * steps that write, wait, split writes into pieces, drop the connection or stay silent.
 * Handshake commands (`PING`, `HELLO`, `AUTH`, `SELECT`, `CLIENT SETNAME`, `QUIT`) get a
 * default answer when the handler leaves them alone; anything else nobody scripted is
 * answered `-ERR unscripted command …`, so a gap in a script is visible, never silent.
 *
 * Requests of one connection are answered one after the other, in order, like a real
 * server: a delay holds back every later reply of that connection. Delays run on the
 * Effect clock, so under `it.effect` they wait for `TestClock.adjust` (use `it.live` for
 * wall-clock delays).
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import { Buffer } from "node:buffer"
import * as Net from "node:net"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { encodeReply } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { listenLoopback } from "./internal/Listen.ts"

/**
 * One decoded request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  /** The arguments as UTF-8 text, command name first, exactly as sent (no case folding). */
  readonly command: ReadonlyArray<string>
  /** The command name in upper case (`"GET"`, `"GRAPH.QUERY"`), for matching. */
  readonly name: string
  /** The arguments as the bytes that were sent. */
  readonly args: ReadonlyArray<Uint8Array>
}

/**
 * A request as recorded by the server, with the connection it came on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Received extends Request {
  /** Id of the connection (1, 2, … in accept order). */
  readonly connection: number
}

/**
 * What the handler sees of the connection a request came on. `protocol`, `name` and
 * `database` follow the default handling of `HELLO`, `CLIENT SETNAME` and `SELECT`;
 * `state` is free storage for a handler's own per-connection data.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly id: number
  /** Requests received on this connection so far, this one included. */
  readonly requests: number
  readonly protocol: 2 | 3
  readonly name: string | undefined
  readonly database: number
  readonly authenticated: boolean
  readonly state: Map<string, unknown>
}

/**
 * One step of a scripted answer, run in order.
 *
 * - `{ reply }`: encode a reply in the connection's protocol and write it;
 * - `{ write }`: write these bytes (or this text) unchanged, e.g. a malformed frame;
 * - `{ delay }`: wait (on the Effect clock) before the next step;
 * - `{ split, gap? }`: from here on, write in pieces of `split` bytes, one socket write
 *   each, waiting `gap` between pieces when given;
 * - `{ drop: true }`: destroy the socket (FIN); `{ drop: "reset" }` resets it (RST);
 * - `{ noReply: true }`: a marker for "this request gets no answer".
 *
 * Waits are deadlines counted from the request's arrival: the k-th wait ends at arrival +
 * the sum of the waits so far. So a `TestClock.adjust` made as soon as the request was
 * received releases the step even if the server fiber had not reached its sleep yet, and
 * a pipelined request's delay partly elapses while earlier requests are answered.
 *
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly reply: Reply }
  | { readonly write: Uint8Array | string }
  | { readonly delay: Duration.Input }
  | { readonly split: number; readonly gap?: Duration.Input | undefined }
  | { readonly drop: true | "reset" }
  | { readonly noReply: true }

/**
 * Raw bytes to write as the whole answer.
 *
 * @since 0.1.0
 * @category models
 */
export class Raw extends Data.TaggedClass("Raw")<{ readonly bytes: Uint8Array }> {}

/**
 * A scripted sequence of steps as the whole answer.
 *
 * @since 0.1.0
 * @category models
 */
export class Steps extends Data.TaggedClass("Steps")<{ readonly steps: ReadonlyArray<Step> }> {}

/**
 * A handler's answer. A plain `Reply` is encoded in the connection's protocol (so a
 * `Uint8Array` is a bulk string and an array is an array reply); raw bytes and step lists
 * are wrapped with {@link raw} and {@link steps} to keep them apart from replies.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = Reply | Raw | Steps

/**
 * Decides the answer to a request. Returning `undefined` leaves the request to the default
 * handling (handshake commands), then to the `-ERR unscripted command …` reply. A handler
 * that throws, fails or dies is answered `-ERR test server handler failed: …` and the
 * failure is kept in `handlerFailures`.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (
  request: Request,
  connection: Connection
) => Answer | undefined | Effect.Effect<Answer | undefined, unknown>

/**
 * @since 0.1.0
 * @category models
 */
export interface RespTestServerOptions {
  /** The scripted answers. Default: none (only the handshake defaults). */
  readonly handler?: Handler | undefined
  /** The protocol a connection speaks before any `HELLO`. Default 2, as Redis. */
  readonly protocol?: 2 | 3 | undefined
  /** The highest version `HELLO` accepts; above it the reply is `-NOPROTO …`. Default 3. */
  readonly maxProtocol?: 2 | 3 | undefined
  /** When set, `AUTH`/`HELLO AUTH` must give it and other commands need it first (`-NOAUTH`). */
  readonly password?: string | undefined
  /** The `version` reported by `HELLO`. Default `"7.0.15"`. */
  readonly version?: string | undefined
  /** Answer the handshake commands by default. Default true. */
  readonly defaults?: boolean | undefined
}

/**
 * @since 0.1.0
 * @category errors
 */
export class RespTestServerError extends Data.TaggedError("RespTestServerError")<{
  readonly reason: "ListenFailed"
  readonly message: string
  readonly cause?: unknown
}> {
  get hint(): string {
    return "the test server could not bind 127.0.0.1 on a free port; check the loopback interface"
  }
}

/**
 * A running test server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Server {
  readonly host: "127.0.0.1"
  readonly port: number
  /** `redis://127.0.0.1:<port>` */
  readonly url: string
  /** Connections open now. */
  readonly connections: Effect.Effect<number>
  /** Connections accepted since start. */
  readonly accepted: Effect.Effect<number>
  /** Every request received so far, in arrival order. */
  readonly received: Effect.Effect<ReadonlyArray<Received>>
  /** Waits until at least `count` requests have been received; returns them. */
  readonly awaitReceived: (count: number) => Effect.Effect<ReadonlyArray<Received>>
  /** Waits until at least `count` connections have been accepted since start. */
  readonly awaitAccepted: (count: number) => Effect.Effect<void>
  /** Handler failures (thrown, failed or died), in order. */
  readonly handlerFailures: Effect.Effect<ReadonlyArray<unknown>>
  /** Replaces the handler for requests that arrive from now on. */
  readonly setHandler: (handler: Handler | undefined) => Effect.Effect<void>
  /** Destroys every client socket (the server keeps listening). */
  readonly closeClients: Effect.Effect<void>
}

/**
 * The server as a service, for tests that share one server through a layer.
 *
 * @since 0.1.0
 * @category services
 */
export class RespTestServer extends Context.Service<RespTestServer, Server>()(
  "@effect-falkordb/testing/RespTestServer"
) {}

/**
 * Wraps raw bytes (or text, written as UTF-8) as an answer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const raw = (bytes: Uint8Array | string): Raw =>
  new Raw({ bytes: typeof bytes === "string" ? Buffer.from(bytes) : bytes })

/**
 * Wraps steps as an answer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const steps = (...list: ReadonlyArray<Step>): Steps => new Steps({ steps: list })

/**
 * The answer that writes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noReply: Steps = new Steps({ steps: [{ noReply: true }] })

/**
 * An error reply (`-message`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const error = (message: string): ErrorReply => new ErrorReply(message)

// Every code point kept: a leading U+FEFF is part of the text.
interface MutableConnection {
  id: number
  requests: number
  protocol: 2 | 3
  name: string | undefined
  database: number
  authenticated: boolean
  readonly state: Map<string, unknown>
}

const quoteArgs = (command: ReadonlyArray<string>): string =>
  command
    .slice(1)
    .map((a) => `'${a.length > 64 ? `${a.slice(0, 64)}…` : a}'`)
    .join(" ")

/** The message Redis-like servers give for commands nobody scripted. */
const unscripted = (request: Request): ErrorReply =>
  new ErrorReply(
    `ERR unscripted command '${request.command[0] ?? ""}'${request.command.length > 1 ? `, with args: ${quoteArgs(request.command)}` : ""}`
  )

const helloReply = (connection: MutableConnection, version: string): MapReply =>
  new MapReply([
    "server",
    "redis",
    "version",
    version,
    "proto",
    connection.protocol,
    "id",
    connection.id,
    "mode",
    "standalone",
    "role",
    "master",
    "modules",
    []
  ])

interface Settings {
  readonly maxProtocol: 2 | 3
  readonly password: string | undefined
  readonly version: string
}

/**
 * Default answers of the handshake commands; `undefined` when the command is not one.
 * `QUIT` is handled by the caller (it closes the socket after the reply).
 */
const defaultAnswer = (request: Request, connection: MutableConnection, settings: Settings): Reply | undefined => {
  const args = request.command
  switch (request.name) {
    case "PING":
      return args.length > 1 ? Buffer.from(args[1]!) : "PONG"
    case "AUTH": {
      const password = args.length > 2 ? args[2]! : args[1]
      if (settings.password === undefined) {
        return new ErrorReply(
          "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
        )
      }
      if (password !== settings.password) {
        return new ErrorReply("WRONGPASS invalid username-password pair or user is disabled.")
      }
      connection.authenticated = true
      return "OK"
    }
    case "HELLO": {
      let i = 1
      let version: number = connection.protocol
      if (args.length > 1) {
        version = Number(args[1])
        i = 2
        if (!Number.isInteger(version)) return new ErrorReply("ERR Protocol version is not an integer or out of range")
        if (version < 2 || version > settings.maxProtocol) return new ErrorReply("NOPROTO unsupported protocol version")
      }
      let name: string | undefined
      while (i < args.length) {
        const option = args[i]!.toUpperCase()
        if (option === "AUTH" && i + 2 < args.length) {
          if (settings.password !== undefined && args[i + 2] !== settings.password) {
            return new ErrorReply("WRONGPASS invalid username-password pair or user is disabled.")
          }
          connection.authenticated = true
          i += 3
        } else if (option === "SETNAME" && i + 1 < args.length) {
          name = args[i + 1]
          i += 2
        } else {
          return new ErrorReply(`ERR Syntax error in HELLO option '${args[i]}'`)
        }
      }
      if (settings.password !== undefined && !connection.authenticated) {
        return new ErrorReply(
          "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
        )
      }
      connection.protocol = version as 2 | 3
      if (name !== undefined) connection.name = name
      return helloReply(connection, settings.version)
    }
    case "SELECT": {
      const db = Number(args[1])
      if (args.length !== 2 || !Number.isInteger(db) || db < 0 || db > 15) {
        return new ErrorReply("ERR DB index is out of range")
      }
      connection.database = db
      return "OK"
    }
    case "CLIENT": {
      const sub = (args[1] ?? "").toUpperCase()
      if (sub === "SETNAME" && args.length === 3) {
        connection.name = args[2]
        return "OK"
      }
      if (sub === "GETNAME") return connection.name === undefined ? null : Buffer.from(connection.name)
      if (sub === "ID") return connection.id
      if (sub === "SETINFO" && args.length === 4) return "OK"
      return undefined
    }
    case "QUIT":
      return "OK"
    default:
      return undefined
  }
}

interface Pending extends Request {
  /** Effect-clock time of arrival, in milliseconds. */
  readonly arrival: number
}

const toRequest = (reply: Reply): Request | undefined => {
  if (!Array.isArray(reply) || reply.length === 0) return undefined
  const args: Array<Uint8Array> = []
  const command: Array<string> = []
  for (const item of reply as ReadonlyArray<Reply>) {
    if (!(item instanceof Uint8Array)) return undefined
    args.push(item)
    command.push(decodeUtf8(item))
  }
  return { command, name: command[0]!.toUpperCase(), args }
}

/** Writes bytes and waits until Node has handed them to the kernel (or the socket died). */
const writeBytes = (socket: Net.Socket, bytes: Uint8Array): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    if (socket.destroyed || !socket.writable) {
      resume(Effect.succeed(false))
      return
    }
    socket.write(bytes, (err) => resume(Effect.succeed(err == null)))
  })

/**
 * Starts a server on `127.0.0.1` and a free port, for the life of the current scope. On
 * scope close every client socket is destroyed and the listener is closed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("RespTestServer.make")(function* (options: RespTestServerOptions = {}) {
  const settings: Settings = {
    maxProtocol: options.maxProtocol ?? 3,
    password: options.password,
    version: options.version ?? "7.0.15"
  }
  const initialProtocol = options.protocol ?? 2
  const useDefaults = options.defaults ?? true
  let handler: Handler | undefined = options.handler

  const received: Array<Received> = []
  const failures: Array<unknown> = []
  const sockets = new Set<Net.Socket>()
  let accepted = 0
  let nextId = 1
  // Waiters woken when a request arrives or a connection is accepted.
  let waiters: Array<() => void> = []
  const wake = () => {
    const current = waiters
    waiters = []
    for (const w of current) w()
  }
  const waitUntil = (ready: () => boolean): Effect.Effect<void> =>
    Effect.suspend(function loop(): Effect.Effect<void> {
      if (ready()) return Effect.void
      const deferred = Deferred.makeUnsafe<void>()
      waiters.push(() => Deferred.doneUnsafe(deferred, Effect.void))
      return Effect.flatMap(Deferred.await(deferred), () => Effect.suspend(loop))
    })

  const clock = yield* Clock.Clock
  const fibers = yield* FiberSet.make<void, never>()
  const run = yield* FiberSet.runtime(fibers)<never>()

  const answerOf = (request: Request, connection: MutableConnection): Effect.Effect<Answer | undefined> => {
    const current = handler
    if (current === undefined) return Effect.succeed(undefined)
    const failed = (cause: unknown) => {
      failures.push(cause)
      const text = cause instanceof Error ? cause.message : String(cause)
      return Effect.succeed<Answer>(new ErrorReply(`ERR test server handler failed: ${text.replace(/[\r\n]+/g, " ")}`))
    }
    let result: ReturnType<Handler>
    try {
      result = current(request, connection)
    } catch (cause) {
      return failed(cause)
    }
    if (Effect.isEffect(result)) {
      return (result as Effect.Effect<Answer | undefined, unknown>).pipe(Effect.catchCause((cause) => failed(cause)))
    }
    return Effect.succeed(result as Answer | undefined)
  }

  /** Runs an answer; false once the socket is gone (stop serving this connection). */
  const perform = (socket: Net.Socket, connection: MutableConnection, answer: Answer, arrival: number) =>
    Effect.gen(function* () {
      if (answer instanceof Raw) return yield* writeBytes(socket, answer.bytes)
      if (!(answer instanceof Steps)) return yield* writeBytes(socket, encodeReply(answer, connection.protocol))
      let piece = 0
      let gap = 0
      // Waits are deadlines counted from the request's arrival, not from whenever this fiber
      // gets to them: a TestClock adjusted before the fiber reaches its sleep still releases it.
      let due = arrival
      const waitFor = (millis: number) =>
        Effect.suspend(() => {
          due += millis
          const left = due - clock.currentTimeMillisUnsafe()
          return left > 0 ? Effect.sleep(left) : Effect.void
        })
      const write = Effect.fnUntraced(function* (bytes: Uint8Array) {
        if (piece <= 0) return yield* writeBytes(socket, bytes)
        for (let at = 0; at < bytes.length; at += piece) {
          if (at > 0 && gap > 0) yield* waitFor(gap)
          if (!(yield* writeBytes(socket, bytes.subarray(at, Math.min(bytes.length, at + piece))))) return false
        }
        return true
      })
      for (const step of answer.steps) {
        if ("reply" in step) {
          if (!(yield* write(encodeReply(step.reply, connection.protocol)))) return false
        } else if ("write" in step) {
          if (!(yield* write(typeof step.write === "string" ? Buffer.from(step.write) : step.write))) return false
        } else if ("delay" in step) {
          yield* waitFor(Duration.toMillis(Duration.fromInputUnsafe(step.delay)))
        } else if ("split" in step) {
          if (!Number.isSafeInteger(step.split) || step.split < 1) {
            return yield* Effect.die(new Error(`split must be an integer >= 1 (got ${step.split})`))
          }
          piece = step.split
          gap = step.gap === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(step.gap))
        } else if ("drop" in step) {
          if (step.drop === "reset") socket.resetAndDestroy()
          else socket.destroy()
          return false
        }
        // `noReply` writes nothing by design.
      }
      return true
    })

  const serve = (
    socket: Net.Socket,
    connection: MutableConnection,
    queue: Queue.Queue<Pending | ErrorReply, Cause.Done>
  ) =>
    Effect.gen(function* () {
      while (true) {
        const next = yield* Queue.take(queue)
        if (next instanceof ErrorReply) {
          // A malformed request: say so and hang up, as Redis does.
          yield* writeBytes(socket, encodeReply(next, connection.protocol))
          socket.destroy()
          return
        }
        let answer = yield* answerOf(next, connection)
        let quit = false
        if (answer === undefined && useDefaults) {
          const needsAuth =
            settings.password !== undefined &&
            !connection.authenticated &&
            next.name !== "AUTH" &&
            next.name !== "HELLO" &&
            next.name !== "QUIT"
          answer = needsAuth
            ? new ErrorReply("NOAUTH Authentication required.")
            : defaultAnswer(next, connection, settings)
          quit = next.name === "QUIT"
        }
        const ok = yield* perform(socket, connection, answer === undefined ? unscripted(next) : answer, next.arrival)
        if (!ok) return
        if (quit) {
          socket.end()
          return
        }
      }
    }).pipe(
      // The queue ends (Done) when the socket closes: nothing more to serve.
      Effect.catchCause(() => Effect.void),
      Effect.ensuring(Effect.sync(() => socket.destroy()))
    )

  const onConnection = (socket: Net.Socket) => {
    socket.setNoDelay(true)
    sockets.add(socket)
    accepted++
    const connection: MutableConnection = {
      id: nextId++,
      requests: 0,
      protocol: initialProtocol,
      name: undefined,
      database: 0,
      authenticated: settings.password === undefined,
      state: new Map()
    }
    const queue = Effect.runSync(Queue.unbounded<Pending | ErrorReply, Cause.Done>())
    const decoder = new Decoder((reply) => {
      const request = toRequest(reply)
      if (request === undefined) {
        Queue.offerUnsafe(queue, new ErrorReply("ERR Protocol error: expected an array of bulk strings"))
        return
      }
      connection.requests++
      received.push({ ...request, connection: connection.id })
      Queue.offerUnsafe(queue, { ...request, arrival: clock.currentTimeMillisUnsafe() })
      wake()
    })
    socket.on("data", (chunk: Buffer) => {
      const failure = decoder.feed(chunk)
      if (failure !== undefined) {
        Queue.offerUnsafe(queue, new ErrorReply(`ERR Protocol error: ${failure.message}`))
        socket.pause()
      }
    })
    socket.on("error", () => {
      // A reset by the peer; "close" follows and ends the connection.
    })
    socket.on("close", () => {
      sockets.delete(socket)
      Queue.endUnsafe(queue)
      wake()
    })
    run(serve(socket, connection, queue))
    wake()
  }

  const server = Net.createServer({ noDelay: true }, onConnection)
  const port = yield* listenLoopback(
    server,
    sockets,
    (cause) => new RespTestServerError({ reason: "ListenFailed", message: cause.message, cause })
  )

  const service: Server = {
    host: "127.0.0.1",
    port,
    url: `redis://127.0.0.1:${port}`,
    connections: Effect.sync(() => sockets.size),
    accepted: Effect.sync(() => accepted),
    received: Effect.sync(() => received.slice()),
    awaitReceived: (count) =>
      Effect.map(
        waitUntil(() => received.length >= count),
        () => received.slice()
      ),
    awaitAccepted: (count) => waitUntil(() => accepted >= count),
    handlerFailures: Effect.sync(() => failures.slice()),
    setHandler: (next) =>
      Effect.sync(() => {
        handler = next
      }),
    closeClients: Effect.sync(() => {
      for (const socket of sockets) socket.destroy()
    })
  }
  return service
})

/**
 * The server as a layer.
 *
 * @example
 * ```ts
 * import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
 * import { Effect } from "effect"
 *
 * // A server that answers GET with a fixed value, drops the connection on QUIT, and records requests.
 * const Server = RespTestServer.layer({
 *   handler: (request) =>
 *     request.name === "GET"
 *       ? new TextEncoder().encode("cached")
 *       : request.name === "QUIT"
 *         ? RespTestServer.steps({ drop: true })
 *         : undefined
 * })
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* RespTestServer.RespTestServer
 *   // … connect the client under test to server.url, then:
 *   const received = yield* server.received
 *   return received.map((r) => r.command.join(" "))
 * }).pipe(Effect.provide(Server))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: RespTestServerOptions = {}): Layer.Layer<RespTestServer, RespTestServerError> =>
  Layer.effect(RespTestServer, make(options))
