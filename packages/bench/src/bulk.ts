/**
 * Loading side by side (`--only=bulk`): the same node and relationship CSV files (generated
 * for the run, `--bulk-nodes=N --bulk-relationships=M`, default 1M and 2M; `--quick` 20k and
 * 40k) loaded into a real FalkorDB through (a) this client's `BulkLoader` (`GRAPH.BULK`),
 * (b) `falkordb-bulk-loader` (its `falkordb-bulk-insert`, from `FALKORDB_BULK_LOADER` or a venv
 * at `.bulk-loader-venv/`; skipped, saying so, when absent), (c) this client's `Ingest`
 * (batched `UNWIND … CREATE`, relationships matched through an index on the key) and (d) a
 * loop of single `CREATE`s over a sample. Each row: rows/s, client CPU seconds and peak RSS
 * (of this process, sampled every 20 ms, for (a), (c), (d); of the child, from
 * `/usr/bin/time`, for (b)). The loaded graphs are then compared: counts, and the properties
 * and out-degree of a sample of nodes.
 *
 * @since 0.1.0
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as BulkLoader from "@effect-falkordb/graph/BulkLoader"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as Ingest from "@effect-falkordb/graph/Ingest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/**
 * Sizes of the run.
 *
 * @since 0.1.0
 * @category bulk
 */
export interface Options {
  readonly nodes: number
  readonly relationships: number
  /** Nodes created one `CREATE` at a time for (d). */
  readonly sample: number
}

/** A small deterministic generator (mulberry32), so every loader reads the same files. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Writes `Person.csv` and `KNOWS.csv` in chunks (never a whole file in memory). */
const writeFiles = (dir: string, options: Options) => {
  const next = random(24)
  const write = (file: string, header: string, rows: number, row: (i: number) => string) => {
    const fd = Fs.openSync(Path.join(dir, file), "w")
    Fs.writeSync(fd, `${header}\n`)
    let chunk = ""
    for (let i = 0; i < rows; i++) {
      chunk += `${row(i)}\n`
      if (chunk.length > 1 << 20) {
        Fs.writeSync(fd, chunk)
        chunk = ""
      }
    }
    Fs.writeSync(fd, chunk)
    Fs.closeSync(fd)
  }
  write(
    "Person.csv",
    "id,name,age,score",
    options.nodes,
    (i) => `p${i},name ${i},${i % 90},${(next() * 1000).toFixed(3)}`
  )
  write(
    "KNOWS.csv",
    "src,dst,since",
    options.relationships,
    () =>
      `p${Math.floor(next() * options.nodes)},p${Math.floor(next() * options.nodes)},${1990 + Math.floor(next() * 35)}`
  )
}

interface Measured {
  readonly seconds: number
  readonly cpuSeconds: number
  readonly peakRssMb: number
}

/** Runs `effect` measuring wall time, this process's CPU and its peak RSS (sampled). */
const measured = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, Measured], E, R> =>
  Effect.suspend(() => {
    let peak = process.memoryUsage().rss
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    const cpu = process.cpuUsage()
    const start = performance.now()
    return effect.pipe(
      Effect.map((a): [A, Measured] => {
        const used = process.cpuUsage(cpu)
        peak = Math.max(peak, process.memoryUsage().rss)
        return [
          a,
          {
            seconds: (performance.now() - start) / 1000,
            cpuSeconds: (used.user + used.system) / 1e6,
            peakRssMb: peak / 1e6
          }
        ]
      }),
      Effect.ensuring(Effect.sync(() => clearInterval(timer)))
    )
  })

/** Rows of a generated CSV file (no quoting in them), a chunk of lines at a time. */
const csvRecords = (path: string) =>
  Stream.fromAsyncIterable(
    Fs.createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 }) as AsyncIterable<string>,
    (e) => e
  ).pipe(
    Stream.splitLines,
    Stream.drop(1),
    Stream.filter((line) => line.length > 0),
    Stream.map((line) => line.split(","))
  )

const bulkLoaderBinary = (): string | undefined => {
  const candidates = [
    process.env.FALKORDB_BULK_LOADER,
    Path.resolve(import.meta.dirname, "../../../.bulk-loader-venv/bin/falkordb-bulk-insert")
  ]
  return candidates.find((c): c is string => c !== undefined && c.length > 0 && Fs.existsSync(c))
}

interface Row {
  readonly loader: string
  readonly rows: number
  readonly measured: Measured | undefined
  readonly note: string
}

const fmt = (n: number, digits = 1) => n.toFixed(digits)

/**
 * Runs the loaders and returns the markdown section.
 *
 * @since 0.1.0
 * @category bulk
 */
export const run = (options: Options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const server = yield* Embedded.make({ requireModule: true })
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-bulk-bench-"))),
        (d) => Effect.sync(() => Fs.rmSync(d, { recursive: true, force: true }))
      )
      yield* Effect.sync(() => writeFiles(dir, options))
      const people = Path.join(dir, "Person.csv")
      const knows = Path.join(dir, "KNOWS.csv")
      const total = options.nodes + options.relationships
      const rows: Array<Row> = []

      const body = Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        // (a) GRAPH.BULK through this client.
        const [, a] = yield* measured(
          BulkLoader.load(db.connection, "bulk_ts", {
            nodes: [{ input: BulkLoader.csv(people) }],
            relationships: [{ input: BulkLoader.csv(knows) }]
          })
        )
        rows.push({ loader: "(a) BulkLoader (GRAPH.BULK)", rows: total, measured: a, note: "" })

        // (b) falkordb-bulk-loader, a child process.
        const python = bulkLoaderBinary()
        if (python === undefined) {
          rows.push({
            loader: "(b) falkordb-bulk-loader",
            rows: total,
            measured: undefined,
            note: "skipped: set FALKORDB_BULK_LOADER or install it into .bulk-loader-venv/"
          })
        } else {
          const start = performance.now()
          const child = ChildProcess.spawnSync(
            "/usr/bin/time",
            ["-f", "%U %S %M", python, "bulk_py", "-u", server.url, "-n", people, "-r", knows],
            { encoding: "utf8" }
          )
          const seconds = (performance.now() - start) / 1000
          const [user, system, maxKb] = (child.stderr.trim().split("\n").pop() ?? "").split(" ").map(Number)
          rows.push({
            loader: "(b) falkordb-bulk-loader",
            rows: total,
            measured:
              child.status === 0
                ? { seconds, cpuSeconds: (user ?? 0) + (system ?? 0), peakRssMb: ((maxKb ?? 0) * 1024) / 1e6 }
                : undefined,
            note: child.status === 0 ? "" : `failed: ${child.stderr.slice(-300)}`
          })
        }

        // (c) Ingest: nodes, an index on the key, then relationships matched by key.
        const ingestGraph = db.graph("bulk_ingest")
        const [, c] = yield* measured(
          Effect.gen(function* () {
            yield* Ingest.run(
              ingestGraph,
              csvRecords(people).pipe(
                Stream.map(([id, name, age, score]) => ({
                  id: id!,
                  name: name!,
                  age: Number(age),
                  score: Number(score)
                }))
              ),
              { query: yield* Ingest.createNodes("Person"), batchSize: 5000 }
            )
            yield* ingestGraph.indexes.createRange({ label: "Person", properties: ["id"] })
            // The index is built in the background: until it is OPERATIONAL every MATCH scans all nodes.
            yield* ingestGraph.indexes.awaitOperational({ timeout: "5 minutes" })
            yield* Ingest.run(
              ingestGraph,
              csvRecords(knows).pipe(
                Stream.map(([src, dst, since]) => ({ from: src!, to: dst!, properties: { since: Number(since) } }))
              ),
              {
                query: yield* Ingest.createRelationships({
                  type: "KNOWS",
                  from: { label: "Person", key: "id" },
                  to: { label: "Person", key: "id" }
                }),
                batchSize: 5000
              }
            )
          })
        )
        rows.push({ loader: "(c) Ingest (UNWIND … CREATE, 5000/batch)", rows: total, measured: c, note: "" })

        // (d) One CREATE per node, over a sample.
        const single = db.graph("bulk_single")
        const [, d] = yield* measured(
          Effect.forEach(
            Array.from({ length: options.sample }, (_, i) => i),
            (i) => single.query("CREATE (:Person {id: $id, name: $name})", { id: `p${i}`, name: `name ${i}` }),
            { discard: true }
          )
        )
        rows.push({
          loader: `(d) single CREATE loop (${options.sample} nodes)`,
          rows: options.sample,
          measured: d,
          note: ""
        })

        // The graphs are the same: counts, and a sample of nodes' properties and out-degrees.
        const fingerprint = (graph: string) =>
          Effect.map(
            db
              .graph(graph)
              .roQuery(
                "MATCH (p:Person) WHERE p.id IN $ids OPTIONAL MATCH (p)-[k:KNOWS]->() RETURN p.id AS id, p.name AS name, p.age AS age, p.score AS score, count(k) AS out ORDER BY id",
                { ids: Array.from({ length: 50 }, (_, i) => `p${Math.floor((i * options.nodes) / 50)}`) }
              ),
            (r) =>
              JSON.stringify(
                r.rows.map((row) => row.toObject()),
                (_, v) => (typeof v === "bigint" ? `${v}` : v)
              )
          )
        const counts = (graph: string) =>
          Effect.map(
            db
              .graph(graph)
              .roQuery("MATCH (n) WITH count(n) AS nodes MATCH ()-[e]->() RETURN nodes, count(e) AS edges"),
            (r) => `${r.rows[0]?.get("nodes")}/${r.rows[0]?.get("edges")}`
          )
        const graphs = ["bulk_ts", "bulk_ingest", ...(python === undefined ? [] : ["bulk_py"])]
        const checks = yield* Effect.forEach(graphs, (g) =>
          Effect.all([counts(g), fingerprint(g)]).pipe(Effect.orElseSucceed(() => ["missing", "missing"] as const))
        )
        const same = checks.every(([count, print]) => count === checks[0]![0] && print === checks[0]![1])
        return { graphs, checks, same }
      }).pipe(Effect.provide(Layer.fresh(FalkorDB.layer({ url: server.url, connections: 4 }))))
      const { graphs, checks, same } = yield* body

      const lines = [
        `### Loading ${options.nodes} nodes + ${options.relationships} relationships (bulk)`,
        "",
        `Server: FalkorDB ${server.falkordb?.version ?? "?"} on ${server.server.name} ${server.version}. Machine: ${Os.cpus().length} cores.`,
        "",
        "| loader | rows | seconds | rows/s | client CPU s | client peak RSS MB | note |",
        "|---|---:|---:|---:|---:|---:|---|",
        ...rows.map((r) =>
          r.measured === undefined
            ? `| ${r.loader} | ${r.rows} | | | | | ${r.note} |`
            : `| ${r.loader} | ${r.rows} | ${fmt(r.measured.seconds, 2)} | ${fmt(r.rows / r.measured.seconds, 0)} | ${fmt(r.measured.cpuSeconds, 2)} | ${fmt(r.measured.peakRssMb, 0)} | ${r.note} |`
        ),
        "",
        `Graphs compared (nodes/relationships, and 50 sampled nodes' properties and out-degrees): ${graphs
          .map((g, i) => `${g} ${checks[i]![0]}`)
          .join(", ")}: ${same ? "equal" : "DIFFERENT"}.`
      ]
      return lines.join("\n")
    })
  )
