// Against real FalkorDB servers: the administrative calls end to end. What changes server-wide
// state (GRAPH.CONFIG SET, GRAPH.UDF FLUSH) runs on a FalkorDB of its own (Embedded), never on
// the run's shared server (FALKORDB_URL), where other test files run at the same time.
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { PlanOperation } from "../src/Graph.ts"
import { Edge } from "../src/Value.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-live-admin:${name}:${process.pid}`
const tagOf = (e: FalkorError) => e.reason._tag
const slowQuery = "UNWIND range(1, 3000000) AS x WITH x ORDER BY x DESC RETURN x LIMIT 1"

/** Every operation name of a plan, depth first. */
const operations = (roots: ReadonlyArray<PlanOperation>): Array<string> =>
  roots.flatMap((op) => [op.name, ...operations(op.children)])

describe.skipIf(!url)("live admin (FALKORDB_URL)", () => {
  it.live(
    "query / roQuery, explain, profile, slowlog (and reset), memory, list, copy and delete",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("ops"))
          const copyName = graphName("ops-copy")
          yield* fresh(db, copyName)
          const written = yield* g.query("UNWIND range(1, 2000) AS i CREATE (:P {i: i})-[:R {w: i}]->(:Q {i: i})")
          assert.deepInclude(written.statistics, { nodesCreated: 4000, relationshipsCreated: 2000 })
          assert.strictEqual(tagOf(yield* Effect.flip(g.roQuery("CREATE (:X)"))), "ReadOnlyQuery")

          const plan = yield* g.explain("MATCH (p:P)-[:R]->(q:Q) WHERE p.i > $min RETURN count(q) AS n", { min: 10 })
          assert.includeMembers(operations(plan.roots), ["Results", "Aggregate", "Node By Label Scan"])
          assert.isTrue(plan.roots.every((op) => op.recordsProduced === undefined))
          const profile = yield* g.profile("MATCH (p:P) WHERE p.i <= 100 RETURN p.i")
          const results = profile.roots.find((op) => op.name === "Results")!
          assert.strictEqual(results.recordsProduced, 100)
          assert.isAtLeast(results.executionTimeMs!, 0)

          yield* g.slowlogReset()
          yield* g.roQuery(slowQuery)
          const slow = yield* g.slowlog()
          const entry = slow.find((e) => e.query === slowQuery)
          assert.isDefined(entry)
          assert.strictEqual(entry!.command, "GRAPH.RO_QUERY")
          assert.isAbove(entry!.latencyMs, 0)
          assert.isAbove(entry!.timestamp, 1_700_000_000)
          yield* g.slowlogReset()
          assert.deepStrictEqual(yield* g.slowlog(), [])

          const memory = yield* g.memoryUsage({ samples: 100 })
          // Whole megabytes (a graph this small rounds to 0), per label and per type as maps.
          assert.isNumber(memory.total_graph_sz_mb)
          assert.deepStrictEqual(Object.keys(memory.amortized_node_attributes_by_label_sz_mb!).sort(), ["P", "Q"])
          assert.deepStrictEqual(Object.keys(memory.amortized_edge_attributes_by_type_sz_mb!), ["R"])

          const copy = yield* g.copy(copyName)
          assert.includeMembers([...(yield* db.list())], [g.name, copy.name])
          const copied = yield* copy.roQuery("MATCH (:P)-[r:R]->(:Q) RETURN count(r) AS n, max(r.w) AS top")
          assert.deepStrictEqual(copied.rows[0]!.values, [2000, 2000])
          assert.strictEqual(tagOf(yield* Effect.flip(g.copy(copyName))), "Runtime")
          yield* copy.delete()
          assert.notInclude(yield* db.list(), copy.name)
          assert.strictEqual(tagOf(yield* Effect.flip(copy.roQuery("RETURN 1"))), "UnknownGraph")
          assert.strictEqual(tagOf(yield* Effect.flip(copy.delete())), "UnknownGraph")
          yield* g.delete()
        })
      ),
    60_000
  )

  it.live(
    "vector and full-text search over relationships; a write breaking a mandatory constraint is typed; each index kind dropped",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("search"))
          yield* g.query(
            "UNWIND range(1, 30) AS i CREATE (:A {i: i})-[:LINK {note: CASE WHEN i % 3 = 0 THEN 'red fox' ELSE 'blue whale' END, emb: vecf32([toFloat(i), 1.0])}]->(:B {i: i})"
          )
          yield* g.indexes.createVector({
            label: "LINK",
            property: "emb",
            dimension: 2,
            similarityFunction: "euclidean",
            entityType: "RELATIONSHIP"
          })
          yield* g.indexes.createFulltext({ label: "LINK", properties: ["note"], entityType: "RELATIONSHIP" })
          yield* g.indexes.createRange({ label: "A", properties: ["i"] })
          yield* g.indexes.awaitOperational({ timeout: "60 seconds" })
          const near = yield* Stream.runCollect(
            g.search.vectorRelationships({ label: "LINK", property: "emb", k: 2, vector: [7, 1] })
          )
          assert.strictEqual(near.length, 2)
          assert.instanceOf(near[0]!.relationship, Edge)
          assert.deepStrictEqual(Array.from(near[0]!.relationship.properties.emb as Float32Array), [7, 1])
          assert.strictEqual(near[0]!.score, 0)
          const foxes = yield* Stream.runCollect(g.search.fulltextRelationships({ label: "LINK", query: "fox" }))
          assert.strictEqual(foxes.length, 10)
          assert.isTrue(foxes.every((r) => r.relationship.properties.note === "red fox"))

          const mandatory = { kind: "MANDATORY", label: "B", properties: ["i"] } as const
          yield* g.constraints.create(mandatory)
          yield* g.constraints.awaitOperational(mandatory, { timeout: "60 seconds" })
          const violation = yield* Effect.flip(g.query("CREATE (:B {other: 1})"))
          assert.strictEqual(tagOf(violation), "ConstraintViolation")
          assert.strictEqual((yield* g.roQuery("MATCH (b:B) RETURN count(b) AS n")).rows[0]!.get("n"), 30)
          yield* g.constraints.drop(mandatory)

          yield* g.indexes.drop({ type: "VECTOR", label: "LINK", properties: ["emb"], entityType: "RELATIONSHIP" })
          yield* g.indexes.drop({ type: "FULLTEXT", label: "LINK", properties: ["note"], entityType: "RELATIONSHIP" })
          yield* g.indexes.drop({ type: "RANGE", label: "A", properties: ["i"] })
          assert.deepStrictEqual(yield* g.indexes.list(), [])
          yield* g.delete()
        })
      ),
    90_000
  )
})

describe("live admin on a FalkorDB of its own", () => {
  it.live(
    "config get and set (a server TIMEOUT_DEFAULT stops a query, typed), UDF load / call / flush",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make({ requireModule: true })
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const all = yield* db.configGet("*")
          const names = all.map(([name]) => name)
          assert.includeMembers(names, ["TIMEOUT", "TIMEOUT_DEFAULT", "TIMEOUT_MAX", "RESULTSET_SIZE", "THREAD_COUNT"])
          assert.deepStrictEqual(yield* db.configGet("RESULTSET_SIZE"), [["RESULTSET_SIZE", -1]])
          assert.strictEqual(tagOf(yield* Effect.flip(db.configGet("NO_SUCH_SETTING"))), "InvalidArgument")
          assert.strictEqual(tagOf(yield* Effect.flip(db.configSet("THREAD_COUNT", 3))), "InvalidArgument")

          const g = db.graph("timeouts")
          yield* g.query("CREATE ()")
          yield* db.configSet("TIMEOUT_DEFAULT", 50)
          assert.deepStrictEqual(yield* db.configGet("TIMEOUT_DEFAULT"), [["TIMEOUT_DEFAULT", 50]])
          // No timeout of its own: the server's default stops it, and says so.
          const stopped = yield* Effect.flip(g.roQuery(slowQuery))
          assert.deepInclude(stopped.reason, { _tag: "Timeout", origin: "server", serverMessage: "Query timed out" })
          // A query's own TIMEOUT overrides the default (up to TIMEOUT_MAX, unset here).
          const long = yield* g.roQuery(slowQuery, undefined, { timeout: 60_000 })
          assert.strictEqual(long.rows[0]!.get("x"), 3_000_000)
          yield* db.configSet("RESULTSET_SIZE", 2)
          const cut = yield* g.roQuery("UNWIND range(1, 10) AS x RETURN x")
          assert.deepStrictEqual(
            cut.rows.map((r) => r.get("x")),
            [1, 2]
          )

          yield* db.udf.load("mathlib", "function twice(x) { return 2 * x; }\nfalkor.register('twice', twice);")
          yield* db.udf.load(
            "strlib",
            "function shout(s) { return s.toUpperCase(); }\nfalkor.register('shout', shout);"
          )
          const called = yield* g.roQuery("RETURN mathlib.twice(21) AS n, strlib.shout('hi') AS s")
          assert.deepStrictEqual(called.rows[0]!.values, [42, "HI"])
          assert.deepStrictEqual((yield* db.udf.list()).map((l) => l.name).sort(), ["mathlib", "strlib"])
          yield* db.udf.flush()
          assert.deepStrictEqual(yield* db.udf.list(), [])
          assert.strictEqual(tagOf(yield* Effect.flip(g.roQuery("RETURN mathlib.twice(1)"))), "UnknownFunction")
        }).pipe(Effect.provide(Layer.fresh(FalkorDB.layer({ url: server.url, connections: 2 }))))
      }),
    60_000
  )
})
