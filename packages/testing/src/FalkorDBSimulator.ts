/**
 * A simulated FalkorDB for throughput benchmarks: a RESP server on loopback that answers
 * `GRAPH.QUERY` / `GRAPH.RO_QUERY` with recorded compact (or verbose) replies and serialises
 * the way the real server does:
 *
 * - one query at a time per connection (Redis blocks a client while the module runs its
 *   query; later commands of that connection wait, handshake commands included);
 * - `workers` slots shared by all connections (FalkorDB's thread pool), taken in the order
 *   connections became ready;
 * - each query holds its slot for `serviceTime`, on a timer, never on the CPU, so the
 *   simulation does not steal the client's core;
 * - replies in request order per connection, byte for byte as recorded.
 *
 * Time is simulated, not slept: a query starts at max(its arrival, its connection's previous
 * finish, the slot's previous finish) and ends `serviceTime` later. A timer (the Effect
 * clock, so `TestClock` drives it in tests) wakes the server when the earliest query is due
 * and every query due by then is answered. Coarse timers (Node's are 1 ms) delay a reply but
 * never stretch the schedule, so with enough queries queued the server runs exactly at its
 * ceiling: `min(workers, connections) ÷ serviceTime` queries per second.
 *
 * The queries it knows come from recordings (`Recording`, e.g. {@link benchmarkRecordings}
 * from the shared fixtures), matched by query text and the `--compact` flag for any graph
 * name; anything else is answered `-ERR simulator has no recording …`, so a gap is visible.
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import { Buffer } from "node:buffer"
import * as Net from "node:net"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as FixtureReplay from "./FixtureReplay.ts"
import * as PreciseWake from "./internal/PreciseWake.ts"
import { listenLoopback } from "./internal/Listen.ts"

/**
 * One recorded reply: what the server sent for `query` (for any graph name), with or
 * without `--compact`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Recording {
  readonly query: string
  readonly compact: boolean
  readonly reply: Uint8Array
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SimulatorOptions {
  /** The replies the simulator knows. */
  readonly recordings: ReadonlyArray<Recording>
  /** Worker slots shared by all connections (FalkorDB's `THREAD_COUNT`). Default 4. */
  readonly workers?: number | undefined
  /** How long each graph query holds its slot. Default 1 ms. */
  readonly serviceTime?: Duration.Input | undefined
  /**
   * How the server wakes when a query is due. `"clock"` (default): a sleep on the Effect
   * clock, so `TestClock` drives it; Node's timers round it up to whole milliseconds, which
   * holds replies back by up to 1 ms. `"precise"`: a worker thread sleeping in
   * `Atomics.wait` until the exact deadline (no spinning), on the wall clock — for
   * benchmarks with sub-millisecond service times.
   */
  readonly timer?: "clock" | "precise" | undefined
}

/**
 * What the simulator did so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Graph queries received. */
  readonly queries: number
  /** Graph query replies written (recorded bytes or the "no recording" error). */
  readonly replies: number
  /** Graph queries that had no recording. */
  readonly unrecorded: number
  /** Other commands answered (handshake, `INFO`, …). */
  readonly commands: number
  /** Most queries in service at once (never above `workers`). */
  readonly maxInService: number
  /** Queries in service now. */
  readonly inService: number
  /** Connections accepted since start. */
  readonly accepted: number
}

/**
 * A running simulator.
 *
 * @since 0.1.0
 * @category models
 */
export interface Simulator {
  readonly host: "127.0.0.1"
  readonly port: number
  /** `redis://127.0.0.1:<port>` */
  readonly url: string
  readonly workers: number
  /** The service time in microseconds. */
  readonly serviceMicros: number
  readonly stats: Effect.Effect<Stats>
  /** Queries per second a client with `connections` sockets can reach at most. */
  readonly ceiling: (connections: number) => number
}

/**
 * @since 0.1.0
 * @category services
 */
export class FalkorDBSimulator extends Context.Service<FalkorDBSimulator, Simulator>()(
  "@effect-falkordb/testing/FalkorDBSimulator"
) {}

/**
 * @since 0.1.0
 * @category errors
 */
export class SimulatorError extends Data.TaggedError("SimulatorError")<{
  readonly reason: "ListenFailed" | "InvalidOptions" | "MissingRecording"
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The ceiling of a simulation: `min(workers, connections)` queries every `serviceMicros`.
 *
 * @since 0.1.0
 * @category models
 */
export const ceiling = (workers: number, serviceMicros: number, connections: number): number =>
  (Math.min(workers, connections) * 1_000_000) / serviceMicros

const latin1 = new TextDecoder("latin1")
const encode = (text: string) => Buffer.from(text)
const simple = (text: string) => encode(`+${text}\r\n`)
const errorBytes = (text: string) => encode(`-${text.replace(/[\r\n]+/g, " ")}\r\n`)
const bulk = (text: string) => encode(`$${Buffer.byteLength(text)}\r\n${text}\r\n`)
const OK = simple("OK")
const PONG = simple("PONG")

const keyOf = (query: string, compact: boolean) => `${compact ? "c" : "v"}:${query}`

/** One queued request of a connection: its reply and whether it needs a worker slot. */
interface Job {
  readonly reply: Uint8Array
  readonly graph: boolean
  readonly arrival: number
  readonly close: boolean
}

interface Connection {
  readonly socket: Net.Socket
  readonly jobs: Array<Job>
  head: number
  /** A query of this connection is in a slot. */
  busy: boolean
  /** Waiting in the ready queue for a slot. */
  queued: boolean
  /** Simulated time (µs) this connection's head query could start. */
  readyAt: number
  /** Simulated finish (µs) of its last query. */
  lastDone: number
}

interface Slot {
  /** Simulated time (µs) the slot's last query finished (or finishes). */
  freeAt: number
  connection: Connection | undefined
}

/**
 * Starts a simulator on `127.0.0.1` and a free port, for the life of the scope.
 *
 * @example
 * ```ts
 * import * as FalkorDBSimulator from "@effect-falkordb/testing/FalkorDBSimulator"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const recordings = yield* FalkorDBSimulator.benchmarkRecordings
 *   const sim = yield* FalkorDBSimulator.make({ recordings: recordings.all, workers: 4, serviceTime: "1 millis" })
 *   return sim.url // point the client under test here; sim.ceiling(8) is its best case
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("FalkorDBSimulator.make")(function* (options: SimulatorOptions) {
  const workers = options.workers ?? 4
  const serviceMicros = Duration.toMillis(Duration.fromInputUnsafe(options.serviceTime ?? "1 millis")) * 1000
  if (!Number.isSafeInteger(workers) || workers < 1) {
    return yield* new SimulatorError({ reason: "InvalidOptions", message: `workers must be ≥ 1 (got ${workers})` })
  }
  if (!(serviceMicros >= 0) || !Number.isFinite(serviceMicros)) {
    return yield* new SimulatorError({ reason: "InvalidOptions", message: `serviceTime must be finite and ≥ 0` })
  }
  const replies = new Map<string, Uint8Array>()
  for (const r of options.recordings) replies.set(keyOf(r.query, r.compact), r.reply)

  const clock = yield* Clock.Clock
  const fibers = yield* FiberSet.make<void, never>()
  const run = yield* FiberSet.runtime(fibers)<never>()
  const precise = options.timer === "precise"
  const nowMicros = precise ? () => PreciseWake.nowMillis() * 1000 : () => Number(clock.currentTimeNanosUnsafe()) / 1000

  const slots: Array<Slot> = Array.from({ length: workers }, () => ({ freeAt: 0, connection: undefined }))
  const ready: Array<Connection> = []
  const sockets = new Set<Net.Socket>()
  const stats = { queries: 0, replies: 0, unrecorded: 0, commands: 0, maxInService: 0, inService: 0, accepted: 0 }
  let timerDue = Number.POSITIVE_INFINITY
  const corked = new Set<Net.Socket>()

  const write = (connection: Connection, bytes: Uint8Array) => {
    const socket = connection.socket
    if (socket.destroyed) return
    if (!corked.has(socket)) {
      socket.cork()
      corked.add(socket)
    }
    socket.write(bytes)
  }

  /** Answers the jobs at the head of an idle connection that need no slot; queues it for a slot otherwise. */
  const advance = (connection: Connection) => {
    while (connection.head < connection.jobs.length) {
      const job = connection.jobs[connection.head]!
      if (job.graph) {
        connection.readyAt = Math.max(job.arrival, connection.lastDone)
        connection.queued = true
        ready.push(connection)
        return
      }
      connection.head++
      write(connection, job.reply)
      if (job.close) connection.socket.end()
    }
    connection.jobs.length = 0
    connection.head = 0
  }

  const pump = () => {
    const now = nowMicros()
    for (;;) {
      // Hand free slots to ready connections, earliest-free slot first.
      while (ready.length > 0) {
        let best: Slot | undefined
        for (const slot of slots) {
          if (slot.connection === undefined && (best === undefined || slot.freeAt < best.freeAt)) best = slot
        }
        if (best === undefined) break
        const connection = ready.shift()!
        connection.queued = false
        if (connection.socket.destroyed) continue
        const start = Math.max(connection.readyAt, best.freeAt)
        best.freeAt = start + serviceMicros
        best.connection = connection
        connection.busy = true
        stats.inService++
        if (stats.inService > stats.maxInService) stats.maxInService = stats.inService
      }
      // Finish every query due by now, in simulated order.
      let finished = false
      let next: Slot | undefined
      do {
        next = undefined
        for (const slot of slots) {
          if (
            slot.connection !== undefined &&
            slot.freeAt <= now &&
            (next === undefined || slot.freeAt < next.freeAt)
          ) {
            next = slot
          }
        }
        if (next !== undefined) {
          const connection = next.connection!
          next.connection = undefined
          stats.inService--
          stats.replies++
          finished = true
          connection.busy = false
          connection.lastDone = next.freeAt
          const job = connection.jobs[connection.head++]!
          write(connection, job.reply)
          advance(connection)
        }
      } while (next !== undefined)
      if (!finished) break
    }
    for (const socket of corked) socket.uncork()
    corked.clear()
    arm()
  }

  const arm = () => {
    let due = Number.POSITIVE_INFINITY
    for (const slot of slots) if (slot.connection !== undefined && slot.freeAt < due) due = slot.freeAt
    if (precise) {
      if (due !== timerDue) {
        timerDue = due
        waker!.set(Number.isFinite(due) ? due / 1000 : undefined)
      }
      return
    }
    if (due >= timerDue) return
    timerDue = due
    const delay = Math.max(0, due - nowMicros()) / 1000
    run(
      Effect.sleep(Duration.millis(delay)).pipe(
        Effect.andThen(
          Effect.sync(() => {
            if (timerDue === due) timerDue = Number.POSITIVE_INFINITY
            pump()
          })
        )
      )
    )
  }

  const answer = (args: ReadonlyArray<Uint8Array>): { reply: Uint8Array; graph: boolean; close: boolean } => {
    const name = latin1.decode(args[0]!).toUpperCase()
    if (name === "GRAPH.QUERY" || name === "GRAPH.RO_QUERY") {
      stats.queries++
      if (args.length < 3) {
        return {
          reply: errorBytes(`ERR wrong number of arguments for '${name.toLowerCase()}' command`),
          graph: true,
          close: false
        }
      }
      const query = decodeUtf8(args[2]!)
      let compact = false
      for (let i = 3; i < args.length; i++) if (latin1.decode(args[i]!).toLowerCase() === "--compact") compact = true
      const recorded = replies.get(keyOf(query, compact))
      if (recorded !== undefined) return { reply: recorded, graph: true, close: false }
      stats.unrecorded++
      return {
        reply: errorBytes(`ERR simulator has no recording for ${compact ? "--compact " : ""}${JSON.stringify(query)}`),
        graph: true,
        close: false
      }
    }
    stats.commands++
    const sub = args.length > 1 ? latin1.decode(args[1]!).toUpperCase() : ""
    switch (name) {
      case "PING":
        return { reply: args.length > 1 ? bulk(decodeUtf8(args[1]!)) : PONG, graph: false, close: false }
      case "SELECT":
      case "READONLY":
        return { reply: OK, graph: false, close: false }
      case "CLIENT":
        return {
          reply: sub === "SETNAME" || sub === "SETINFO" ? OK : errorBytes(`ERR simulator: unsupported CLIENT ${sub}`),
          graph: false,
          close: false
        }
      case "HELLO":
        // The recordings are RESP2: refuse RESP3 the way a server without it would.
        return {
          reply:
            sub === "" || sub === "2"
              ? encode(
                  "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.2.6\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
                )
              : errorBytes("NOPROTO the simulator speaks RESP2 only"),
          graph: false,
          close: false
        }
      case "INFO":
        return {
          reply: bulk("# Server\r\nredis_version:7.2.6\r\nredis_mode:standalone\r\n"),
          graph: false,
          close: false
        }
      case "QUIT":
        return { reply: OK, graph: false, close: true }
      default:
        return { reply: errorBytes(`ERR simulator: unknown command '${name}'`), graph: false, close: false }
    }
  }

  const onConnection = (socket: Net.Socket) => {
    socket.setNoDelay(true)
    sockets.add(socket)
    stats.accepted++
    const connection: Connection = {
      socket,
      jobs: [],
      head: 0,
      busy: false,
      queued: false,
      readyAt: 0,
      lastDone: 0
    }
    const decoder = new Decoder((request: Reply) => {
      const args = Array.isArray(request) ? (request as ReadonlyArray<Reply>) : []
      const valid = args.length > 0 && args.every((a) => a instanceof Uint8Array)
      const job = valid
        ? { ...answer(args as ReadonlyArray<Uint8Array>), arrival: nowMicros() }
        : {
            reply: errorBytes("ERR Protocol error: expected an array of bulk strings"),
            graph: false,
            close: true,
            arrival: 0
          }
      connection.jobs.push(job)
    })
    socket.on("data", (chunk: Buffer) => {
      const failure = decoder.feed(chunk)
      if (failure !== undefined) {
        connection.jobs.push({
          reply: errorBytes(`ERR Protocol error: ${failure.message}`),
          graph: false,
          close: true,
          arrival: 0
        })
        socket.pause()
      }
      if (!connection.busy && !connection.queued) advance(connection)
      pump()
    })
    socket.on("error", () => {
      // A reset by the peer; "close" follows.
    })
    socket.on("close", () => {
      sockets.delete(socket)
    })
  }

  const waker = precise
    ? yield* Effect.acquireRelease(
        Effect.sync(() =>
          PreciseWake.make(() => {
            timerDue = Number.POSITIVE_INFINITY
            pump()
          })
        ),
        (w) => Effect.promise(() => w.close())
      )
    : undefined

  const server = Net.createServer({ noDelay: true }, onConnection)
  const port = yield* listenLoopback(
    server,
    sockets,
    (cause) => new SimulatorError({ reason: "ListenFailed", message: cause.message, cause })
  )

  const simulator: Simulator = {
    host: "127.0.0.1",
    port,
    url: `redis://127.0.0.1:${port}`,
    workers,
    serviceMicros,
    stats: Effect.sync(() => ({ ...stats })),
    ceiling: (connections) => ceiling(workers, serviceMicros, connections)
  }
  return simulator
})

/**
 * The simulator as a layer.
 *
 * @example
 * ```ts
 * import * as FalkorDBSimulator from "@effect-falkordb/testing/FalkorDBSimulator"
 * import { Effect, Layer } from "effect"
 *
 * const Sim = Layer.unwrap(
 *   Effect.map(FalkorDBSimulator.benchmarkRecordings, (r) =>
 *     FalkorDBSimulator.layer({ recordings: r.all, workers: 4, serviceTime: "500 micros" })
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: SimulatorOptions): Layer.Layer<FalkorDBSimulator, SimulatorError> =>
  Layer.effect(FalkorDBSimulator, make(options))

/**
 * The recording of exactly `request` in a fixture (first match), as a `Recording`.
 *
 * @since 0.1.0
 * @category recordings
 */
export const recordingOf = (
  fixture: FixtureReplay.Fixture,
  request: ReadonlyArray<string>
): Effect.Effect<Recording, SimulatorError> => {
  const key = JSON.stringify(request)
  const exchange = fixture.exchanges.find((e) => JSON.stringify(e.request) === key)
  return exchange === undefined
    ? Effect.fail(
        new SimulatorError({
          reason: "MissingRecording",
          message: `${fixture.scenario} has no exchange ${key}`
        })
      )
    : Effect.succeed({
        query: request[2] ?? "",
        compact: request.slice(3).includes("--compact"),
        reply: Buffer.from(exchange.reply_base64, "base64")
      })
}

/**
 * The recordings the graph benchmark uses, all from FalkorDB 4.18.11 (RESP2):
 *
 * - `returnOne`: `RETURN 1 AS fast` with `--compact` (`slowlog-5`);
 * - `traversal`: `MATCH (a:Person {name: 'Alice'})-[r:KNOWS]->(b:Person) RETURN a AS node,
 *   r AS edge, b AS other` with `--compact` (`values-all-types`): two nodes and an edge, so
 *   clients resolve label, type and property ids through the schema procedures;
 * - `schema`: `CALL db.labels()`, `CALL db.relationshipTypes()`, `CALL db.propertyKeys()` of
 *   the same graph, verbose and compact, as the clients send them to fill their caches.
 *
 * @since 0.1.0
 * @category recordings
 */
export const benchmarkRecordings: Effect.Effect<
  {
    readonly returnOne: Recording
    readonly traversal: Recording
    readonly schema: ReadonlyArray<Recording>
    readonly all: ReadonlyArray<Recording>
  },
  SimulatorError | FixtureReplay.FixtureError
> = Effect.gen(function* () {
  const slowlog = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "slowlog-5")
  const values = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "values-all-types")
  const returnOne = yield* recordingOf(slowlog, ["GRAPH.QUERY", "slowlog-5", "RETURN 1 AS fast", "--compact"])
  const traversal = yield* recordingOf(values, [
    "GRAPH.QUERY",
    "values-all-types",
    "MATCH (a:Person {name: 'Alice'})-[r:KNOWS]->(b:Person) RETURN a AS node, r AS edge, b AS other",
    "--compact"
  ])
  const schema: Array<Recording> = []
  for (const procedure of ["CALL db.labels()", "CALL db.relationshipTypes()", "CALL db.propertyKeys()"]) {
    schema.push(yield* recordingOf(values, ["GRAPH.RO_QUERY", "values-all-types", procedure]))
    schema.push(yield* recordingOf(values, ["GRAPH.RO_QUERY", "values-all-types", procedure, "--compact"]))
  }
  return { returnOne, traversal, schema, all: [returnOne, traversal, ...schema] }
})
