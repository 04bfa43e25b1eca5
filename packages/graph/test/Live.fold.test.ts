// Against the real FalkorDB of the run (FALKORDB_URL): `query` / `roQuery` decode rows as the reply
// is read (`RedisConnection.executeFolded`), on every strategy. The result is the one a whole reply
// gives (`streamRows: false`) for every value type, empty and write-only results, many-chunk
// replies and errors; a cold schema met mid-reply is refreshed once and the rows after it decoded.
import { assert, describe, it } from "@effect/vitest"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { QueryResult } from "../src/Graph.ts"
import type { Node } from "../src/Value.ts"
import { fresh, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-live-fold:${name}:${process.pid}`

interface Counts {
  execute: number
  folded: number
}

/** A graph client over `options`' connection whose folded and whole sends are counted. */
const counted = (options: RedisConnection.LayerOptions, graphOptions: FalkorDB.ClientOptions, counts: Counts) =>
  FalkorDB.layerFromRedisWith(graphOptions).pipe(
    Layer.provide(
      Layer.effect(
        RedisConnection.RedisConnection,
        RedisConnection.RedisConnection.use((inner) =>
          Effect.succeed(
            RedisConnection.makeService({
              ...inner,
              execute: (command, o) => {
                counts.execute++
                return inner.execute(command, o)
              },
              executeFolded: (command, fold, o) => {
                counts.folded++
                return inner.executeFolded!(command, fold, o)
              }
            })
          )
        )
      )
    ),
    Layer.provide(RedisConnection.layer({ url: url!, commandTimeout: "60 seconds", ...options })),
    Layer.fresh
  )

/** What a result says, comparable across clients (the execution time differs per run). */
const comparable = (result: QueryResult) => ({
  columns: result.columns,
  rows: result.rows.map((row) => row.values),
  statistics: { ...result.statistics, executionTimeMs: 0, cachedExecution: false, entries: [] }
})

const QUERIES = [
  "MATCH (a:Person)-[r:KNOWS]->(b:Person) RETURN a, r, b ORDER BY a.name",
  "MATCH p = (:Person)-[:KNOWS]->(:Person) RETURN p ORDER BY length(p)",
  "MATCH (n:Person) RETURN n.name AS name, n.age AS age, n.score AS score, n.tags AS tags, n.ok AS ok, n.at AS at ORDER BY name",
  "RETURN {a: 1, b: [1, 'x', null, 2.5], c: {d: true}} AS m, point({latitude: 1.5, longitude: 2.5}) AS pt, vecf32([1.0, -2.5]) AS v, date('2024-01-02') AS d, localtime('12:34:56') AS t, localdatetime('2024-01-02T03:04:05') AS dt, duration('P1DT2H') AS du, null AS nothing",
  "UNWIND range(1, 20000) AS i RETURN i, 'row-' + toString(i) AS s, i * 0.5 AS f",
  "MATCH (n:Person) WHERE n.age > 1000 RETURN n",
  "MATCH (n:Person) RETURN count(n) AS c"
] as const

describe.skipIf(!url)("query decoded as the reply is read (FALKORDB_URL)", () => {
  for (const [label, options] of [
    ["single", { strategy: "single" }],
    ["pooled (size 2)", { strategy: "pooled", size: 2 }],
    ["multiplexed (4)", { strategy: "multiplexed", connections: 4, routing: "spread" }]
  ] as const) {
    it.live(`${label}: every value type, empty and write results, errors: the same as a whole reply`, () =>
      Effect.gen(function* () {
        const name = graphName(`values-${options.strategy}`)
        const folded: Counts = { execute: 0, folded: 0 }
        const whole: Counts = { execute: 0, folded: 0 }
        const run = <A, E>(
          counts: Counts,
          graphOptions: FalkorDB.ClientOptions,
          effect: Effect.Effect<A, E, FalkorDB.FalkorDB>
        ) => Effect.provide(effect, counted(options, graphOptions, counts))
        yield* run(
          whole,
          { streamRows: false },
          Effect.gen(function* () {
            const g = yield* fresh(yield* FalkorDB.FalkorDB, name)
            yield* g.query(
              "CREATE (:Person {name: 'Alice', age: 30, score: 1.5, tags: ['a', 'b'], ok: true, at: point({latitude: 3.0, longitude: 4.0})})-[:KNOWS {since: 2020, w: 0.25}]->(:Person {name: 'Bob', age: 25, score: -2.0, tags: [], ok: false})"
            )
          })
        )
        whole.execute = 0
        const through = (counts: Counts, graphOptions: FalkorDB.ClientOptions) =>
          run(
            counts,
            graphOptions,
            Effect.gen(function* () {
              const g = (yield* FalkorDB.FalkorDB).graph(name)
              const out: Array<unknown> = []
              for (const q of QUERIES) out.push(comparable(yield* g.roQuery(q)))
              out.push(
                comparable(
                  yield* g.query("CREATE (:Person {name: 'tmp'}) WITH 1 AS x MATCH (t:Person {name: 'tmp'}) DELETE t")
                )
              )
              const failed = yield* Effect.flip(g.roQuery("RETURN nosuchfunction(1)"))
              out.push(failed.reason._tag)
              return out
            })
          )
        const viaFold = yield* through(folded, {})
        const viaWhole = yield* through(whole, { streamRows: false })
        assert.deepStrictEqual(viaFold, viaWhole)
        const rows = (viaFold[4] as ReturnType<typeof comparable>).rows
        assert.strictEqual(rows.length, 20000)
        assert.deepStrictEqual(rows[19999], [20000, "row-20000", 10000])
        // Every query of the folded client went through executeFolded; the whole one never did.
        assert.strictEqual(folded.folded, QUERIES.length + 2)
        assert.strictEqual(whole.folded, 0)
        assert.isAtLeast(whole.execute, QUERIES.length + 2)
        yield* run(
          whole,
          {},
          FalkorDB.FalkorDB.use((db) => db.graph(name).delete())
        )
      })
    )
  }

  it.live("a label and property met for the first time mid-reply: one refresh, then the rest decoded", () =>
    Effect.gen(function* () {
      const name = graphName("cold")
      const counts: Counts = { execute: 0, folded: 0 }
      const other: Counts = { execute: 0, folded: 0 }
      const result = yield* Effect.gen(function* () {
        const g = yield* fresh(yield* FalkorDB.FalkorDB, name)
        yield* g.query("UNWIND range(1, 3000) AS i CREATE (:A {i: i})")
        // The cache learns label A and property i only.
        yield* g.roQuery("MATCH (n:A) RETURN n LIMIT 1")
        const before = { ...g.schema.refreshes }
        // Another client adds a label and a property this one has never seen.
        yield* Effect.provide(
          FalkorDB.FalkorDB.use((db) => db.graph(name).query("UNWIND range(1, 3000) AS j CREATE (:B {j: j})")),
          counted({ strategy: "single" }, {}, other)
        )
        const all = yield* g.roQuery("MATCH (n) RETURN n ORDER BY ID(n)")
        return { all, before, after: { ...g.schema.refreshes } }
      }).pipe(Effect.provide(counted({ strategy: "multiplexed", connections: 2, routing: "spread" }, {}, counts)))
      const nodes = result.all.rows.map((row) => row.get("n") as Node)
      assert.strictEqual(nodes.length, 6000)
      assert.deepStrictEqual(nodes[0]!.labels, ["A"])
      assert.deepStrictEqual(nodes[2999]!.properties, { i: 3000 })
      assert.deepStrictEqual(nodes[3000]!.labels, ["B"])
      assert.deepStrictEqual(nodes[5999]!.properties, { j: 3000 })
      assert.strictEqual(result.after.labels - result.before.labels, 1, "one refresh of the labels")
      assert.strictEqual(result.after.propertyKeys - result.before.propertyKeys, 1, "one refresh of the property keys")
      // The same rows as a whole reply decoded by a client that knew nothing.
      const whole = yield* Effect.provide(
        FalkorDB.FalkorDB.use((db) => db.graph(name).roQuery("MATCH (n) RETURN n ORDER BY ID(n)")),
        counted({ strategy: "single" }, { streamRows: false }, other)
      )
      assert.deepStrictEqual(comparable(result.all).rows, comparable(whole).rows)
      yield* Effect.provide(
        FalkorDB.FalkorDB.use((db) => db.graph(name).delete()),
        counted({ strategy: "single" }, {}, other)
      )
    })
  )
})
