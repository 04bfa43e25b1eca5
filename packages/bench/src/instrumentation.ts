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
      const rows = yield* Harness.variantTable(
        options,
        [1, 64],
        variants,
        (redis, callers, millis) =>
          Harness.cpuLoop(callers, millis, (caller) => redis.execute(["GET", `bench:${caller % 1024}`])),
        (cpu, bare) => (cpu - bare).toFixed(2)
      )
      return [
        "### Cost of instrumentation (single client, execute GET)",
        "",
        Harness.table(["callers", "instrumentation", "ops/s", "CPU µs/op (Node)", "CPU µs/op over bare"], rows)
      ].join("\n")
    })
  )
