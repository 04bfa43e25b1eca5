/**
 * The real-server graph table with every client in a process of its own: each cell (query,
 * callers, client) runs `graph-profile.ts` in a fresh Node process against one FalkorDB started
 * for the run, the clients of a row alternating (and the one that starts rotating each round).
 *
 * `graph-throughput.ts` runs every client in one process, cells interleaved: fair to noise on
 * the machine, but one client's garbage can be collected (and charged) in the next client's
 * cell, and the JIT sees every client's code at once. An application has one client in its
 * process; this table measures that, at the price of a process start per cell. (On one machine,
 * 2026-12-08, both tables gave the same ratios within their noise.) Beside the two clients runs
 * a floor (`graph-profile.ts --client=raw`): the command pre-encoded once on plain sockets, each
 * reply only framed, so a target below it is one no client can reach on the machine.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
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
  { flag: "falkordb-ts", column: GraphThroughput.FALKORDB_TS },
  // What no client can go below on this machine: the command pre-encoded, replies only framed.
  { flag: "raw", column: "raw sockets (floor)" }
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

/** A sample of a child, with its CPU split (user, system) kept for the table. */
interface Measured extends Harness.Sample {
  readonly userMicros: number
  readonly systemMicros: number
}

/** One row of cells: a query at a caller count, paced to `perSecond` when given. */
interface RowSpec {
  readonly row: string
  readonly query: number
  readonly callers: number
  readonly perSecond?: number | undefined
}

type Samples = Map<string, Map<string, Array<Measured>>>

/**
 * Every row's cells, `runs` rounds: in each round every row runs each client once, in a new
 * process, the client that starts rotating from round to round. Recorded as one baseline table.
 */
const measureRows = (port: number, rows: ReadonlyArray<RowSpec>, options: Options) =>
  Effect.gen(function* () {
    const samples: Samples = new Map()
    for (let r = 0; r < options.runs; r++) {
      for (const spec of rows) {
        for (let j = 0; j < clients.length; j++) {
          const client = clients[(j + r) % clients.length]!
          const result = yield* runChild([
            `--client=${client.flag}`,
            `--query=${queryFlags[spec.query]}`,
            `--callers=${spec.callers}`,
            `--seconds=${options.seconds}`,
            `--warmup=${options.warmupSeconds}`,
            `--port=${port}`,
            `--graph=${GRAPH}`,
            "--setup=none",
            "--json",
            ...(spec.perSecond === undefined ? [] : [`--rate=${spec.perSecond}`])
          ])
          Harness.pushSample(samples, spec.row, client.column, {
            ...result,
            cpuMicros: result.userMicros + result.systemMicros
          })
        }
      }
    }
    Harness.recordTable(samples)
    return samples
  })

const [OURS, THEIRS, FLOOR] = [clients[0]!.column, clients[1]!.column, clients[2]!.column]

const cellsOf = (samples: Samples, row: string, column: string) => samples.get(row)?.get(column) ?? []

/** The median over rounds of `of(column) ÷ of(falkordb-ts)`, both from the same round. */
const ratioOf = (samples: Samples, row: string, of: (sample: Measured) => number, column = OURS) => {
  const bs = cellsOf(samples, row, THEIRS)
  return Harness.median(cellsOf(samples, row, column).map((sample, i) => of(sample) / of(bs[i]!)))
}

const microsOf = (samples: Samples, row: string, column: string, of: (sample: Measured) => number) =>
  Harness.median(cellsOf(samples, row, column).map((sample) => of(sample) / Math.max(sample.ops, 1))).toFixed(1)

/** `total (user + system)` of a column's median CPU µs per query. */
const cpuText = (samples: Samples, row: string, column: string) =>
  `${microsOf(samples, row, column, (s) => s.cpuMicros ?? Number.NaN)} (${microsOf(samples, row, column, (s) => s.userMicros)} + ${microsOf(samples, row, column, (s) => s.systemMicros)})`

const renderRows = (samples: Samples, rows: ReadonlyArray<RowSpec>, paced: boolean) =>
  Harness.table(
    [
      "callers",
      ...(paced ? ["paced to q/s"] : []),
      `${OURS} q/s`,
      `${THEIRS} q/s`,
      "q/s ours ÷ falkordb-ts",
      "CPU µs/query ours (user + system)",
      "CPU µs/query falkordb-ts (user + system)",
      "CPU ours ÷ falkordb-ts",
      "CPU µs/query raw sockets (user + system)",
      "CPU raw ÷ falkordb-ts"
    ],
    rows.map((spec) => [
      String(spec.callers),
      ...(paced ? [Harness.formatRate(spec.perSecond ?? Number.NaN)] : []),
      Harness.formatRate(Harness.median(cellsOf(samples, spec.row, OURS).map(Harness.rate))),
      Harness.formatRate(Harness.median(cellsOf(samples, spec.row, THEIRS).map(Harness.rate))),
      Harness.formatRatio(ratioOf(samples, spec.row, Harness.rate)),
      cpuText(samples, spec.row, OURS),
      cpuText(samples, spec.row, THEIRS),
      Harness.formatRatio(ratioOf(samples, spec.row, Harness.cpuPerOp)),
      cpuText(samples, spec.row, FLOOR),
      Harness.formatRatio(ratioOf(samples, spec.row, Harness.cpuPerOp, FLOOR))
    ])
  )

/**
 * Runs the table and renders it: full speed for both queries, then the traversal from 8
 * callers with both clients paced to `GraphThroughput.EQUAL_RATE_SHARE` of falkordb-ts's
 * full-speed rate (at full speed this client drives the shared 2-core server harder, and
 * every syscall then costs more). Both are recorded for `--save`/`--compare`.
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
      const fullSpeed: Array<RowSpec> = GraphThroughput.queries.flatMap((query, q) =>
        callerCounts.map((callers) => ({ row: rowOf(query.name, callers), query: q, callers }))
      )
      const full = yield* measureRows(server.port, fullSpeed, options)
      const traversal = GraphThroughput.queries[1]!
      const paced: Array<RowSpec> = []
      for (const callers of callerCounts) {
        if (callers < 8) continue
        const theirs = Harness.median(cellsOf(full, rowOf(traversal.name, callers), THEIRS).map(Harness.rate))
        const perSecond = Math.round(GraphThroughput.EQUAL_RATE_SHARE * theirs)
        if (perSecond > 0)
          paced.push({ row: `${rowOf(traversal.name, callers)} @ ${perSecond}/s`, query: 1, callers, perSecond })
      }
      const equal = paced.length === 0 ? undefined : yield* measureRows(server.port, paced, options)
      const sections = [
        `### Graph throughput, one client per process: real FalkorDB ${server.falkordb?.version} (${server.server.name}-server ${server.version})`,
        "",
        `Each cell is a fresh Node process (\`graph-profile.ts\`) that runs ${options.warmupSeconds} s unmeasured, ` +
          `then ${options.seconds} s measured; ${options.runs} rounds, the clients of a row one after the other, ` +
          `the first rotating each round. CPU is the child's own (\`process.cpuUsage\`) over the ` +
          `measured seconds; ratios are medians of the ratios within a round. "Raw sockets" is a floor, not a ` +
          `client: the command pre-encoded once, written on up to 8 plain sockets (one caller each), each reply ` +
          `only framed by the RESP decoder.`
      ]
      for (const [q, query] of GraphThroughput.queries.entries()) {
        sections.push(
          "",
          `#### \`${query.name}\``,
          "",
          renderRows(
            full,
            fullSpeed.filter((spec) => spec.query === q),
            false
          )
        )
      }
      if (equal !== undefined) {
        sections.push(
          "",
          `#### \`traversal\` at one rate: both clients paced to ${GraphThroughput.EQUAL_RATE_SHARE} × falkordb-ts's full-speed rate above`,
          "",
          renderRows(equal, paced, true)
        )
      }
      return sections.join("\n")
    })
  )
