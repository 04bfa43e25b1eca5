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

interface Sample {
  readonly ops: number
  readonly seconds: number
  readonly cpuMicros: number
}

const cell = (limiter: RateLimiter.RateLimiter, callers: number, millis: number) =>
  Effect.gen(function* () {
    let ops = 0
    const started = performance.now()
    const deadline = started + millis
    const cpu = process.cpuUsage()
    yield* Effect.forEach(
      Array.from({ length: callers }, (_, caller) => caller),
      (caller) =>
        Effect.gen(function* () {
          let i = 0
          while (performance.now() < deadline) {
            yield* limiter.consume({ key: `bench:rl:${(caller * 7919 + i++) % 1024}`, limit: 1e9, window: "1 hour" })
            ops++
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const used = process.cpuUsage(cpu)
    return { ops, seconds: (performance.now() - started) / 1000, cpuMicros: used.user + used.system } satisfies Sample
  })

/**
 * Runs the table and renders it.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: {
  readonly port: number
  readonly runs: number
  readonly millis: number
  readonly warmupMillis: number
}): Effect.Effect<string, unknown> =>
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
      const samples = new Map<string, Array<Sample>>()
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
        const nodeRate = Harness.median(
          (samples.get(`${concurrency}/${backends.length - 1}`) ?? []).map((s) => s.ops / s.seconds)
        )
        for (let b = 0; b < backends.length; b++) {
          const list = samples.get(`${concurrency}/${b}`) ?? []
          const rate = Harness.median(list.map((s) => s.ops / s.seconds))
          const cpu = Harness.median(list.map((s) => s.cpuMicros / Math.max(s.ops, 1)))
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
