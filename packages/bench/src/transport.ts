/**
 * Transport: the same minimal Effect pipelined client over two sockets, to decide which one
 * the engine should sit on. Only the transport differs:
 *
 * - `node:net` adapter: replies decoded synchronously in the socket's `data` callback,
 *   requests written with `socket.write` (what the engine does);
 * - `@effect/platform-node` `NodeSocket`: a fiber pulling `reader.pull` batches and a
 *   writer fiber calling `writer.write`.
 *
 * Everything else is shared: callers `execute` through a Deferred each, a writer fiber wakes
 * once per batch and writes everything queued as one buffer, replies complete the Deferreds
 * in FIFO order. Closed loops of SET at 1, 64, 256 and 1024 callers, interleaved runs, medians.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { type Command, encodeCommands } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import * as Harness from "./harness.ts"

/** What a transport gives the shared client core: a way to write, and where replies go. */
interface Transport {
  readonly write: (bytes: Uint8Array) => Effect.Effect<void>
}

/** The shared core: FIFO of Deferreds, a writer fiber, a decoder feeding the FIFO. */
const makeCore = Effect.fnUntraced(function* (
  open: (onChunk: (chunk: Uint8Array) => void) => Effect.Effect<Transport, unknown, Scope.Scope>
) {
  let fifo: Array<Deferred.Deferred<Reply, never>> = []
  let head = 0
  let pending: Array<Command> = []
  const wake = yield* Queue.make<void>()
  let awake = false
  const decoder = new Decoder((reply) => {
    const waiter = fifo[head++]!
    if (head > 4096 && head * 2 > fifo.length) {
      fifo = fifo.slice(head)
      head = 0
    }
    Deferred.doneUnsafe(waiter, Exit.succeed(reply))
  })
  const transport = yield* open((chunk) => {
    const error = decoder.feed(chunk)
    if (error !== undefined) throw error
  })
  yield* Effect.forkScoped(
    Effect.forever(
      Effect.gen(function* () {
        yield* Queue.take(wake)
        awake = false
        const batch = pending
        pending = []
        yield* transport.write(encodeCommands(batch))
      })
    )
  )
  const execute = (command: Command): Effect.Effect<Reply> =>
    Effect.suspend(() => {
      const deferred = Deferred.makeUnsafe<Reply, never>()
      fifo.push(deferred)
      pending.push(command)
      if (!awake) {
        awake = true
        Queue.offerUnsafe(wake, undefined)
      }
      return Deferred.await(deferred)
    })
  return serviceOf(execute)
})

const serviceOf = (execute: (command: Command) => Effect.Effect<Reply>): RedisConnection.RedisConnection["Service"] =>
  RedisConnection.makeService({
    info: { strategy: "single", connections: 1, window: 1, target: "bench", protocol: 2 },
    execute,
    submit: () => Effect.die("transport bench: submit is not measured"),
    pipeline: () => Effect.die("transport bench: pipeline is not measured"),
    executeAll: () => Effect.die("transport bench: executeAll is not measured"),
    withExclusive: () => Effect.die("transport bench: withExclusive is not measured")
  })

/** The engine's choice: a `node:net` socket, decoding in its data callback. */
const netTransport =
  (port: number) =>
  (onChunk: (chunk: Uint8Array) => void): Effect.Effect<Transport, unknown, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.callback<Net.Socket, Error>((resume) => {
        const socket = Net.connect({ host: "127.0.0.1", port, noDelay: true })
        socket.once("error", (error) => resume(Effect.fail(error)))
        socket.once("connect", () => resume(Effect.succeed(socket)))
      }),
      (socket) => Effect.sync(() => socket.destroy())
    ).pipe(
      Effect.map((socket) => {
        socket.on("data", onChunk)
        return { write: (bytes: Uint8Array) => Effect.sync(() => void socket.write(bytes)) }
      })
    )

/** `@effect/platform-node`'s pull-based socket: a reader fiber and its writer. */
const nodeSocketTransport =
  (port: number) =>
  (onChunk: (chunk: Uint8Array) => void): Effect.Effect<Transport, unknown, Scope.Scope> =>
    Effect.gen(function* () {
      const socket = yield* NodeSocket.makeNet({ host: "127.0.0.1", port, noDelay: true })
      const reader = yield* socket.reader
      const writer = yield* socket.writer
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(reader.pull, (chunks) =>
            Effect.sync(() => {
              for (const chunk of chunks) onChunk(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
            })
          )
        )
      )
      return { write: (bytes: Uint8Array) => Effect.orDie(writer.write(bytes)) }
    })

/**
 * The two clients of the table, connected to `127.0.0.1:port` for the life of the scope.
 *
 * @since 0.1.0
 * @category transport
 */
export const makeClients = (
  port: number
): Effect.Effect<
  {
    readonly net: RedisConnection.RedisConnection["Service"]
    readonly platform: RedisConnection.RedisConnection["Service"]
  },
  unknown,
  Scope.Scope
> => Effect.all({ net: makeCore(netTransport(port)), platform: makeCore(nodeSocketTransport(port)) })

const loads: ReadonlyArray<Harness.Load> = [
  { callers: 1, window: 1 },
  { callers: 64, window: 1 },
  { callers: 256, window: 1 },
  { callers: 1024, window: 1 }
]

const NET = "node:net adapter (data callback)"
const PLATFORM = "@effect/platform-node NodeSocket (pull fiber)"

/**
 * Options of the transport table.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port: number
  readonly runs: number
  readonly millis: number
  readonly warmupMillis: number
}

/**
 * Runs the transport table and renders it.
 *
 * @since 0.1.0
 * @category transport
 */
export const run = (options: Options): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { net, platform } = yield* makeClients(options.port)
      const cells: Array<Harness.Cell> = []
      for (const load of loads) {
        const row = `${load.callers}`
        cells.push({ row, column: NET, run: (millis) => Harness.runEffectCell(net, { load, op: "SET", millis }) })
        cells.push({
          row,
          column: PLATFORM,
          run: (millis) => Harness.runEffectCell(platform, { load, op: "SET", millis })
        })
      }
      const measured = yield* Harness.measure(cells, options)
      const rows = loads.map((load) => {
        const row = `${load.callers}`
        return [
          row,
          Harness.formatRate(Harness.medianRate(measured, row, NET)),
          Harness.formatRate(Harness.medianRate(measured, row, PLATFORM)),
          Harness.formatRatio(Harness.medianRatio(measured, row, NET, PLATFORM))
        ]
      })
      return [
        "### Transport: the same minimal Effect client over two sockets, closed-loop SET/s",
        "",
        Harness.table(["callers", NET, PLATFORM, "node:net ÷ NodeSocket"], rows)
      ].join("\n")
    })
  )
