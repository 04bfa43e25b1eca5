/**
 * Compact graph-reply decoding: a 100 000-row `--compact` reply with 5 columns (a node with
 * 3 properties, integer, string, double, boolean), from bytes to values.
 *
 * - ours, parser: the resp Decoder (64 KiB chunks) + `CompactReply.parseEnvelope` +
 *   `decodeRow` for every row, rows consumed one by one and not retained;
 * - ours, Graph.roStream: the same reply through the graph client (`FalkorDB.layerFromRedis`
 *   over an in-memory RedisConnection that replies with the decoded frame), rows counted;
 * - falkordb-ts: `redis-parser` (strings) decoding the same bytes, the node-redis
 *   `transformReply` shape, and the official client's `Graph` value parser (its private
 *   `#parseReply`, reached through `Graph.query` with a fake client).
 *
 * Rows/s are medians of interleaved in-process runs; peak memory is the max RSS of a fresh
 * child process that runs the variant once (`process.resourceUsage().maxRSS`).
 *
 * Run: node --conditions=@effect-falkordb/source packages/bench/src/graph-decode.ts [--quick]
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as CompactReply from "../../graph/src/internal/CompactReply.ts"
import { makeService, RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as os from "node:os"

const require = createRequire(import.meta.url)
const RedisParser = require("redis-parser") as new (options: {
  returnReply: (reply: unknown) => void
  returnError: (error: unknown) => void
  returnBuffers?: boolean
}) => { execute(buffer: Buffer): void }
const { Graph: FalkorTsGraph } = require("falkordb") as {
  Graph: new (
    client: unknown,
    name: string
  ) => { query(q: string): Promise<{ data?: ReadonlyArray<Record<string, unknown>> }> }
}

const ROWS = 100_000

/**
 * The benchmark reply, as RESP bytes.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const compactReply = (rows: number): Buffer => {
  const parts: Array<string> = []
  const cell = (type: number, payload: string) => `*2\r\n:${type}\r\n${payload}`
  parts.push(`*3\r\n*5\r\n${["n", "i", "s", "d", "b"].map((c) => `*2\r\n:1\r\n$1\r\n${c}\r\n`).join("")}*${rows}\r\n`)
  for (let r = 0; r < rows; r++) {
    const name = `user${r}`
    const node =
      `*3\r\n:${r}\r\n*1\r\n:0\r\n*3\r\n` +
      `*3\r\n:0\r\n:2\r\n$${name.length}\r\n${name}\r\n` +
      `*3\r\n:1\r\n:3\r\n:${20 + (r % 60)}\r\n` +
      `*3\r\n:2\r\n:5\r\n$4\r\n1.25\r\n`
    const s = `row-${r}`
    parts.push(
      `*5\r\n${cell(8, node)}${cell(3, `:${r}\r\n`)}${cell(2, `$${s.length}\r\n${s}\r\n`)}${cell(5, "$8\r\n3.141593\r\n")}${cell(4, r % 2 === 0 ? "$4\r\ntrue\r\n" : "$5\r\nfalse\r\n")}`
    )
  }
  parts.push("*2\r\n$19\r\nCached execution: 0\r\n$52\r\nQuery internal execution time: 0.067516 milliseconds\r\n")
  return Buffer.from(parts.join(""))
}

const chunked = (bytes: Buffer, size: number): ReadonlyArray<Buffer> => {
  const out: Array<Buffer> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

const names: CompactReply.Names = (kind, id) =>
  ({ labels: ["Person"], relationshipTypes: [], propertyKeys: ["name", "age", "score"] })[kind][id]

const decodeBytes = (chunks: ReadonlyArray<Buffer>): Reply => {
  let reply: Reply | undefined
  const decoder = new Decoder((r) => {
    reply = r
  })
  for (const chunk of chunks) decoder.feed(chunk)
  if (reply === undefined) throw new Error("no reply decoded")
  return reply
}

/** Ours, parser only: seconds for bytes → all rows decoded (not retained). */
const timeOurs = (chunks: ReadonlyArray<Buffer>): number => {
  const start = process.hrtime.bigint()
  const envelope = CompactReply.parseEnvelope(decodeBytes(chunks), "bench", "GRAPH.RO_QUERY")
  let seen = 0
  for (let i = 0; i < envelope.rows.length; i++) {
    const values = CompactReply.decodeRow(envelope.rows[i]!, i, envelope.columns, names)
    if (!CompactReply.isSchemaMiss(values) && values.length === 5) seen++
  }
  if (seen !== ROWS) throw new Error(`decoded ${seen} rows`)
  return Number(process.hrtime.bigint() - start) / 1e9
}

const schemaReply = (column: string, values: ReadonlyArray<string>): Reply => [
  [Buffer.from(column)],
  values.map((v) => [Buffer.from(v)]),
  [Buffer.from("Cached execution: 0")]
]

/** One row with one node that uses every schema id of the benchmark reply. */
const warmReply: Reply = [
  [[1, Buffer.from("n")]],
  [
    [
      [
        8,
        [
          0,
          [0],
          [
            [0, 2, Buffer.from("x")],
            [1, 3, 1],
            [2, 5, Buffer.from("1")]
          ]
        ]
      ]
    ]
  ],
  [Buffer.from("Cached execution: 0")]
]

/** Ours through the graph client: an in-memory connection that decodes the bytes per query. */
const timeOursStream = (chunks: ReadonlyArray<Buffer>): Promise<number> => {
  const connection = makeService({
    info: { strategy: "mock", connections: 1, window: 1, target: "bench", protocol: 2 },
    execute: (command) =>
      Effect.sync(() =>
        command[2] === "CALL db.labels()"
          ? schemaReply("label", ["Person"])
          : command[2] === "CALL db.propertyKeys()"
            ? schemaReply("propertyKey", ["name", "age", "score"])
            : command[2] === "WARM"
              ? warmReply
              : decodeBytes(chunks)
      ),
    submit: () => Effect.die("unused"),
    pipeline: () => Effect.die("unused"),
    executeAll: () => Effect.die("unused"),
    withExclusive: () => Effect.die("unused")
  })
  const program = Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    const graph = db.graph("bench")
    yield* graph.roQuery("WARM") // fills the schema cache outside the timing
    const start = process.hrtime.bigint()
    const count = yield* Stream.runCount(graph.roStream("MATCH (n) RETURN n, n.i AS i, n.s AS s, n.d AS d, n.b AS b"))
    if (count !== ROWS) throw new Error(`streamed ${count} rows`)
    return Number(process.hrtime.bigint() - start) / 1e9
  })
  return Effect.runPromise(
    program.pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(Layer.succeed(RedisConnection, connection)))
  )
}

/** falkordb-ts: redis-parser (strings) + transformReply + the official Graph value parser. */
const makeTheirs = (chunks: ReadonlyArray<Buffer>) => {
  const decode = (): ReadonlyArray<unknown> => {
    let reply: ReadonlyArray<unknown> | undefined
    const parser = new RedisParser({
      returnReply: (r) => {
        reply = r as ReadonlyArray<unknown>
      },
      returnError: (e) => {
        throw e
      },
      returnBuffers: false
    })
    for (const chunk of chunks) parser.execute(chunk)
    return reply!
  }
  const client = {
    query: async () => {
      const reply = decode()
      return { headers: reply[0], data: reply[1], metadata: reply[2] }
    },
    roQuery: async (_graph: string, query: string) => ({
      data: query.includes("labels")
        ? [["Person"]]
        : query.includes("propertyKeys")
          ? [["name"], ["age"], ["score"]]
          : []
    })
  }
  const graph = new FalkorTsGraph(client, "bench")
  return async (): Promise<number> => {
    const start = process.hrtime.bigint()
    const result = await graph.query("MATCH (n) RETURN n")
    if (result.data?.length !== ROWS) throw new Error(`falkordb-ts parsed ${result.data?.length} rows`)
    return Number(process.hrtime.bigint() - start) / 1e9
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * One result row.
 *
 * @since 0.1.0
 * @category models
 */
export interface GraphDecodeRow {
  readonly variant: string
  readonly rowsPerSecond: number
  readonly seconds: number
  readonly peakRssMB: number | undefined
  /** Peak RSS of a process that only builds the reply bytes. */
  readonly baselineRssMB: number | undefined
}

const variants = ["ours-parser", "ours-stream", "falkordb-ts"] as const
type Variant = (typeof variants)[number] | "baseline"

const runOnce = async (variant: Variant, chunks: ReadonlyArray<Buffer>): Promise<number> => {
  switch (variant) {
    case "ours-parser":
      return timeOurs(chunks)
    case "ours-stream":
      return timeOursStream(chunks)
    case "falkordb-ts":
      return makeTheirs(chunks)()
    case "baseline":
      return 0
  }
}

/** Max RSS of a fresh process that builds the reply and decodes it once with `variant`. */
const peakRss = (variant: Variant): number | undefined => {
  const result = ChildProcess.spawnSync(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--child", variant],
    {
      encoding: "utf8",
      timeout: 120_000
    }
  )
  const line = result.stdout.trim().split("\n").pop()
  if (result.status !== 0 || line === undefined) return undefined
  return (JSON.parse(line) as { maxRssKB: number }).maxRssKB / 1024
}

/**
 * Runs the benchmark.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = async (
  options: { readonly runs?: number; readonly memory?: boolean } = {}
): Promise<ReadonlyArray<GraphDecodeRow>> => {
  const runs = options.runs ?? 5
  const chunks = chunked(compactReply(ROWS), 65536)
  const theirs = makeTheirs(chunks)
  const once = (v: (typeof variants)[number]) => (v === "falkordb-ts" ? theirs() : runOnce(v, chunks))
  for (const v of variants) await once(v) // warm-up (and falkordb-ts's metadata fetch)
  const times: Record<(typeof variants)[number], Array<number>> = {
    "ours-parser": [],
    "ours-stream": [],
    "falkordb-ts": []
  }
  const baselineRssMB = options.memory === false ? undefined : peakRss("baseline")
  for (let i = 0; i < runs; i++) for (const v of variants) times[v].push(await once(v))
  return variants.map((variant) => {
    const seconds = median(times[variant])
    return {
      variant,
      seconds,
      rowsPerSecond: ROWS / seconds,
      peakRssMB: options.memory === false ? undefined : peakRss(variant),
      baselineRssMB
    }
  })
}

/**
 * Renders the rows as markdown with machine and date.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const toMarkdown = (rows: ReadonlyArray<GraphDecodeRow>): string => {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU"
  const bytes = compactReply(ROWS).length
  const ours = rows.find((r) => r.variant === "ours-parser")
  const lines = [
    `Compact graph reply, ${ROWS.toLocaleString("en-US")} rows x 5 columns (${(bytes / 1048576).toFixed(1)} MB), ${cpu} x ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
    "",
    "| variant | rows/s | ms per reply | peak RSS MB (fresh process) | above baseline MB | time ÷ ours (parser) |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  if (rows[0]?.baselineRssMB !== undefined)
    lines.splice(
      1,
      0,
      "",
      `Baseline (a process that only builds the reply bytes): ${rows[0].baselineRssMB.toFixed(0)} MB peak RSS.`
    )
  for (const r of rows) {
    lines.push(
      `| ${r.variant} | ${Math.round(r.rowsPerSecond).toLocaleString("en-US")} | ${(r.seconds * 1000).toFixed(0)} | ${r.peakRssMB === undefined ? "n/a" : r.peakRssMB.toFixed(0)} | ${r.peakRssMB === undefined || r.baselineRssMB === undefined ? "n/a" : (r.peakRssMB - r.baselineRssMB).toFixed(0)} | ${ours === undefined ? "" : `${(r.seconds / ours.seconds).toFixed(2)}x`} |`
    )
  }
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const childAt = process.argv.indexOf("--child")
  if (childAt !== -1) {
    const variant = process.argv[childAt + 1] as Variant
    const chunks = chunked(compactReply(ROWS), 65536)
    await runOnce(variant, chunks)
    console.log(JSON.stringify({ maxRssKB: process.resourceUsage().maxRSS }))
  } else {
    console.log(toMarkdown(await run({ runs: process.argv.includes("--quick") ? 3 : 5 })))
  }
}
