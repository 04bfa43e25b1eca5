/**
 * The cost of instrumentation: the same closed loop of `execute(GET)` on one single client,
 * bare, with engine metrics (the `metrics: true` connection option), with the
 * `RedisInstrumentation` metrics, and with those plus spans (Effect's default tracer), in the
 * same run; throughput and the Node process's CPU time per command.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as RedisInstrumentation from "@effect-falkordb/redis/RedisInstrumentation"
import * as Effect from "effect/Effect"
import * as Harness from "./harness.ts"

type Service = RedisConnection.RedisConnection["Service"]

const cell = (redis: Service, callers: number, millis: number) =>
  Effect.map(
    Harness.cpuLoop(callers, millis, (caller) => redis.execute(["GET", `bench:${caller % 1024}`])),
    (sample) => ({ rate: sample.rate, cpu: sample.cpuMicrosPerOp })
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
      const base = yield* RedisConnection.makeSingle({ url: `redis://127.0.0.1:${options.port}` })
      const engineMetrics = yield* RedisConnection.makeSingle({
        url: `redis://127.0.0.1:${options.port}`,
        metrics: true
      })
      const context = yield* Effect.context<never>()
      const variants: ReadonlyArray<readonly [string, Service]> = [
        ["bare", base],
        ["engine metrics (metrics: true)", engineMetrics],
        ["metrics", RedisInstrumentation.instrument(base, { metrics: true }, context)],
        ["metrics + spans", RedisInstrumentation.instrument(base, { metrics: true, spans: true }, context)]
      ]
      for (const [, redis] of variants) yield* cell(redis, 8, options.warmupMillis)
      const samples = new Map<string, Array<{ rate: number; cpu: number }>>()
      for (let round = 0; round < options.runs; round++) {
        for (const callers of [1, 64]) {
          for (const [name, redis] of variants) {
            const key = `${callers}/${name}`
            samples.set(key, [...(samples.get(key) ?? []), yield* cell(redis, callers, options.millis)])
          }
        }
      }
      const rows: Array<Array<string>> = []
      for (const callers of [1, 64]) {
        const bare = samples.get(`${callers}/bare`) ?? []
        for (const [name] of variants) {
          const list = samples.get(`${callers}/${name}`) ?? []
          const cpu = Harness.median(list.map((s) => s.cpu))
          rows.push([
            String(callers),
            name,
            Harness.formatRate(Harness.median(list.map((s) => s.rate))),
            cpu.toFixed(2),
            (cpu - Harness.median(bare.map((s) => s.cpu))).toFixed(2)
          ])
        }
      }
      return [
        "### Cost of instrumentation (single client, execute GET)",
        "",
        Harness.table(["callers", "instrumentation", "ops/s", "CPU µs/op (Node)", "CPU µs/op over bare"], rows)
      ].join("\n")
    })
  )
