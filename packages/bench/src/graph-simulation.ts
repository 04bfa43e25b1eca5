/**
 * The simulated FalkorDB of the graph throughput table, in a process of its own so that its
 * CPU time is not counted as the client's and its event loop does not compete with the
 * client's: `spawn` forks this file, which starts `FalkorDBSimulator` (from the testing
 * package) and talks to the parent over the IPC channel — the port when listening, the
 * stats on request — until the parent disconnects.
 *
 * `inProcess` starts the same simulator in the calling process (tests, and Node versions
 * that cannot run this file as a child).
 *
 * @since 0.1.0
 */
import * as FalkorDBSimulator from "@effect-falkordb/testing/FalkorDBSimulator"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Url from "node:url"

/**
 * A running simulation, wherever it runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Simulation {
  readonly port: number
  readonly url: string
  readonly workers: number
  readonly serviceMicros: number
  /** The simulator's counters and the CPU time (µs) of the process it runs in. */
  readonly stats: Effect.Effect<FalkorDBSimulator.Stats & { readonly cpuMicros: number }, unknown>
  /** Queries per second a client with `connections` sockets can reach at most. */
  readonly ceiling: (connections: number) => number
  /** Where it runs: "child process" or "in process". */
  readonly where: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SimulationOptions {
  readonly workers: number
  readonly serviceMicros: number
}

// Replies leave when their query is due, to the microsecond: Node's 1 ms timers would hold
// them back and make latency-bound cells measure the timer.
const timer = "precise" as const

/**
 * The simulator in this process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inProcess = (options: SimulationOptions): Effect.Effect<Simulation, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const recordings = yield* FalkorDBSimulator.benchmarkRecordings
    const sim = yield* FalkorDBSimulator.make({
      recordings: recordings.all,
      workers: options.workers,
      serviceTime: Duration.micros(BigInt(Math.round(options.serviceMicros))),
      timer
    })
    return {
      ...sim,
      where: "in process",
      stats: Effect.map(sim.stats, (stats) => {
        const cpu = process.cpuUsage()
        return { ...stats, cpuMicros: cpu.user + cpu.system }
      })
    }
  })

type Stats = FalkorDBSimulator.Stats & { readonly cpuMicros: number }

type Message = { readonly port: number } | { readonly stats: Stats } | { readonly error: string }

/**
 * Whether this Node can run the simulator's TypeScript file as a child process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const canSpawn: boolean = (process.features as { typescript?: unknown }).typescript !== undefined

/**
 * The simulator in a child process (this file, run by the same Node with the workspace's
 * source condition), stopped when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn = (options: SimulationOptions): Effect.Effect<Simulation, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.fork(
          Url.fileURLToPath(import.meta.url),
          ["--serve", String(options.workers), String(options.serviceMicros)],
          { execArgv: ["--conditions=@effect-falkordb/source"], stdio: ["ignore", "inherit", "inherit", "ipc"] }
        )
      ),
      (child) =>
        Effect.callback<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          child.once("exit", () => resume(Effect.void))
          child.disconnect()
        })
    )
    let pendingStats: Array<(stats: Stats) => void> = []
    const port = yield* Effect.callback<number, Error>((resume) => {
      child.on("message", (message: Message) => {
        if ("port" in message) resume(Effect.succeed(message.port))
        else if ("error" in message) resume(Effect.fail(new Error(`simulator: ${message.error}`)))
        else if ("stats" in message) {
          const waiting = pendingStats
          pendingStats = []
          for (const w of waiting) w(message.stats)
        }
      })
      child.once("exit", (code) => resume(Effect.fail(new Error(`simulator exited with ${code}`))))
    })
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      workers: options.workers,
      serviceMicros: options.serviceMicros,
      where: "child process",
      ceiling: (connections: number) => FalkorDBSimulator.ceiling(options.workers, options.serviceMicros, connections),
      stats: Effect.callback<Stats>((resume) => {
        pendingStats.push((stats) => resume(Effect.succeed(stats)))
        child.send("stats")
      })
    }
  })

/**
 * The simulator for a benchmark: in a child process when this Node can run it, otherwise
 * in this process (said in the table's heading through `where`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: SimulationOptions): Effect.Effect<Simulation, unknown, Scope.Scope> =>
  canSpawn ? spawn(options) : inProcess(options)

// Child side: `node graph-simulation.ts --serve <workers> <serviceMicros>`.
if (process.argv[2] === "--serve" && process.send !== undefined) {
  const send = process.send.bind(process)
  const workers = Number(process.argv[3])
  const serviceMicros = Number(process.argv[4])
  Effect.runFork(
    Effect.scoped(
      Effect.gen(function* () {
        const sim = yield* inProcess({ workers, serviceMicros })
        process.on("message", (message) => {
          if (message === "stats") Effect.runPromise(sim.stats).then((stats) => send({ stats }))
        })
        send({ port: sim.port })
        yield* Effect.callback<void>((resume) => {
          process.once("disconnect", () => resume(Effect.void))
        })
      })
    ).pipe(
      Effect.catchCause((cause) => Effect.sync(() => send({ error: String(cause) }))),
      Effect.ensuring(Effect.sync(() => process.exit(0)))
    )
  )
}
