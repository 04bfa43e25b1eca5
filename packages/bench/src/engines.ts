/**
 * The engines table (the go-redis full-duplex comparison): SET/s through 1 engine vs 4
 * engines vs a self-sizing client (`connections: { max: 4 }`, key routing), at 4 callers ×
 * window 1 and 512 callers × window 32 (each caller keeps `window` submits in flight); and
 * the self-sizing client against the simulated FalkorDB, whose W worker slots stand for the
 * server's cores: one query at a time per connection, so engines are what reach them.
 *
 * @since 0.1.0
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as RedisOptions from "@effect-falkordb/redis/RedisOptions"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
// The self-sizing client's counters (engines in use, trials) are internal.
import * as Strategies from "../../redis/src/internal/Strategies.ts"
import * as Simulation from "./graph-simulation.ts"
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
const AUTO = "auto 1–4 (key)"

/** A self-sizing client with its counters. */
const sized = (
  url: string,
  max: number,
  routing: "spread" | "key"
): Effect.Effect<
  { readonly service: RedisConnection.RedisConnection["Service"]; readonly summary: () => string },
  unknown,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const resolved = yield* RedisOptions.resolve({ url })
    const { service, elastic } = yield* Strategies.makeSized(resolved, { min: 1, max }, routing)
    const summary = () => {
      const stats = elastic.stats()
      return `${stats.active} engines now; ${stats.added} added, ${stats.retired} retired, ${stats.trials} trials (${stats.kept} kept), ${stats.held} commands held while keys moved`
    }
    return { service: service as RedisConnection.RedisConnection["Service"], summary }
  })

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
      const auto = yield* sized(url, 4, "key")
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
        cells.push({
          row,
          column: AUTO,
          run: (millis) => Harness.runEffectCell(auto.service, { load, op: "SET", millis })
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
          Harness.formatRate(Harness.medianRate(measured, row, AUTO)),
          Harness.formatRatio(Harness.medianRatio(measured, row, FOUR, ONE)),
          Harness.formatRatio(Harness.medianRatio(measured, row, FOUR_KEY, ONE)),
          Harness.formatRatio(Harness.medianRatio(measured, row, AUTO, ONE)),
          `${Harness.formatRate(publishedOne)} / ${Harness.formatRate(publishedFour)}`,
          Harness.formatRatio(publishedFour / publishedOne),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, ONE)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, FOUR)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, FOUR_KEY)),
          Harness.formatMicros(Harness.medianCpuPerOp(measured, row, AUTO))
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
            `${AUTO} SET/s`,
            "spread ÷ 1",
            "key ÷ 1",
            "auto ÷ 1",
            "published 1 / 4 (go-redis)",
            "published 4 ÷ 1",
            `${ONE} CPU µs/op`,
            `${FOUR} CPU µs/op`,
            `${FOUR_KEY} CPU µs/op`,
            `${AUTO} CPU µs/op`
          ],
          rows
        ),
        "",
        `The self-sizing client after the table: ${auto.summary()}.`
      ].join("\n")
    })
  )

/**
 * Callers of the simulated-server table.
 *
 * @since 0.1.0
 * @category engines
 */
export const simulatedCallers: ReadonlyArray<number> = [16, 64]

/**
 * Engines against the simulated FalkorDB (`GRAPH.RO_QUERY … RETURN 1`, `workers` slots of
 * `serviceMicros` each): 1 engine, 4 engines and a self-sizing client of up to 8 (spread),
 * each cell `millis` long (the self-sizing client starts each cell with the engines it kept
 * from the one before, fewer if it was idle meanwhile), with the ceiling min(W, C) ÷ service time.
 *
 * @since 0.1.0
 * @category engines
 */
export const runSimulated = (options: {
  readonly runs: number
  readonly millis: number
  readonly workers: number
  readonly serviceMicros: number
}): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const sim = yield* Simulation.start({ workers: options.workers, serviceMicros: options.serviceMicros })
      const one = yield* RedisConnection.makeMultiplexed({ url: sim.url, connections: 1 })
      const four = yield* RedisConnection.makeMultiplexed({ url: sim.url, connections: 4, routing: "spread" })
      const auto = yield* sized(sim.url, 8, "spread")
      const query = ["GRAPH.RO_QUERY", "bench-graph", "RETURN 1 AS fast", "--compact"]
      const columns: ReadonlyArray<readonly [string, RedisConnection.RedisConnection["Service"]]> = [
        [ONE, one],
        ["4 engines (spread)", four],
        ["auto 1–8 (spread)", auto.service]
      ]
      const lines: Array<Array<string>> = []
      for (const count of simulatedCallers) {
        const rates = new Map<string, Array<number>>()
        const ends: Array<string> = []
        for (let r = 0; r < options.runs; r++) {
          for (const [name, service] of columns) {
            const sample = yield* Harness.runEffectLoop(count, options.millis, () => service.execute(query))
            const list = rates.get(name) ?? []
            list.push(Harness.rate(sample))
            rates.set(name, list)
            if (service === auto.service) ends.push(auto.summary().split(";")[0])
          }
        }
        const median = (name: string) => Harness.median(rates.get(name) ?? [])
        lines.push([
          String(count),
          ...columns.map(([name]) => Harness.formatRate(median(name))),
          Harness.formatRatio(median("auto 1–8 (spread)") / median(ONE)),
          ends.join(", "),
          `${Harness.formatRate(sim.ceiling(1))} / ${Harness.formatRate(sim.ceiling(4))} / ${Harness.formatRate(sim.ceiling(8))}`
        ])
      }
      return [
        `### Engines against a server that runs one query per connection at a time (simulated FalkorDB, ${options.workers} workers × ${options.serviceMicros} µs, ${sim.where})`,
        "",
        Harness.table(
          [
            "callers",
            ...columns.map(([name]) => `${name} q/s`),
            "auto ÷ 1",
            "auto engines at the end of each cell",
            "ceiling 1 / 4 / 8 sockets"
          ],
          lines
        ),
        "",
        `Each cell runs ${options.millis} ms, ${options.runs}×; the self-sizing client: ${auto.summary()}.`
      ].join("\n")
    })
  )
