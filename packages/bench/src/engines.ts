/**
 * The engines table (the go-redis full-duplex comparison): SET/s through 1 engine vs 4
 * engines, at 4 callers × window 1 and 512 callers × window 32 (each caller keeps `window`
 * submits in flight).
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Harness from "./harness.ts"

/**
 * Loads of the table and the SET/s go-redis published for 1 and 4 engines (14 cores).
 *
 * @since 0.1.0
 * @category engines
 */
export const published: ReadonlyArray<readonly [Harness.Load, number, number]> = [
  [{ callers: 4, window: 1 }, 130155, 104590],
  [{ callers: 512, window: 32 }, 3029168, 3491072]
]

const ONE = "1 engine"
const FOUR = "4 engines (spread)"
const FOUR_KEY = "4 engines (key)"

/**
 * Runs the engines table and renders it.
 *
 * @since 0.1.0
 * @category engines
 */
export const run = (options: Harness.MeasureOptions & { readonly port: number }): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${options.port}`
      const one = yield* RedisConnection.makeMultiplexed({ url, connections: 1 })
      const four = yield* RedisConnection.makeMultiplexed({ url, connections: 4, routing: "spread" })
      const fourByKey = yield* RedisConnection.makeMultiplexed({ url, connections: 4, routing: "key" })
      const cells: Array<Harness.Cell> = []
      for (const [load] of published) {
        const row = `${load.callers} × ${load.window}`
        cells.push({ row, column: ONE, run: (millis) => Harness.runEffectCell(one, { load, op: "SET", millis }) })
        cells.push({ row, column: FOUR, run: (millis) => Harness.runEffectCell(four, { load, op: "SET", millis }) })
        cells.push({
          row,
          column: FOUR_KEY,
          run: (millis) => Harness.runEffectCell(fourByKey, { load, op: "SET", millis })
        })
      }
      const measured = yield* Harness.measure(cells, options)
      const rows = published.map(([load, publishedOne, publishedFour]) => {
        const row = `${load.callers} × ${load.window}`
        return [
          row,
          Harness.formatRate(Harness.medianRate(measured, row, ONE)),
          Harness.formatRate(Harness.medianRate(measured, row, FOUR)),
          Harness.formatRate(Harness.medianRate(measured, row, FOUR_KEY)),
          Harness.formatRatio(Harness.medianRatio(measured, row, FOUR, ONE)),
          Harness.formatRatio(Harness.medianRatio(measured, row, FOUR_KEY, ONE)),
          `${Harness.formatRate(publishedOne)} / ${Harness.formatRate(publishedFour)}`,
          Harness.formatRatio(publishedFour / publishedOne),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, ONE)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, FOUR)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, FOUR_KEY))
        ]
      })
      return [
        "### Engines: SET/s, callers × window in flight per caller",
        "",
        Harness.table(
          [
            "callers × window",
            `${ONE} SET/s`,
            `${FOUR} SET/s`,
            `${FOUR_KEY} SET/s`,
            "spread ÷ 1",
            "key ÷ 1",
            "published 1 / 4 (go-redis)",
            "published 4 ÷ 1",
            `${ONE} CPU µs/op`,
            `${FOUR} CPU µs/op`,
            `${FOUR_KEY} CPU µs/op`
          ],
          rows
        )
      ].join("\n")
    })
  )
