// Against the real FalkorDB of the run (FALKORDB_URL): the schema cache while the schema moves.
// Writers add labels and properties while readers stream the graph; a graph is deleted and
// re-created by another client while this one keeps querying. Every row must name exactly what
// was written: a node's label and property key carry the same number as its value.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { Node } from "../src/Value.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-live-schema:${name}:${process.pid}`

/** A node written as `(:L<k> {p<k>: k, k: k})` reads back with those names, or this says what is wrong. */
const misread = (n: Node): string | undefined => {
  const k = n.properties.k as number
  if (n.labels.length !== 1 || n.labels[0] !== `L${k}`) return `node ${n.id}: labels ${n.labels} for k=${k}`
  if (n.properties[`p${k}`] !== k) return `node ${n.id}: properties ${JSON.stringify(n.properties)} for k=${k}`
  return undefined
}

describe.skipIf(!url)("live schema cache (FALKORDB_URL)", () => {
  it.live(
    "writers add labels and properties while readers stream: every row names what was written",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("growth"))
          yield* g.query("CREATE (:L0 {p0: 0, k: 0})")
          const WRITES = 120
          let written = 1
          const problems: Array<string> = []
          let rowsRead = 0
          // Each write brings a new label and a new property key (their ids grow as the server assigns them).
          const writer = (offset: number) =>
            Effect.forEach(
              Array.from({ length: WRITES / 2 }, (_, i) => 1 + offset + 2 * i),
              (k) =>
                Effect.tap(g.query(`UNWIND range(1, 50) AS x CREATE (:L${k} {p${k}: ${k}, k: ${k}})`), () =>
                  Effect.sync(() => {
                    written++
                  })
                ),
              { discard: true }
            )
          const reader = Effect.gen(function* () {
            while (written <= WRITES) {
              yield* g.roStream("MATCH (n) RETURN n").pipe(
                Stream.runForEach((row) =>
                  Effect.sync(() => {
                    rowsRead++
                    const problem = misread(row.get("n") as Node)
                    if (problem !== undefined) problems.push(problem)
                  })
                )
              )
            }
          })
          yield* Effect.all([writer(0), writer(1), reader, reader], { concurrency: "unbounded", discard: true })
          assert.deepStrictEqual(problems.slice(0, 5), [])
          assert.isAbove(rowsRead, 1000)
          // Refreshes were incremental and few: far fewer than the rows that needed new names.
          assert.isAtLeast(g.schema.refreshes.labels, 1)
          assert.isBelow(g.schema.refreshes.labels + g.schema.refreshes.propertyKeys, rowsRead)
          const all = yield* g.roQuery("MATCH (n) RETURN n")
          assert.strictEqual(all.rows.length, 1 + WRITES * 50)
          for (const row of all.rows) assert.isUndefined(misread(row.get("n") as Node))
          yield* g.delete()
        })
      ),
    120_000
  )

  it.live(
    "a graph deleted and re-created by another client while this one queries: never mislabeled (version check)",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const name = graphName("replaced")
          const g = yield* fresh(db, name)
          yield* g.query("CREATE (:L0 {p0: 0, k: 0})")
          let generation = 0
          const problems: Array<string> = []
          let reads = 0
          const reader = Effect.gen(function* () {
            while (generation < 6) {
              const result = yield* Effect.result(g.roQuery("MATCH (n) RETURN n"))
              // Between the other client's delete and its create the graph is gone.
              if (result._tag === "Failure") {
                if (result.failure.reason._tag !== "UnknownGraph") problems.push(result.failure.message)
                continue
              }
              reads++
              for (const row of result.success.rows) {
                const problem = misread(row.get("n") as Node)
                if (problem !== undefined) problems.push(problem)
              }
            }
          })
          // Another client (its own cache) replaces the graph: the same ids now name other labels and keys.
          const replacer = run(
            Effect.gen(function* () {
              const other = (yield* FalkorDB.FalkorDB).graph(name)
              for (let gen = 1; gen <= 6; gen++) {
                yield* Effect.sleep(40)
                yield* other.delete()
                yield* other.query(
                  `CREATE (:L${gen} {p${gen}: ${gen}, k: ${gen}}), (:L${gen + 10} {p${gen + 10}: ${gen + 10}, k: ${gen + 10}})`
                )
                generation = gen
              }
            })
          )
          yield* Effect.all([reader, reader, replacer], { concurrency: "unbounded", discard: true })
          assert.deepStrictEqual(problems.slice(0, 5), [])
          assert.isAbove(reads, 6)
          assert.isAtLeast(g.schema.replacements, 1)
          const last = yield* g.roQuery("MATCH (n) RETURN n.k AS k ORDER BY k")
          assert.deepStrictEqual(
            last.rows.map((r) => r.get("k")),
            [6, 16]
          )
          yield* g.delete()
        }),
        { schemaVersionCheck: true }
      ),
    60_000
  )
})
