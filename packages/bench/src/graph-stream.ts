/**
 * Rows streamed off the wire: a 1,000,000-row x 5-column `--compact` reply (integer, string,
 * double, boolean, integer) served over loopback TCP by a child process that writes it with
 * socket backpressure (it never holds the whole reply), read by `Graph.roStream` in a fresh
 * client process per variant:
 *
 * - `streamed`: the default (`streamRows: true`): rows decoded as their bytes arrive;
 * - `whole`: `streamRows: false`, the path before streaming: the whole RESP tree first, then
 *   rows decoded `chunkSize` at a time.
 *
 * Per variant: time to the first row, time to the last row, client CPU, and the peak RSS
 * above the client's baseline (RSS after connecting and a small warm-up query;
 * peak = `process.resourceUsage().maxRSS`), against the reply's wire size. Target (issue
 * #15): streamed peak above baseline ≤ 1.5 × wire size, first row before the last byte.
 *
 * Run: node --conditions=@effect-falkordb/source packages/bench/src/graph-stream.ts [--rows=N]
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Net from "node:net"
import * as os from "node:os"

const DEFAULT_ROWS = 1_000_000

const header = "*5\r\n" + ["i", "s", "d", "b", "j"].map((c) => `*2\r\n:1\r\n$1\r\n${c}\r\n`).join("")
const stats = "*2\r\n$19\r\nCached execution: 0\r\n$52\r\nQuery internal execution time: 0.067516 milliseconds\r\n"
const row = (i: number): string => {
  const s = `name-${i}`
  return (
    `*5\r\n*2\r\n:3\r\n:${i}\r\n*2\r\n:2\r\n$${s.length}\r\n${s}\r\n*2\r\n:5\r\n$4\r\n3.75\r\n` +
    `*2\r\n:4\r\n$${i % 2 === 0 ? "4\r\ntrue" : "5\r\nfalse"}\r\n*2\r\n:3\r\n:${i * 7}\r\n`
  )
}
const wireSize = (rows: number): number => {
  let size = `*3\r\n${header}*${rows}\r\n`.length + stats.length
  for (let i = 0; i < rows; i++) size += row(i).length
  return size
}

/** The server process: every graph query is answered with `rows` rows (the text says how many). */
const serve = () => {
  const server = Net.createServer((socket) => {
    socket.setNoDelay(true)
    socket.on("error", () => socket.destroy())
    let chain = Promise.resolve()
    const send = (bytes: string) =>
      new Promise<void>((done) => {
        if (socket.destroyed || socket.write(bytes)) done()
        else socket.once("drain", () => done())
      })
    const decoder = new Decoder((request) => {
      const command = (request as Array<Reply>).map((a) => new TextDecoder().decode(a as Uint8Array))
      chain = chain.then(async () => {
        if (command[0]!.toUpperCase() === "PING") return send("+PONG\r\n")
        const rows = Number(/ROWS (\d+)/.exec(command[2] ?? "")?.[1] ?? 0)
        await send(`*3\r\n${header}*${rows}\r\n`)
        let batch = ""
        for (let i = 0; i < rows; i++) {
          batch += row(i)
          if (batch.length >= 65536) {
            await send(batch)
            batch = ""
          }
        }
        await send(batch + stats)
      })
    })
    socket.on("data", (chunk) => decoder.feed(chunk))
  })
  server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: (server.address() as Net.AddressInfo).port })))
}

type Variant = "streamed" | "whole"

interface Measured {
  readonly variant: Variant
  readonly rows: number
  readonly firstRowMs: number
  readonly lastRowMs: number
  readonly cpuMs: number
  readonly baselineMB: number
  readonly peakAboveBaselineMB: number
}

/** The client process: one run of `variant`, printed as JSON. */
const client = (variant: Variant, port: number, rows: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        FalkorDB.layer({ url: `redis://127.0.0.1:${port}`, strategy: "single", streamRows: variant === "streamed" })
      )
      const db = context.mapUnsafe.get(FalkorDB.FalkorDB.key) as FalkorDB.FalkorDB["Service"]
      const g = db.graph("g")
      yield* Stream.runDrain(g.roStream("ROWS 1000"))
      globalThis.gc?.()
      const baseline = process.memoryUsage().rss
      const cpu = process.cpuUsage()
      const start = performance.now()
      let first = 0
      let count = 0
      let check = 0
      yield* g.roStream(`ROWS ${rows}`).pipe(
        Stream.runForEachArray((chunk) =>
          Effect.sync(() => {
            if (count === 0) first = performance.now() - start
            count += chunk.length
            // Touch a value per chunk so nothing is optimised away.
            check += Number(chunk[chunk.length - 1]!.getAt(0))
          })
        )
      )
      const last = performance.now() - start
      const used = process.cpuUsage(cpu)
      const peak = process.resourceUsage().maxRSS * 1024
      const result: Measured = {
        variant,
        rows: count,
        firstRowMs: first,
        lastRowMs: last,
        cpuMs: (used.user + used.system) / 1000,
        baselineMB: baseline / 1048576,
        peakAboveBaselineMB: Math.max(0, peak - baseline) / 1048576
      }
      if (check < 0) console.error("unreachable")
      console.log(JSON.stringify(result))
    })
  )

/**
 * Runs both variants, each in a fresh client process, against one server process.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = async (options: { readonly rows?: number } = {}): Promise<string> => {
  const rows = options.rows ?? DEFAULT_ROWS
  const server = ChildProcess.spawn(process.execPath, [...process.execArgv, import.meta.filename, "--serve"], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout.once("data", (data: Buffer) => resolve((JSON.parse(data.toString()) as { port: number }).port))
      server.once("exit", () => reject(new Error("the reply server exited")))
    })
    const measured: Array<Measured> = []
    for (const variant of ["streamed", "whole"] as const) {
      const result = ChildProcess.spawnSync(
        process.execPath,
        [
          "--expose-gc",
          ...process.execArgv,
          import.meta.filename,
          "--client",
          variant,
          `--port=${port}`,
          `--rows=${rows}`
        ],
        { encoding: "utf8", timeout: 600_000 }
      )
      const line = result.stdout.trim().split("\n").pop()
      if (result.status !== 0 || line === undefined || line === "") {
        throw new Error(`graph-stream ${variant} failed: ${result.stderr}`)
      }
      measured.push(JSON.parse(line) as Measured)
    }
    return toMarkdown(measured, wireSize(rows))
  } finally {
    server.kill()
  }
}

const toMarkdown = (measured: ReadonlyArray<Measured>, wire: number): string => {
  const wireMB = wire / 1048576
  const cpu = os.cpus()[0]?.model ?? "unknown CPU"
  const lines = [
    `${measured[0]?.rows.toLocaleString("en-US")} rows x 5 columns, ${wireMB.toFixed(1)} MB on the wire, served over loopback by a child process; Graph.roStream on a single connection, one fresh client process per variant; ${cpu} x ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
    "",
    "| variant | first row ms | last row ms | first ÷ last | client CPU ms | peak RSS above baseline MB | ÷ wire size |",
    "|---|---:|---:|---:|---:|---:|---:|"
  ]
  for (const m of measured) {
    lines.push(
      `| ${m.variant} | ${m.firstRowMs.toFixed(1)} | ${m.lastRowMs.toFixed(0)} | ${(m.firstRowMs / m.lastRowMs).toFixed(4)} | ${m.cpuMs.toFixed(0)} | ${m.peakAboveBaselineMB.toFixed(0)} | ${(m.peakAboveBaselineMB / wireMB).toFixed(2)}x |`
    )
  }
  lines.push(
    "",
    "Target: streamed peak above baseline ≤ 1.5x the wire size, and the first row before the last byte (first ÷ last well below 1; the last row follows the last byte)."
  )
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const argv = process.argv.slice(2)
  const flag = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  const rows = Number(flag("rows") ?? DEFAULT_ROWS)
  if (argv.includes("--serve")) serve()
  else if (argv.includes("--client")) {
    const variant = argv[argv.indexOf("--client") + 1] as Variant
    Effect.runPromise(client(variant, Number(flag("port")), rows)).then(
      () => process.exit(0),
      (error) => {
        console.error(error)
        process.exit(1)
      }
    )
  } else {
    run({ rows }).then((text) => console.log(text))
  }
}
