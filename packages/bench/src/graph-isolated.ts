/**
 * The real-server graph table with every client in a process of its own: each cell (query,
 * callers, client) runs `graph-profile.ts` in a fresh Node process against one FalkorDB started
 * for the run, the clients of a row alternating (and the one that starts rotating each round).
 *
 * `graph-throughput.ts` runs every client in one process, cells interleaved: fair to noise on
 * the machine, but one client's garbage is collected (and charged) in the next client's cell,
 * and the JIT sees every client's code at once. An application has one client in its process;
 * this table measures that, at the price of a process start per cell.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Baseline from "./baseline.ts"
import * as GraphThroughput from "./graph-throughput.ts"
import * as Harness from "./harness.ts"
import * as RealFalkorDB from "./realFalkorDB.ts"

/**
 * The clients compared, as `graph-profile.ts --client=` names them, with their column labels.
 *
 * @since 0.1.0
 * @category graph
 */
export const clients: ReadonlyArray<{ readonly flag: string; readonly column: string }> = [
  { flag: "ours", column: "ours (FalkorDB.layer)" },
  { flag: "falkordb-ts", column: GraphThroughput.FALKORDB_TS }
]

/** `graph-profile.ts --query=` names of the table's queries, in `GraphThroughput.queries` order. */
const queryFlags: ReadonlyArray<string> = ["return1", "traversal"]

/**
 * Options of the isolated table.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Rounds: each cell runs once per round, in a new process. */
  readonly runs: number
  /** Measured seconds per cell. */
  readonly seconds: number
  /** Seconds each process runs before measuring (code optimised, caches filled). */
  readonly warmupSeconds: number
  readonly callerCounts?: ReadonlyArray<number> | undefined
  /** Path of the FalkorDB module; default: the one Embedded finds (skipped when none). */
  readonly module?: string | undefined
}

interface ChildResult {
  readonly ops: number
  readonly seconds: number
  readonly userMicros: number
  readonly systemMicros: number
}

const GRAPH = "bench-isolated"

const profileScript = new URL("./graph-profile.ts", import.meta.url).pathname

/** One cell in a new process of this Node, reading the workspace's sources (as `pnpm bench` does). */
const runChild = (args: ReadonlyArray<string>): Effect.Effect<ChildResult, Error> =>
  Effect.callback<ChildResult, Error>((resume) => {
    const child = execFile(
      process.execPath,
      ["--conditions=@effect-falkordb/source", profileScript, ...args],
      { timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) return resume(Effect.fail(new Error(`graph-profile ${args.join(" ")}: ${error.message}\n${stderr}`)))
        const line = stdout.trim().split("\n").pop() ?? ""
        try {
          resume(Effect.succeed(JSON.parse(line) as ChildResult))
        } catch {
          resume(Effect.fail(new Error(`graph-profile ${args.join(" ")} printed no result: ${stdout}${stderr}`)))
        }
      }
    )
    return Effect.sync(() => child.kill())
  })

const rowOf = (query: string, callers: number) => `${query} · ${callers}`

/**
 * Runs the table and renders it; recorded for `--save`/`--compare` like every other table.
 *
 * @since 0.1.0
 * @category graph
 */
export const run = (options: Options): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const found = yield* RealFalkorDB.start(options.module)
      if ("skipped" in found)
        return `### Graph throughput, one client per process: real FalkorDB\n\nSkipped: ${found.skipped}.`
      const { server } = found
      const setup = yield* RedisConnection.makeSingle({ url: server.url })
      yield* setup.execute(["GRAPH.QUERY", GRAPH, GraphThroughput.SETUP])
      const callerCounts = options.callerCounts ?? GraphThroughput.callerCounts
      const samples = new Map<string, Map<string, Array<Harness.Sample>>>()
      for (let r = 0; r < options.runs; r++) {
        for (const [q, query] of GraphThroughput.queries.entries()) {
          for (const callers of callerCounts) {
            const row = rowOf(query.name, callers)
            for (let j = 0; j < clients.length; j++) {
              const client = clients[(j + r) % clients.length]!
              const result = yield* runChild([
                `--client=${client.flag}`,
                `--query=${queryFlags[q]}`,
                `--callers=${callers}`,
                `--seconds=${options.seconds}`,
                `--warmup=${options.warmupSeconds}`,
                `--port=${server.port}`,
                `--graph=${GRAPH}`,
                "--setup=none",
                "--json"
              ])
              let columns = samples.get(row)
              if (columns === undefined) samples.set(row, (columns = new Map()))
              let list = columns.get(client.column)
              if (list === undefined) columns.set(client.column, (list = []))
              list.push({
                ops: result.ops,
                seconds: result.seconds,
                cpuMicros: result.userMicros + result.systemMicros
              })
            }
          }
        }
      }
      const table = Baseline.beginTable()
      for (const [row, columns] of samples) {
        for (const [column, list] of columns) {
          Baseline.record({
            table,
            row,
            column,
            cpuMicrosPerOp: Harness.median(list.map(Harness.cpuPerOp)),
            opsPerSecond: Harness.median(list.map(Harness.rate))
          })
        }
      }
      const [ours, theirs] = [clients[0]!.column, clients[1]!.column]
      const ratioOf = (row: string, of: (sample: Harness.Sample) => number) => {
        const as = samples.get(row)?.get(ours) ?? []
        const bs = samples.get(row)?.get(theirs) ?? []
        return Harness.median(as.map((sample, i) => of(sample) / of(bs[i]!)))
      }
      const sections = [
        `### Graph throughput, one client per process: real FalkorDB ${server.falkordb?.version} (${server.server.name}-server ${server.version})`,
        "",
        `Each cell is a fresh Node process (\`graph-profile.ts\`) that runs ${options.warmupSeconds} s unmeasured, ` +
          `then ${options.seconds} s measured; ${options.runs} rounds, the two clients of a row one after the other, ` +
          `the first rotating each round. CPU is the child's own (\`process.cpuUsage\`, user + system) over the ` +
          `measured seconds; ratios are medians of the ratios of a round's pair.`
      ]
      for (const query of GraphThroughput.queries) {
        sections.push(
          "",
          `#### \`${query.name}\``,
          "",
          Harness.table(
            [
              "callers",
              `${ours} q/s`,
              `${theirs} q/s`,
              "q/s ours ÷ falkordb-ts",
              "CPU µs/query (ours / falkordb-ts)",
              "CPU ours ÷ falkordb-ts"
            ],
            callerCounts.map((callers) => {
              const row = rowOf(query.name, callers)
              const list = (column: string) => samples.get(row)?.get(column) ?? []
              return [
                String(callers),
                Harness.formatRate(Harness.median(list(ours).map(Harness.rate))),
                Harness.formatRate(Harness.median(list(theirs).map(Harness.rate))),
                Harness.formatRatio(ratioOf(row, Harness.rate)),
                `${Harness.median(list(ours).map(Harness.cpuPerOp)).toFixed(1)} / ${Harness.median(list(theirs).map(Harness.cpuPerOp)).toFixed(1)}`,
                Harness.formatRatio(ratioOf(row, Harness.cpuPerOp))
              ]
            })
          )
        )
      }
      return sections.join("\n")
    })
  )
