/**
 * Batched lookups against a real FalkorDB (issue #23, item 7): N callers each looking users up
 * by id in a closed loop, through `GraphResolver.findById` (the lookups of one tick become one
 * `UNWIND` query; the default `maxBatchSize` 128, and 1024) against the same lookups as single
 * queries (`MATCH (u:User {id: $id})`), at 1, 64 and 1024 callers; and `GraphModel` inserts, batched by `makeResolvers` against one
 * `repository.insert` per caller.
 *
 * Per cell (median of the runs): lookups (or inserts) per second, graph queries sent per lookup
 * (the round trips: counted on the query function handed to the resolver or repository), and the
 * client's CPU µs per lookup (`process.cpuUsage`, the whole process).
 *
 * Run: node --conditions=@effect-falkordb/source packages/bench/src/main.ts --only=resolver [--quick]
 *
 * @since 0.1.0
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import type { Graph } from "@effect-falkordb/graph/Graph"
import * as GraphModel from "@effect-falkordb/graph/GraphModel"
import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Model } from "effect/schema"
import * as Harness from "./harness.ts"

const USERS = 10_000
const User = Schema.Struct({ id: Schema.Int, name: Schema.String })

class Account extends Model.Class<Account>("Account")({
  id: Model.GeneratedByApp(Schema.String),
  owner: Schema.String,
  balance: Schema.Int
}) {}

/** A graph whose queries are counted. */
const counted = (graph: Graph) => {
  const counter = { queries: 0 }
  const queries: GraphModel.Queries = {
    query: (query, parameters, options) => {
      counter.queries++
      return graph.query(query, parameters, options)
    },
    roQuery: (query, parameters, options) => {
      counter.queries++
      return graph.roQuery(query, parameters, options)
    }
  }
  return { counter, queries }
}

interface Cell {
  readonly rate: number
  readonly queriesPerOp: number
  readonly cpuMicrosPerOp: number
}

/** `callers` fibers run `op` until `millis` have passed: rate, queries per op and CPU per op. */
const loop = (
  counter: { queries: number },
  callers: number,
  millis: number,
  op: (caller: number, i: number) => Effect.Effect<unknown, unknown>
): Effect.Effect<Cell, unknown> =>
  Effect.gen(function* () {
    const queriesBefore = counter.queries
    let ops = 0
    const measured = yield* Harness.cpuLoop(callers, millis, (caller, i) =>
      Effect.map(op(caller, i), () => {
        ops++
      })
    )
    return { ...measured, queriesPerOp: (counter.queries - queriesBefore) / Math.max(ops, 1) }
  })

/** Interleaved rounds of every variant at every caller count; markdown rows. */
const table = (
  callerCounts: ReadonlyArray<number>,
  variants: ReadonlyArray<readonly [string, (callers: number, millis: number) => Effect.Effect<Cell, unknown>]>,
  options: { readonly runs: number; readonly millis: number; readonly warmupMillis: number }
) =>
  Effect.gen(function* () {
    for (const [, run] of variants) yield* run(8, options.warmupMillis)
    const samples = new Map<string, Array<Cell>>()
    for (let round = 0; round < options.runs; round++) {
      for (const callers of callerCounts) {
        for (const [name, run] of variants) {
          const key = `${callers}/${name}`
          samples.set(key, [...(samples.get(key) ?? []), yield* run(callers, options.millis)])
        }
      }
    }
    const rows: Array<Array<string>> = []
    for (const callers of callerCounts) {
      const median = (name: string, pick: (cell: Cell) => number) =>
        Harness.median((samples.get(`${callers}/${name}`) ?? []).map(pick))
      const baseCpu = median(variants[0]![0], (cell) => cell.cpuMicrosPerOp)
      const baseRate = median(variants[0]![0], (cell) => cell.rate)
      for (const [name] of variants) {
        rows.push([
          String(callers),
          name,
          Harness.formatRate(median(name, (cell) => cell.rate)),
          Harness.formatRatio(median(name, (cell) => cell.rate) / baseRate),
          median(name, (cell) => cell.queriesPerOp).toFixed(3),
          Harness.formatMicros(median(name, (cell) => cell.cpuMicrosPerOp)),
          Harness.formatRatio(median(name, (cell) => cell.cpuMicrosPerOp) / baseCpu)
        ])
      }
    }
    return rows
  })

/**
 * Starts a FalkorDB for the run, loads `USERS` users (with a range index on `id`), and measures
 * both tables; markdown. Skipped, saying why, without a FalkorDB module.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: {
  readonly runs: number
  readonly millis: number
  readonly warmupMillis: number
  readonly callers?: ReadonlyArray<number> | undefined
}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const found = yield* Embedded.make({ requireModule: true }).pipe(
        Effect.map((server) => ({ server })),
        Effect.catchReason("EmbeddedError", "ModuleNotFound", (reason) => Effect.succeed({ skipped: reason.message }))
      )
      if ("skipped" in found) return `### Batched lookups (GraphResolver)\n\nSkipped: ${found.skipped}.`
      const { server } = found
      const context = yield* Layer.build(FalkorDB.layer({ url: server.url }))
      const db = context.mapUnsafe.get(FalkorDB.FalkorDB.key) as FalkorDB.FalkorDB["Service"]
      const graph = db.graph("bench-resolver")
      yield* graph.query("UNWIND range(0, $n - 1) AS i CREATE (:User {id: i, name: 'user ' + toString(i)})", {
        n: USERS
      })
      yield* graph.indexes.createRange({ label: "User", properties: ["id"] })
      yield* graph.indexes.createRange({ label: "Account", properties: ["id"] })
      yield* graph.indexes.awaitOperational({ label: "User", timeout: "60 seconds" })

      const { counter, queries } = counted(graph)
      const single = (id: number) =>
        queries.roQuery("MATCH (u:User {id: $id}) RETURN u.id AS id, u.name AS name", { id })
      const finder = (maxBatchSize: number) =>
        GraphResolver.request(
          GraphResolver.findById({
            maxBatchSize,
            Id: Schema.Int,
            Result: User,
            ResultId: (user) => user.id,
            execute: (ids) =>
              queries.roQuery("UNWIND $requests AS r MATCH (u:User {id: r}) RETURN u.id AS id, u.name AS name", {
                requests: ids
              })
          })
        )
      const findById = finder(GraphResolver.defaultMaxBatchSize)
      const findByIdWide = finder(1024)
      const idOf = (caller: number, i: number) => (caller * 7919 + i * 104729) % USERS
      const lookups = yield* table(
        options.callers ?? [1, 64, 1024],
        [
          ["single queries", (callers, millis) => loop(counter, callers, millis, (c, i) => single(idOf(c, i)))],
          [
            "GraphResolver.findById",
            (callers, millis) => loop(counter, callers, millis, (c, i) => findById(idOf(c, i)))
          ],
          [
            "findById, maxBatchSize 1024",
            (callers, millis) => loop(counter, callers, millis, (c, i) => findByIdWide(idOf(c, i)))
          ]
        ],
        options
      )

      const accounts = yield* GraphModel.makeRepository(Account, { graph: queries, label: "Account", idColumn: "id" })
      const resolvers = yield* GraphModel.makeResolvers(Account, { graph: queries, label: "Account", idColumn: "id" })
      const batchedInsert = GraphResolver.request(resolvers.insertVoid)
      let next = 0
      const account = () => ({ id: `a${next++}`, owner: "bench", balance: next })
      const inserts = yield* table(
        [64],
        [
          [
            "repository.insertVoid",
            (callers, millis) => loop(counter, callers, millis, () => accounts.insertVoid(account()))
          ],
          [
            "makeResolvers.insertVoid",
            (callers, millis) => loop(counter, callers, millis, () => batchedInsert(account()))
          ]
        ],
        options
      )

      const header = [
        "callers",
        "variant",
        "per second",
        "rate ÷ single",
        "queries per op",
        "CPU µs/op",
        "CPU ÷ single"
      ]
      return [
        `### Batched lookups and inserts (GraphResolver, GraphModel) on FalkorDB ${server.falkordb?.version} (${server.server.name}-server ${server.version})`,
        "",
        `Closed loops: each caller looks up a user by id (${USERS.toLocaleString("en-US")} users, range index on \`id\`) ` +
          `or inserts an account, then the next. \`queries per op\` counts the graph queries sent (round trips). ` +
          `${options.runs} runs of ${options.millis} ms per cell after a warm-up, interleaved; medians. Client: \`FalkorDB.layer\` defaults (multiplexed, 8 connections). ` +
          `Machine: ${Harness.machine()}.`,
        "",
        Harness.table(header, lookups),
        "",
        Harness.table(header, inserts)
      ].join("\n")
    })
  )
