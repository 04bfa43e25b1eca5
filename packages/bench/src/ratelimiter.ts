/**
 * The rate-limiter table: Effect's own `RateLimiter` with `layerStoreRedis` (a Lua script per
 * `consume`, through `Redis.eval` → `EVALSHA`) on this engine (`PersistenceRedis`, multiplexed
 * and single) and on `@effect/platform-node`'s `NodeRedis` (node-redis), in the same run.
 * Closed loops of concurrent fibers call `consume` on keys spread over 1024 limits that are
 * never reached; throughput and the Node process's CPU time per operation
 * (`process.cpuUsage`, user + system; redis-server's CPU is not counted) are reported.
 *
 * @since 0.1.0
 */
import * as PersistenceRedis from "@effect-falkordb/redis/PersistenceRedis"
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type * as Redis from "effect/persistence/Redis"
import * as Scope from "effect/Scope"
import * as Harness from "./harness.ts"

interface Backend {
  readonly name: string
  readonly layer: (port: number) => Layer.Layer<Redis.Redis, unknown>
}

const backends: ReadonlyArray<Backend> = [
  {
    name: "this engine (multiplexed)",
    layer: (port) => PersistenceRedis.layerFromOptions({ url: `redis://127.0.0.1:${port}`, strategy: "multiplexed" })
  },
  {
    name: "this engine (single)",
    layer: (port) => PersistenceRedis.layerFromOptions({ url: `redis://127.0.0.1:${port}`, strategy: "single" })
  },
  {
    name: "NodeRedis (node-redis 6)",
    layer: (port) => NodeRedis.layer({ url: `redis://127.0.0.1:${port}` })
  }
]

const cell = (limiter: RateLimiter.RateLimiter, callers: number, millis: number) =>
  Harness.cpuLoop(callers, millis, (caller, i) =>
    limiter.consume({ key: `bench:rl:${(caller * 7919 + i) % 1024}`, limit: 1e9, window: "1 hour" })
  )

/**
 * Runs the table and renders it.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: Harness.TableOptions): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const limiters: Array<RateLimiter.RateLimiter> = []
      for (const backend of backends) {
        const layer = RateLimiter.layer.pipe(
          Layer.provide(RateLimiter.layerStoreRedis({ prefix: `bench:${limiters.length}:` })),
          Layer.provide(backend.layer(options.port))
        )
        const scope = yield* Effect.scope
        const context = yield* Layer.buildWithScope(layer, yield* Scope.fork(scope))
        limiters.push(Context.get(context, RateLimiter.RateLimiter))
      }
      const callers = [1, 64]
      const samples = new Map<string, Array<{ readonly rate: number; readonly cpuMicrosPerOp: number }>>()
      for (const limiter of limiters) yield* cell(limiter, 8, options.warmupMillis)
      for (let round = 0; round < options.runs; round++) {
        for (const concurrency of callers) {
          for (let b = 0; b < backends.length; b++) {
            const key = `${concurrency}/${b}`
            const sample = yield* cell(limiters[b]!, concurrency, options.millis)
            samples.set(key, [...(samples.get(key) ?? []), sample])
          }
        }
      }
      const rows: Array<Array<string>> = []
      for (const concurrency of callers) {
        const nodeRate = Harness.median((samples.get(`${concurrency}/${backends.length - 1}`) ?? []).map((s) => s.rate))
        for (let b = 0; b < backends.length; b++) {
          const list = samples.get(`${concurrency}/${b}`) ?? []
          const rate = Harness.median(list.map((s) => s.rate))
          const cpu = Harness.median(list.map((s) => s.cpuMicrosPerOp))
          rows.push([
            String(concurrency),
            backends[b]!.name,
            Harness.formatRate(rate),
            cpu.toFixed(1),
            Harness.formatRatio(rate / nodeRate)
          ])
        }
      }
      return [
        "### Effect's RateLimiter (layerStoreRedis) on this engine vs NodeRedis",
        "",
        Harness.table(["callers", "Redis service", "consume/s", "CPU µs/op (Node)", "÷ NodeRedis"], rows)
      ].join("\n")
    })
  )
