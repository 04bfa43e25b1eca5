/**
 * RESP decoder throughput: this project's Decoder against the `redis-parser` npm package on
 * the same corpora, fed in 64 KiB socket-sized chunks. Interleaved runs, medians, ratios.
 *
 * Run: node --conditions=@effect-falkordb/source packages/bench/src/decoder.ts [--quick]
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { createRequire } from "node:module"
import * as os from "node:os"

const require = createRequire(import.meta.url)
const RedisParser = require("redis-parser") as new (options: {
  returnReply: (reply: unknown) => void
  returnError: (error: unknown) => void
  returnFatalError?: (error: unknown) => void
  returnBuffers?: boolean
}) => { execute(buffer: Buffer): void }

interface Corpus {
  readonly name: string
  readonly bytes: Buffer
  readonly frames: number
}

const repeatFrames = (frame: string, count: number): Corpus["bytes"] => Buffer.from(frame.repeat(count))

/** A FalkorDB compact reply: header, `rows` rows of [node with properties, int, string, double, bool]. */
const compactGraphReply = (rows: number): string => {
  const cell = (type: number, payload: string) => `*2\r\n:${type}\r\n${payload}`
  const node = (id: number) =>
    `*3\r\n:${id}\r\n*1\r\n:0\r\n*3\r\n` +
    `*3\r\n:0\r\n:2\r\n$5\r\nAlice\r\n` +
    `*3\r\n:1\r\n:3\r\n:${30 + (id % 50)}\r\n` +
    `*3\r\n:2\r\n:5\r\n$4\r\n1.25\r\n`
  let out = `*3\r\n*5\r\n` + ["n", "i", "s", "d", "b"].map((c) => `*2\r\n:1\r\n$1\r\n${c}\r\n`).join("")
  out += `*${rows}\r\n`
  for (let r = 0; r < rows; r++) {
    out += `*5\r\n${cell(8, node(r))}${cell(3, `:${r}\r\n`)}${cell(2, `$6\r\nrow${String(r).padStart(3, "0")}\r\n`)}`
    out += `${cell(5, "$4\r\n3.75\r\n")}${cell(4, "$4\r\ntrue\r\n")}`
  }
  out += `*2\r\n$19\r\nCached execution: 0\r\n$52\r\nQuery internal execution time: 0.067516 milliseconds\r\n`
  return out
}

const corpora = (): ReadonlyArray<Corpus> => [
  { name: "small integers", bytes: repeatFrames(":12345\r\n", 200_000), frames: 200_000 },
  { name: "simple strings", bytes: repeatFrames("+OK\r\n", 200_000), frames: 200_000 },
  { name: "16-byte bulk", bytes: repeatFrames(`$16\r\n${"b".repeat(16)}\r\n`, 150_000), frames: 150_000 },
  { name: "64 KiB bulk", bytes: repeatFrames(`$65536\r\n${"x".repeat(65536)}\r\n`, 64), frames: 64 },
  { name: "nested compact graph (1000 rows)", bytes: repeatFrames(compactGraphReply(1000), 20), frames: 20 }
]

const chunked = (bytes: Buffer, size: number): ReadonlyArray<Buffer> => {
  const out: Array<Buffer> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

const timeOurs = (chunks: ReadonlyArray<Buffer>, frames: number): number => {
  let seen = 0
  const decoder = new Decoder(() => {
    seen++
  })
  const start = process.hrtime.bigint()
  for (const chunk of chunks) decoder.feed(chunk)
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9
  if (seen !== frames) throw new Error(`ours decoded ${seen} of ${frames} frames`)
  return elapsed
}

const timeRedisParser = (chunks: ReadonlyArray<Buffer>, frames: number, returnBuffers: boolean): number => {
  let seen = 0
  const parser = new RedisParser({
    returnReply: () => {
      seen++
    },
    returnError: () => {
      seen++
    },
    returnBuffers
  })
  const start = process.hrtime.bigint()
  for (const chunk of chunks) parser.execute(chunk)
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9
  if (seen !== frames) throw new Error(`redis-parser decoded ${seen} of ${frames} frames`)
  return elapsed
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/**
 * One row of the decoder table.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecoderRow {
  readonly corpus: string
  readonly megabytes: number
  readonly oursMBs: number
  readonly oursFramesPerSecond: number
  readonly parserBuffersMBs: number
  readonly parserStringsMBs: number
  readonly ratioBuffers: number
  readonly ratioStrings: number
}

/**
 * Runs the decoder benchmark and returns its rows.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: { readonly runs?: number } = {}): ReadonlyArray<DecoderRow> => {
  const runs = options.runs ?? 7
  return corpora().map((corpus) => {
    const chunks = chunked(corpus.bytes, 65536)
    // Warm up both, then interleave the measured runs so machine noise hits all alike.
    for (let i = 0; i < 2; i++) {
      timeOurs(chunks, corpus.frames)
      timeRedisParser(chunks, corpus.frames, true)
      timeRedisParser(chunks, corpus.frames, false)
    }
    const ours: Array<number> = []
    const buffers: Array<number> = []
    const strings: Array<number> = []
    for (let i = 0; i < runs; i++) {
      ours.push(timeOurs(chunks, corpus.frames))
      buffers.push(timeRedisParser(chunks, corpus.frames, true))
      strings.push(timeRedisParser(chunks, corpus.frames, false))
    }
    const mb = corpus.bytes.length / (1024 * 1024)
    const o = median(ours)
    const b = median(buffers)
    const s = median(strings)
    return {
      corpus: corpus.name,
      megabytes: mb,
      oursMBs: mb / o,
      oursFramesPerSecond: corpus.frames / o,
      parserBuffersMBs: mb / b,
      parserStringsMBs: mb / s,
      ratioBuffers: b / o,
      ratioStrings: s / o
    }
  })
}

/**
 * Renders the rows as a markdown table with machine, Node version and date.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const toMarkdown = (rows: ReadonlyArray<DecoderRow>): string => {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU"
  const lines = [
    `RESP decoder, ${cpu} x ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
    "",
    "| corpus | MB | ours MB/s | ours frames/s | redis-parser (buffers) MB/s | redis-parser (strings) MB/s | ours ÷ buffers | ours ÷ strings |",
    "|---|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const r of rows) {
    lines.push(
      `| ${r.corpus} | ${r.megabytes.toFixed(1)} | ${r.oursMBs.toFixed(0)} | ${Math.round(r.oursFramesPerSecond).toLocaleString("en-US")} | ${r.parserBuffersMBs.toFixed(0)} | ${r.parserStringsMBs.toFixed(0)} | ${r.ratioBuffers.toFixed(2)}x | ${r.ratioStrings.toFixed(2)}x |`
    )
  }
  return lines.join("\n")
}

/**
 * One row of the unterminated-line measurement.
 *
 * @since 0.1.0
 * @category models
 */
export interface LineRow {
  readonly megabytes: number
  readonly millis: number
  readonly bulkMillis: number
}

/** Feeds `+`, `bytes` of text without CRLF in 64 KiB chunks, then the CRLF; returns seconds. */
const timeLine = (megabytes: number, bulk: boolean): number => {
  const size = megabytes * 1024 * 1024
  const body = Buffer.alloc(size, 0x61)
  const chunks = chunked(body, 65536)
  let seen = 0
  const decoder = new Decoder(
    () => {
      seen++
    },
    // A hostile peer's line: the cap is raised so the decoder has to hold all of it.
    { maxLineLength: 64 * 1024 * 1024 }
  )
  const start = process.hrtime.bigint()
  decoder.feed(Buffer.from(bulk ? `$${size}\r\n` : "+"))
  for (const chunk of chunks) decoder.feed(chunk)
  decoder.feed(Buffer.from("\r\n"))
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9
  if (seen !== 1) throw new Error(`decoded ${seen} replies instead of 1`)
  return elapsed
}

/**
 * A line without CRLF that arrives in 64 KiB chunks must cost time linear in its length
 * (the decoder examines each chunk once and joins once): 16 MB should take about twice
 * 8 MB. A bulk string of the same size is shown alongside. Medians of interleaved runs.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const runLines = (options: { readonly runs?: number } = {}): ReadonlyArray<LineRow> => {
  const runs = options.runs ?? 5
  const sizes = [8, 16]
  timeLine(8, false)
  timeLine(8, true)
  const lines = sizes.map(() => [] as Array<number>)
  const bulks = sizes.map(() => [] as Array<number>)
  for (let i = 0; i < runs; i++) {
    sizes.forEach((size, k) => {
      lines[k]!.push(timeLine(size, false))
      bulks[k]!.push(timeLine(size, true))
    })
  }
  return sizes.map((megabytes, k) => ({
    megabytes,
    millis: median(lines[k]!) * 1000,
    bulkMillis: median(bulks[k]!) * 1000
  }))
}

/**
 * Renders the unterminated-line rows, with the 16 MB ÷ 8 MB ratio.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const linesToMarkdown = (rows: ReadonlyArray<LineRow>): string => {
  const lines = [
    "Unterminated line (`+` and N MB without CRLF in 64 KiB chunks, then CRLF; the cap raised to 64 MiB):",
    "",
    "| MB | line ms | bulk string of the same size ms |",
    "|---:|---:|---:|"
  ]
  for (const r of rows) lines.push(`| ${r.megabytes} | ${r.millis.toFixed(1)} | ${r.bulkMillis.toFixed(1)} |`)
  const [eight, sixteen] = rows
  if (eight !== undefined && sixteen !== undefined) {
    lines.push("", `16 MB ÷ 8 MB: ${(sixteen.millis / eight.millis).toFixed(2)}x (linear: about 2x)`)
  }
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const quick = process.argv.includes("--quick")
  console.log(toMarkdown(run({ runs: quick ? 3 : 7 })))
  console.log(`\n${linesToMarkdown(runLines({ runs: quick ? 3 : 5 }))}`)
}
