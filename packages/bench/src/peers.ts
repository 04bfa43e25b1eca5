/**
 * The peers table: the same closed-loop SET load through this client, ioredis (default and
 * `enableAutoPipelining`), node-redis v6 (default, and with its per-command timeout off) and
 * the raw pipelined socket (the JavaScript ceiling), with `redis-benchmark -P 16/64` as the
 * server's ceiling.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import type { Command } from "@effect-falkordb/resp/Encoder"
import * as Effect from "effect/Effect"
import { Redis as IORedis } from "ioredis"
import { createClient } from "redis"
import * as Harness from "./harness.ts"
import * as Raw from "./raw.ts"
import * as RedisBenchmark from "./redisBenchmark.ts"

/**
 * A promise client opened for a benchmark.
 *
 * @since 0.1.0
 * @category models
 */
export interface PeerClient {
  readonly send: (command: Command) => Promise<unknown>
  readonly close: () => Promise<void>
}

/**
 * A promise client under test.
 *
 * @since 0.1.0
 * @category models
 */
export interface Peer {
  readonly name: string
  readonly open: (port: number) => Promise<PeerClient>
}

const strings = (command: Command): Array<string> => command.map((a) => (typeof a === "string" ? a : String(a)))

const ioredis = (name: string, autoPipelining: boolean): Peer => ({
  name,
  open: async (port) => {
    const client = new IORedis({
      host: "127.0.0.1",
      port,
      lazyConnect: true,
      enableAutoPipelining: autoPipelining,
      maxRetriesPerRequest: 0
    })
    await client.connect()
    return {
      send: (command) => {
        const [name, ...args] = strings(command)
        return client.call(name!, ...args)
      },
      close: async () => {
        await client.quit()
      }
    }
  }
})

const nodeRedis = (name: string, timeoutOff: boolean): Peer => ({
  name,
  open: async (port) => {
    const client = createClient({
      url: `redis://127.0.0.1:${port}`,
      // v6 arms a 5 s AbortSignal timer per command by default; 0 turns it off.
      ...(timeoutOff ? { commandOptions: { timeout: 0 } } : {})
    })
    client.on("error", () => {})
    await client.connect()
    return {
      send: (command) => client.sendCommand(strings(command)),
      close: async () => {
        await client.close()
      }
    }
  }
})

/**
 * The promise peers, in column order.
 *
 * @since 0.1.0
 * @category peers
 */
export const peers: ReadonlyArray<Peer> = [
  ioredis("ioredis", false),
  ioredis("ioredis auto-pipelining", true),
  nodeRedis("node-redis", false),
  nodeRedis("node-redis no timeout", true),
  { name: "raw socket", open: async (port) => Raw.connect(port) }
]

/**
 * Loads of the peers table: callers × window.
 *
 * @since 0.1.0
 * @category peers
 */
export const loads: ReadonlyArray<Harness.Load> = [
  { callers: 1, window: 1 },
  { callers: 8, window: 1 },
  { callers: 64, window: 1 },
  { callers: 256, window: 1 },
  { callers: 1024, window: 1 },
  { callers: 16, window: 32 },
  { callers: 512, window: 32 },
  // Batches: each caller sends 32 at once and awaits them all (ours: one executeAll).
  { callers: 16, window: 32, batch: true },
  { callers: 512, window: 32, batch: true }
]

const label = (load: Harness.Load) =>
  load.window === 1 ? `${load.callers}` : `${load.callers} × ${load.window}${load.batch === true ? " batches" : ""}`

/**
 * The column of this client in the peers table.
 *
 * @since 0.1.0
 * @category peers
 */
export const OURS = "ours (multiplexed, 1 engine)"

/**
 * The same client sending each batch as `window` submits and an await of each future (the
 * batch rows only): what `executeAll` saves, measured in the same run.
 *
 * @since 0.1.0
 * @category peers
 */
export const OURS_SUBMITS = "ours, batch as N submits"

/**
 * Options of the peers table.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port: number
  readonly runs: number
  readonly millis: number
  readonly warmupMillis: number
  /** Requests per redis-benchmark run. */
  readonly benchmarkRequests: number
}

/**
 * Runs the peers table and renders it.
 *
 * @since 0.1.0
 * @category peers
 */
export const run = (options: Options): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const ours = yield* RedisConnection.makeMultiplexed({ url: `redis://127.0.0.1:${options.port}`, connections: 1 })
      const opened: Array<readonly [Peer, PeerClient]> = []
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => Promise.all(opened.map(([, client]) => client.close().catch(() => undefined))))
      )
      for (const peer of peers) {
        const client = yield* Effect.promise(() => peer.open(options.port))
        opened.push([peer, client])
      }
      const cells: Array<Harness.Cell> = []
      for (const load of loads) {
        const row = label(load)
        cells.push({
          row,
          column: OURS,
          run: (millis) => Harness.runEffectCell(ours, { load, op: "SET", millis })
        })
        if (load.batch === true) {
          cells.push({
            row,
            column: OURS_SUBMITS,
            run: (millis) => Harness.runEffectCell(ours, { load, op: "SET", millis, batchFace: "submits" })
          })
        }
        for (const [peer, client] of opened) {
          cells.push({
            row,
            column: peer.name,
            run: (millis) => Effect.tryPromise(() => Harness.runPromiseCell(client.send, { load, op: "SET", millis }))
          })
        }
      }
      const measured = yield* Harness.measure(cells, options)
      const columns = [OURS, OURS_SUBMITS, ...peers.map((p) => p.name)]
      const bestNodeRedis = (row: string) =>
        Math.max(
          Harness.medianRate(measured, row, "node-redis"),
          Harness.medianRate(measured, row, "node-redis no timeout")
        )
      const rows = loads.map((load) => {
        const row = label(load)
        const oursRate = Harness.medianRate(measured, row, OURS)
        return [
          row,
          ...columns.map((c) => Harness.formatRate(Harness.medianRate(measured, row, c))),
          Harness.formatRatio(oursRate / bestNodeRedis(row)),
          Harness.formatRatio(Harness.medianRatio(measured, row, OURS, "raw socket"))
        ]
      })
      const cpuRows = loads.map((load) => {
        const row = label(load)
        return [
          row,
          ...columns.map((c) => Harness.formatMicros(Harness.medianCpuPerOp(measured, row, c))),
          Harness.formatRatio(
            Harness.medianCpuPerOp(measured, row, OURS) / Harness.medianCpuPerOp(measured, row, "raw socket")
          ),
          Harness.formatRatio(
            Harness.medianCpuPerOp(measured, row, OURS) / Harness.medianCpuPerOp(measured, row, OURS_SUBMITS)
          )
        ]
      })
      const benchmark = yield* RedisBenchmark.run({
        port: options.port,
        runs: options.runs,
        requests: options.benchmarkRequests,
        pipelines: [16, 64]
      })
      return [
        `### Peers: closed-loop SET/s (callers, or callers × window in flight each; "batches": each caller sends window SETs at once and awaits them all — ours with one executeAll, the promise clients with Promise.all)`,
        "",
        Harness.table(["callers", ...columns, "ours ÷ best node-redis", "ours ÷ raw"], rows),
        "",
        `Server ceiling, same server: ${benchmark}`,
        "",
        `#### Peers: client CPU µs per SET (this process's user + system time ÷ completed SETs; the server excluded)`,
        "",
        Harness.table(
          ["callers", ...columns.map((c) => `${c} µs/op`), "ours ÷ raw CPU", "executeAll ÷ N submits CPU"],
          cpuRows
        )
      ].join("\n")
    })
  )
