/**
 * A large result from a real FalkorDB: `MATCH (n:Item) RETURN n` over N nodes (default 200,000,
 * each `{id, name, score}`), read by a fresh client process per variant and run:
 *
 * - `ours query`: `Graph.roQuery`, every row in memory (`QueryResult`);
 * - `ours stream`: `Graph.roStream`, rows decoded as their bytes arrive, drained;
 * - `ours queryAs`: `Graph.roQueryAs` with an `effect/Schema` of the node's properties, drained;
 * - `falkordb-ts`: falkordb-ts 6.6's `roQuery`, every row in memory.
 *
 * Per variant (median of the runs): time to the last row, the client's CPU, and its peak RSS
 * above its baseline (RSS after connecting and a warm-up query) against the bytes the server
 * sent for the reply (`INFO stats` `total_net_output_bytes` before and after).
 *
 * Run: node --conditions=@effect-falkordb/source packages/bench/src/graph-large.ts [--nodes=N] [--runs=R]
 *
 * @since 0.1.0
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { nodeProperties } from "@effect-falkordb/graph/Value"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { replyToString } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { FalkorDB as FalkorTs } from "falkordb"
import * as ChildProcess from "node:child_process"
import * as Harness from "./harness.ts"
import * as RealFalkorDB from "./realFalkorDB.ts"

const GRAPH = "bench-large"
const QUERY = "MATCH (n:Item) RETURN n"
const VARIANTS = ["ours query", "ours stream", "ours queryAs", "falkordb-ts"] as const
type Variant = (typeof VARIANTS)[number]

interface Measured {
  readonly variant: Variant
  readonly rows: number
  readonly millis: number
  readonly cpuMillis: number
  readonly peakAboveBaselineMB: number
}

const Item = Schema.Struct({ id: Schema.Number, name: Schema.String, score: Schema.Number })
const ItemRow = Schema.Struct({ n: nodeProperties(Item) })

/** One client process: one read of the whole result, printed as JSON. */
const client = (variant: Variant, port: number): Effect.Effect<Measured, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      let read: Effect.Effect<number, unknown>
      if (variant === "falkordb-ts") {
        const db = yield* Effect.acquireRelease(
          Effect.tryPromise(() => FalkorTs.connect({ socket: { host: "127.0.0.1", port } })),
          (db) => Effect.promise(() => db.close().catch(() => undefined))
        )
        const graph = db.selectGraph(GRAPH)
        yield* Effect.tryPromise(() => graph.roQuery("MATCH (n:Item) RETURN n LIMIT 100"))
        read = Effect.tryPromise(() => graph.roQuery(QUERY)).pipe(Effect.map((result) => result.data?.length ?? 0))
      } else {
        const context = yield* Layer.build(FalkorDB.layer({ url: `redis://127.0.0.1:${port}`, strategy: "single" }))
        const g = (context.mapUnsafe.get(FalkorDB.FalkorDB.key) as FalkorDB.FalkorDB["Service"]).graph(GRAPH)
        yield* g.roQuery("MATCH (n:Item) RETURN n LIMIT 100")
        read =
          variant === "ours query"
            ? Effect.map(g.roQuery(QUERY), (result) => result.rows.length)
            : variant === "ours stream"
              ? Stream.runFold(
                  g.roStream(QUERY),
                  () => 0,
                  (n) => n + 1
                )
              : Stream.runFold(
                  g.roQueryAs(ItemRow, QUERY),
                  () => 0,
                  (n) => n + 1
                )
      }
      globalThis.gc?.()
      const baseline = process.memoryUsage().rss
      const cpu = process.cpuUsage()
      const start = performance.now()
      const rows = yield* read
      const millis = performance.now() - start
      const used = process.cpuUsage(cpu)
      const peak = process.resourceUsage().maxRSS * 1024
      return {
        variant,
        rows,
        millis,
        cpuMillis: (used.user + used.system) / 1000,
        peakAboveBaselineMB: Math.max(0, peak - baseline) / 1048576
      }
    })
  )

const netOutput = (connection: RedisConnection.RedisConnection["Service"]) =>
  Effect.map(connection.execute(["INFO", "stats"]), (info) =>
    Number(/total_net_output_bytes:(\d+)/.exec(replyToString(info as string) ?? "")?.[1] ?? Number.NaN)
  )

/**
 * Loads the graph into a FalkorDB started for the run, then runs every variant `runs` times,
 * each in a fresh client process; the table as markdown. Skipped, saying why, without a module.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: { readonly nodes?: number; readonly runs?: number } = {}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const nodes = options.nodes ?? 200_000
      const runs = options.runs ?? 3
      const found = yield* RealFalkorDB.start()
      if ("skipped" in found) return `### A large result from a real FalkorDB\n\nSkipped: ${found.skipped}.`
      const { server } = found
      const admin = yield* RedisConnection.makeSingle({ url: server.url })
      yield* admin.execute([
        "GRAPH.QUERY",
        GRAPH,
        `UNWIND range(1, ${nodes}) AS i CREATE (:Item {id: i, name: 'item-' + toString(i), score: i * 0.5})`
      ])
      const samples = new Map<Variant, Array<Measured & { readonly wireMB: number }>>()
      for (let r = 0; r < runs; r++) {
        for (const variant of VARIANTS) {
          const before = yield* netOutput(admin)
          const result = ChildProcess.spawnSync(
            process.execPath,
            ["--expose-gc", ...process.execArgv, import.meta.filename, "--client", variant, `--port=${server.port}`],
            { encoding: "utf8", timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }
          )
          const after = yield* netOutput(admin)
          const line = result.stdout.trim().split("\n").pop()
          if (result.status !== 0 || line === undefined || line === "") {
            return yield* Effect.fail(new Error(`graph-large ${variant} failed: ${result.stderr}`))
          }
          const measured = JSON.parse(line) as Measured
          if (measured.rows !== nodes) {
            return yield* Effect.fail(new Error(`graph-large ${variant} read ${measured.rows} rows, not ${nodes}`))
          }
          const list = samples.get(variant) ?? []
          list.push({ ...measured, wireMB: (after - before) / 1048576 })
          samples.set(variant, list)
        }
      }
      const lines = [
        `### A large result from a real FalkorDB ${server.falkordb?.version} (${server.server.name}-server ${server.version})`,
        "",
        `\`${QUERY}\` over ${nodes.toLocaleString("en-US")} nodes \`{id, name, score}\`, one fresh client process per variant and run, ${runs} runs, medians. ` +
          `Peak RSS is \`maxRSS\` above the client's RSS after connecting and a warm-up query; the wire size is what the server sent (\`total_net_output_bytes\`). ` +
          `Machine: ${Harness.machine()}.`,
        "",
        "| variant | time ms | client CPU ms | CPU µs/row | peak RSS above baseline MB | ÷ wire size | time ÷ falkordb-ts | CPU ÷ falkordb-ts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|"
      ]
      const med = (variant: Variant, pick: (m: Measured & { readonly wireMB: number }) => number) =>
        Harness.median((samples.get(variant) ?? []).map(pick))
      for (const variant of VARIANTS) {
        const wire = med(variant, (m) => m.wireMB)
        lines.push(
          `| ${variant} | ${med(variant, (m) => m.millis).toFixed(0)} | ${med(variant, (m) => m.cpuMillis).toFixed(0)} | ${((med(variant, (m) => m.cpuMillis) * 1000) / nodes).toFixed(2)} | ${med(variant, (m) => m.peakAboveBaselineMB).toFixed(0)} | ${(med(variant, (m) => m.peakAboveBaselineMB) / wire).toFixed(2)}x | ${(med(variant, (m) => m.millis) / med("falkordb-ts", (m) => m.millis)).toFixed(2)}x | ${(med(variant, (m) => m.cpuMillis) / med("falkordb-ts", (m) => m.cpuMillis)).toFixed(2)}x |`
        )
      }
      lines.push("", `Wire size of the reply: ${med("ours query", (m) => m.wireMB).toFixed(1)} MB.`)
      return lines.join("\n")
    })
  )

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const argv = process.argv.slice(2)
  const flag = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  const clientAt = argv.indexOf("--client")
  const program =
    clientAt !== -1
      ? Effect.map(client(argv[clientAt + 1] as Variant, Number(flag("port"))), (m) => JSON.stringify(m))
      : run({
          ...(flag("nodes") === undefined ? {} : { nodes: Number(flag("nodes")) }),
          ...(flag("runs") === undefined ? {} : { runs: Number(flag("runs")) })
        })
  Effect.runPromise(program).then(
    (text) => {
      console.log(text)
      process.exit(0)
    },
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
}
