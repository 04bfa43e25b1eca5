/**
 * One cell, run long enough to profile or to compare CPU per operation:
 *
 * ```sh
 * ./node_modules/.bin/node --conditions=@effect-falkordb/source --cpu-prof --cpu-prof-dir=/tmp/prof \
 *   packages/bench/src/profile.ts --callers=1024 --window=1 --seconds=5 --client=ours
 * ```
 *
 * Flags: `--callers=` (default 1024), `--window=` (1), `--seconds=` (5), `--rounds=` (1; each
 * round runs the cell for `--seconds` and prints its own line), `--client=ours|raw|node-redis|ioredis`
 * (node-redis with its per-command timeout off, ioredis with its defaults), `--port=` (an existing server; otherwise one
 * is started). Prints SET/s and this process's CPU µs per SET (user + system). `--count` adds
 * socket writes and data chunks per SET; `--alloc` adds the bytes allocated per SET (V8's
 * sampling heap profiler, short-lived objects included) and prints the top allocation sites
 * (`--alloc-callers`: each with its caller; `--no-turbo-inlining` attributes them exactly).
 * `--batch` sends batches instead of a sliding window (each caller `window` commands at once,
 * awaited together: ours with `executeAll`, or `--batch=submits` with N submits and awaits).
 *
 * @since 0.1.0
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import * as Harness from "./harness.ts"
import * as Inspect from "./inspect.ts"
import * as Peers from "./peers.ts"

const flag = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback

const callers = Number(flag("callers", "1024"))
const window = Number(flag("window", "1"))
const seconds = Number(flag("seconds", "5"))
const rounds = Number(flag("rounds", "1"))
const client = flag("client", "ours")
const portFlag = flag("port", "")
const batchFlag = process.argv.includes("--batch") ? "executeAll" : flag("batch", "")

// `--count`: socket writes and data chunks per operation (both directions of this process).
const counting = process.argv.includes("--count")
let writes = 0
let chunks = 0
if (counting) {
  const write = Net.Socket.prototype.write
  Net.Socket.prototype.write = function (this: Net.Socket, ...args: Array<any>) {
    writes++
    return (write as any).apply(this, args)
  } as typeof write
  const emit = Net.Socket.prototype.emit
  Net.Socket.prototype.emit = function (this: Net.Socket, event: string | symbol, ...args: Array<any>) {
    if (event === "data") chunks++
    return (emit as any).apply(this, [event, ...args])
  } as typeof emit
}

// `--alloc`: bytes allocated per operation, by sampling (every 1 KiB on average), collected
// objects included: what the garbage collector has to sweep per SET, and where it comes from.
const allocationCallers = process.argv.includes("--alloc-callers")
const allocating = allocationCallers || process.argv.includes("--alloc")
const cellOptions = {
  load: { callers, window, batch: batchFlag !== "" },
  op: "SET" as const,
  millis: seconds * 1000,
  batchFace: batchFlag === "submits" ? ("submits" as const) : ("executeAll" as const)
}

const report = (sample: Harness.Sample & { readonly cpuMicros: number }) =>
  Effect.sync(() =>
    console.log(
      `${client} ${callers} × ${window}${batchFlag === "" ? "" : ` batches (${batchFlag})`}: ${Harness.formatRate(Harness.rate(sample))} SET/s, ` +
        `${Harness.formatMicros(Harness.cpuPerOp(sample))} µs CPU/op (${sample.ops} ops)` +
        (counting
          ? `, ${(sample.ops / writes).toFixed(1)} ops/write, ${(sample.ops / chunks).toFixed(1)} ops/chunk`
          : "")
    )
  )

const timed = <E>(run: Effect.Effect<Harness.Sample, E>) =>
  Effect.gen(function* () {
    writes = 0
    chunks = 0
    const cpu = process.cpuUsage()
    const sample = yield* allocating
      ? Inspect.allocations(run, (s) => s.ops, { unit: "SET", withCallers: allocationCallers })
      : run
    const used = process.cpuUsage(cpu)
    return { ...sample, cpuMicros: used.user + used.system }
  })

const program = Effect.scoped(
  Effect.gen(function* () {
    const port = portFlag === "" ? (yield* Embedded.make({ module: false })).port : Number(portFlag)
    let run: Effect.Effect<Harness.Sample, unknown>
    if (client === "ours") {
      const ours = yield* RedisConnection.makeMultiplexed({ url: `redis://127.0.0.1:${port}`, connections: 1 })
      run = Harness.runEffectCell(ours, cellOptions)
    } else {
      const peerName = client === "raw" ? "raw socket" : client === "ioredis" ? "ioredis" : "node-redis no timeout"
      const peer = Peers.peers.find((p) => p.name === peerName)
      if (peer === undefined) return yield* Effect.die(new Error(`unknown --client=${client}`))
      const opened = yield* Effect.acquireRelease(
        Effect.promise(() => peer.open(port)),
        (c) => Effect.promise(() => c.close())
      )
      run = Effect.tryPromise(() => Harness.runPromiseCell(opened.send, cellOptions))
    }
    for (let r = 0; r < rounds; r++) yield* Effect.flatMap(timed(run), report)
  })
)

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
