/**
 * The strategies table (the falkordb-rs comparison): pooled vs multiplexed at a fixed 8
 * connections, with 1, 8, 64 and 256 fibers each sending PING / GET through `execute`.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Harness from "./harness.ts"

/**
 * Concurrency levels of the table and the speed-up falkordb-rs published for each.
 *
 * @since 0.1.0
 * @category strategies
 */
export const published: ReadonlyArray<readonly [number, number]> = [
  [1, 0.82],
  [8, 0.94],
  [64, 1.51],
  [256, 1.72]
]

const POOLED = "pooled (8)"
const MULTIPLEXED = "multiplexed (8 engines, spread)"

/**
 * Runs the strategies table and renders it.
 *
 * @since 0.1.0
 * @category strategies
 */
export const run = (options: Harness.MeasureOptions & { readonly port: number }): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${options.port}`
      const pooled = yield* RedisConnection.makePooled({ url, size: 8 })
      const multiplexed = yield* RedisConnection.makeMultiplexed({ url, connections: 8, routing: "spread" })
      const cells: Array<Harness.Cell> = []
      for (const [callers] of published) {
        const load = { callers, window: 1 }
        const row = String(callers)
        cells.push({
          row,
          column: POOLED,
          run: (millis) => Harness.runEffectCell(pooled, { load, op: "PING/GET", millis })
        })
        cells.push({
          row,
          column: MULTIPLEXED,
          run: (millis) => Harness.runEffectCell(multiplexed, { load, op: "PING/GET", millis })
        })
      }
      const measured = yield* Harness.measure(cells, options)
      const rows = published.map(([callers, speedUp]) => {
        const row = String(callers)
        return [
          row,
          Harness.formatRate(Harness.medianRate(measured, row, POOLED)),
          Harness.formatRate(Harness.medianRate(measured, row, MULTIPLEXED)),
          Harness.formatRatio(Harness.medianRatio(measured, row, MULTIPLEXED, POOLED)),
          Harness.formatRatio(speedUp),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, POOLED)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, MULTIPLEXED))
        ]
      })
      return [
        "### Strategies: PING/GET ops/s through `execute`, 8 connections",
        "",
        Harness.table(
          [
            "fibers",
            `${POOLED} ops/s`,
            `${MULTIPLEXED} ops/s`,
            "speed-up",
            "published speed-up",
            `${POOLED} CPU µs/op`,
            `${MULTIPLEXED} CPU µs/op`
          ],
          rows
        )
      ].join("\n")
    })
  )
