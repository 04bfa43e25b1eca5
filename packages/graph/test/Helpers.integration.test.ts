// Against a real FalkorDB (4.18): set FALKORDB_URL (e.g. redis://127.0.0.1:6379) to run; skipped
// otherwise. The index, constraint, procedure, search, batch, UDF, GRAPH.INFO and typed-parameter
// helpers, end to end. Index and constraint statuses change over time on a real server, so these
// tests wait (awaitOperational) instead of assuming a status; UDF libraries are server-wide, so
// the test uses its own library name and deletes it (never FLUSH).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import * as Temporal from "../src/Temporal.ts"
import { Node, Path, Point } from "../src/Value.ts"
import { fresh, run as runWith, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-it12:${name}:${process.pid}`
const run = <A, E>(effect: Effect.Effect<A, E, FalkorDB.FalkorDB>) => runWith(effect, { commandTimeout: "60 seconds" })

const tagOf = (e: FalkorError) => e.reason._tag

describe.skipIf(!url)("helpers against a real FalkorDB (FALKORDB_URL)", () => {
  it.live(
    "indexes: create each kind, wait until operational, list typed, search, duplicates and drops",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("indexes"))
          yield* g.query(
            "UNWIND range(1, 200) AS i CREATE (:Doc {n: i, title: 'doc ' + toString(i), emb: vecf32([toFloat(i % 7), toFloat(i % 5), 1.0])})"
          )
          const created = yield* g.indexes.createRange({ label: "Doc", properties: ["n"] })
          assert.strictEqual(created.indicesCreated, 1)
          yield* g.indexes.createVector({
            label: "Doc",
            property: "emb",
            dimension: 3,
            similarityFunction: "euclidean"
          })
          yield* g.indexes.createFulltext({ label: "Doc", properties: ["title"] })
          const ready = yield* g.indexes.awaitOperational({ label: "Doc", timeout: "60 seconds" })
          const doc = ready.find((i) => i.label === "Doc")!
          assert.deepStrictEqual([...doc.properties].sort(), ["emb", "n", "title"])
          assert.deepStrictEqual(doc.types.n, ["RANGE"])
          assert.deepStrictEqual(doc.types.emb, ["VECTOR"])
          assert.deepStrictEqual(doc.types.title, ["FULLTEXT"])
          assert.strictEqual(doc.options.emb!.dimension, 3)
          assert.strictEqual(doc.options.emb!.similarityFunction, "euclidean")
          assert.deepStrictEqual(doc.status, { _tag: "Operational" })

          const near = yield* Stream.runCollect(
            g.search.vectorNodes({ label: "Doc", property: "emb", k: 3, vector: new Float32Array([1, 1, 1]) })
          )
          assert.strictEqual(near.length, 3)
          assert.isTrue(near.every((r) => r.node instanceof Node && typeof r.score === "number"))
          assert.deepStrictEqual(Array.from(near[0]!.node.properties.emb as Float32Array), [1, 1, 1])
          const wrong = yield* Effect.flip(
            Stream.runCollect(g.search.vectorNodes({ label: "Doc", property: "emb", k: 3, vector: [1, 1] }))
          )
          assert.strictEqual(tagOf(wrong), "VectorDimension")
          const text = yield* Stream.runCollect(g.search.fulltextNodes({ label: "Doc", query: "doc" }))
          assert.isAbove(text.length, 0)
          assert.isTrue(text.every((r) => String(r.node.properties.title).startsWith("doc ")))

          assert.strictEqual(
            tagOf(yield* Effect.flip(g.indexes.createRange({ label: "Doc", properties: ["n"] }))),
            "IndexExists"
          )
          const missing = yield* Effect.flip(g.indexes.drop({ type: "RANGE", label: "Doc", properties: ["nothing"] }))
          assert.strictEqual(tagOf(missing), "IndexNotFound")

          yield* g.indexes.createRange({ label: "Odd Label", properties: ["odd prop"] })
          const odd = yield* g.indexes.awaitOperational({ label: "Odd Label", timeout: "30 seconds" })
          assert.deepStrictEqual(odd[0]!.properties, ["odd prop"])

          // Full-text options travel as procedure parameters.
          yield* g.query("CREATE (:Article {body: 'the quick brown fox'})")
          yield* g.indexes.createFulltext({
            label: "Article",
            properties: ["body"],
            language: "english",
            stopwords: ["the"],
            weights: { body: 2.5 }
          })
          const [article] = yield* g.indexes.awaitOperational({ label: "Article", timeout: "30 seconds" })
          assert.strictEqual(article!.language, "english")
          assert.deepStrictEqual(article!.stopwords, ["the"])
          const foxes = yield* Stream.runCollect(g.search.fulltextNodes({ label: "Article", query: "fox" }))
          assert.strictEqual(foxes.length, 1)

          // Relationship indexes: vector and full-text, searched.
          yield* g.query("CREATE (:U)-[:SIM {w: vecf32([1.0, 0.0]), text: 'great movie'}]->(:U)")
          yield* g.indexes.createVector({
            label: "SIM",
            entityType: "RELATIONSHIP",
            property: "w",
            dimension: 2,
            similarityFunction: "cosine"
          })
          yield* g.indexes.createFulltext({ label: "SIM", entityType: "RELATIONSHIP", properties: ["text"] })
          const [sim] = yield* g.indexes.awaitOperational({ label: "SIM", timeout: "30 seconds" })
          assert.strictEqual(sim!.entityType, "RELATIONSHIP")
          const nearest = yield* Stream.runCollect(
            g.search.vectorRelationships({ label: "SIM", property: "w", k: 1, vector: [1, 0] })
          )
          assert.strictEqual(nearest[0]!.relationship.relationshipType, "SIM")
          const reviews = yield* Stream.runCollect(g.search.fulltextRelationships({ label: "SIM", query: "great" }))
          assert.strictEqual(reviews.length, 1)

          assert.strictEqual(
            (yield* g.indexes.drop({ type: "RANGE", label: "Doc", properties: ["n"] })).indicesDeleted,
            1
          )
          yield* g.indexes.drop({ type: "VECTOR", label: "Doc", properties: ["emb"] })
          yield* g.indexes.drop({ type: "FULLTEXT", label: "Doc", properties: ["title"] })
          const left = yield* g.indexes.list()
          assert.isFalse(left.some((i) => i.label === "Doc"))
          yield* g.delete()
        })
      ),
    { timeout: 180_000 }
  )

  it.live(
    "constraints: PENDING, waited until OPERATIONAL, the supporting index created on request, FAILED named",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("constraints"))
          yield* g.query("UNWIND range(1, 500) AS i CREATE (:User {id: i})")
          yield* g.query("CREATE (:Opt {a: 1}), (:Opt {b: 2}), (:P)-[:K {w: 1}]->(:P)")
          const unique = { kind: "UNIQUE", label: "User", properties: ["id"] } as const
          const withoutIndex = yield* Effect.flip(g.constraints.create(unique))
          assert.strictEqual(tagOf(withoutIndex), "MissingIndex")
          assert.strictEqual(yield* g.constraints.create({ ...unique, createIndex: true }), "PENDING")
          const operational = yield* g.constraints.awaitOperational(unique, { timeout: "60 seconds" })
          assert.strictEqual(operational.status, "OPERATIONAL")
          assert.strictEqual(tagOf(yield* Effect.flip(g.constraints.create(unique))), "ConstraintExists")
          const violation = yield* Effect.flip(g.query("CREATE (:User {id: 7})"))
          assert.strictEqual(tagOf(violation), "ConstraintViolation")

          const mandatory = { kind: "MANDATORY", label: "Opt", properties: ["a"] } as const
          yield* g.constraints.create(mandatory)
          const failed = yield* Effect.flip(g.constraints.awaitOperational(mandatory, { timeout: "60 seconds" }))
          assert.strictEqual(tagOf(failed), "ConstraintFailed")
          assert.include(failed.message, "MANDATORY (:Opt {a})")

          const relationship = { kind: "MANDATORY", label: "K", properties: ["w"], entityType: "RELATIONSHIP" } as const
          yield* g.constraints.create(relationship)
          const rel = yield* g.constraints.awaitOperational(relationship, { timeout: "60 seconds" })
          assert.strictEqual(rel.entityType, "RELATIONSHIP")
          const listed = yield* g.constraints.list()
          assert.strictEqual(listed.length, 3)

          yield* g.constraints.drop(unique)
          assert.strictEqual(tagOf(yield* Effect.flip(g.constraints.drop(unique))), "ConstraintNotFound")
          yield* g.constraints.drop(mandatory)
          yield* g.constraints.drop(relationship)
          assert.deepStrictEqual(yield* g.constraints.list(), [])
          yield* g.delete()
        })
      ),
    { timeout: 180_000 }
  )

  it.live("procedures and algorithms: typed results, arguments as parameters, errors typed", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("algorithms"))
        const created = yield* g.query(
          "CREATE (a:City {name:'A'}), (b:City {name:'B'}), (c:City {name:'C'}), (d:City {name:'D'}), (e:City {name:'E'}), (a)-[:ROAD {km: 1.0}]->(b), (b)-[:ROAD {km: 2.0}]->(c), (a)-[:ROAD {km: 5.0}]->(c), (c)-[:ROAD {km: 1.5}]->(d) RETURN a, d"
        )
        const [a, d] = created.rows[0]!.values as [Node, Node]
        const bfs = yield* g.algorithms.bfs({ source: a, maxLevel: 10, relationshipType: "ROAD" })
        assert.deepStrictEqual(bfs.nodes.map((n) => n.properties.name).sort(), ["B", "C", "D"])
        const [best] = yield* Stream.runCollect(
          g.algorithms.shortestPaths({ source: a, target: d.id, relationshipTypes: ["ROAD"], weightProperty: "km" })
        )
        assert.instanceOf(best!.path, Path)
        assert.strictEqual(best!.pathWeight, 4.5)
        const reach = yield* Stream.runCollect(
          g.algorithms.singleSourcePaths({ source: a, relationshipTypes: ["ROAD"], weightProperty: "km", maxLength: 3 })
        )
        assert.isAbove(reach.length, 0)
        const ranks = yield* Stream.runCollect(g.algorithms.pageRank({ label: "City", relationshipType: "ROAD" }))
        assert.strictEqual(ranks.length, 5)
        const components = yield* Stream.runCollect(g.algorithms.wcc())
        assert.strictEqual(new Set(components.map((c) => String(c.componentId))).size, 2)
        const central = yield* Stream.runCollect(g.algorithms.betweenness({ nodeLabels: ["City"] }))
        assert.strictEqual(central.length, 5)
        const communities = yield* Stream.runCollect(g.algorithms.labelPropagation({ maxIterations: 10 }))
        assert.strictEqual(communities.length, 5)
        const stats = yield* g.algorithms.metaStats()
        assert.strictEqual(stats.nodeCount, 5)
        assert.deepStrictEqual({ ...stats.relTypes }, { ROAD: 4 })
        const procedures = yield* g.algorithms.procedures()
        assert.isTrue(procedures.some((p) => p.name === "algo.BFS"))
        assert.isAbove((yield* g.algorithms.functions()).length, 50)
        assert.strictEqual(tagOf(yield* Effect.flip(g.call("db.nosuch"))), "UnknownProcedure")
        assert.strictEqual(
          tagOf(yield* Effect.flip(g.call("algo.pageRank", [1, 2, 3], { yield: ["node"] }))),
          "ProcedureArguments"
        )
        assert.strictEqual(
          tagOf(yield* Effect.flip(g.call("algo.pageRank", ["City", "ROAD"], { yield: ["nosuch"] }))),
          "UnknownOutput"
        )
        const labels = yield* g.call("db.labels", [], { yield: ["label"] })
        assert.deepStrictEqual(
          labels.rows.map((r) => r.get("label")),
          ["City"]
        )
        yield* g.delete()
      })
    )
  )

  it.live("batch: each query its own result or error, a later read sees an earlier write", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("batch"))
        const results = yield* g.batch([
          { query: "CREATE (:B {i: 1})" },
          { query: "MATCH (b:B) RETURN count(b) AS n", readOnly: true },
          { query: "RETURN 1/0 AS boom", readOnly: true },
          { query: "CREATE (:B {i: 2})" },
          { query: "CREATE (:B {i: 3})", readOnly: true },
          { query: "MATCH (b:B) RETURN b.i AS i ORDER BY i", readOnly: true }
        ])
        const [w1, count, boom, w2, refused, final] = results
        assert.isTrue(Result.isSuccess(w1!))
        assert.isTrue(Result.isSuccess(count!) && count.success.rows[0]!.get("n") === 1)
        assert.isTrue(Result.isFailure(boom!) && tagOf(boom.failure) === "Runtime")
        assert.isTrue(Result.isSuccess(w2!))
        assert.isTrue(Result.isFailure(refused!) && tagOf(refused.failure) === "ReadOnlyQuery")
        assert.isTrue(Result.isSuccess(final!) && final.success.rows.map((r) => r.get("i")).join() === "1,2")
        yield* g.delete()
      })
    )
  )

  it.live("UDF libraries (own name, deleted at the end) and GRAPH.INFO", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("udf"))
        const lib = `it12lib${process.pid}`
        yield* db.udf.delete(lib).pipe(Effect.ignore)
        yield* db.udf.load(lib, "function add(a, b) { return a + b; }\nfalkor.register('add', add);")
        const [listed] = yield* db.udf.list({ library: lib, withCode: true })
        assert.strictEqual(listed!.name, lib)
        assert.deepStrictEqual(listed!.functions, ["add"])
        assert.include(listed!.code!, "falkor.register")
        const three = yield* g.query(`RETURN ${lib}.add(1, 2) AS three`)
        assert.strictEqual(three.rows[0]!.get("three"), 3)
        assert.strictEqual(tagOf(yield* Effect.flip(db.udf.load(lib, "var x = 1;"))), "UdfExists")
        yield* db.udf.load(lib, "function boom() { throw new Error('kaboom'); }\nfalkor.register('boom', boom);", {
          replace: true
        })
        assert.strictEqual(tagOf(yield* Effect.flip(g.query(`RETURN ${lib}.boom() AS b`))), "UdfException")
        assert.strictEqual(
          tagOf(yield* Effect.flip(db.udf.load(`${lib}bad`, "this is not javascript {"))),
          "UdfInvalid"
        )
        yield* db.udf.delete(lib)
        assert.strictEqual(tagOf(yield* Effect.flip(db.udf.delete(lib))), "UdfNotFound")

        const info = yield* db.info()
        assert.isArray(info.runningQueries)
        assert.isArray(info.waitingQueries)
        assert.isDefined(info.objectPool)
        assert.strictEqual(tagOf(yield* Effect.flip(db.info(["bogus"]))), "InvalidArgument")
        yield* g.delete().pipe(Effect.ignore)
      })
    )
  )

  it.live("points, vectors and temporal values as parameters round-trip", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("typed"))
        // GRAPH.RO_QUERY refuses a graph that does not exist yet (UnknownGraph): create it first.
        yield* g.query("CREATE (:Seed)")
        const point = new Point(32.07, 34.79)
        const vector = new Float32Array([0.5, -1.25, 3])
        const date = new Temporal.Date(1709164800)
        const time = Temporal.timeOf(23, 59, 59)
        const dateTime = new Temporal.DateTime(1704164645)
        const duration = new Temporal.Duration(-3600)
        const back = yield* g.roQuery(
          cypher`RETURN ${point} AS p, ${vector} AS v, ${date} AS d, ${time} AS t, ${dateTime} AS dt, ${duration} AS du`
        )
        const row = back.rows[0]!
        assert.deepStrictEqual(row.get("p"), point)
        assert.deepStrictEqual(Array.from(row.get("v") as Float32Array), [0.5, -1.25, 3])
        assert.deepStrictEqual(
          [row.get("d"), row.get("t"), row.get("dt"), row.get("du")],
          [date, time, dateTime, duration]
        )
        yield* g.query(cypher`CREATE (:Place {loc: ${new Point(1, 2)}, emb: ${new Float32Array([1, 2, 3])}})`)
        const distance = yield* g.roQuery("MATCH (n:Place) RETURN distance(n.loc, point($q)) AS dist", {
          q: new Point(1, 2)
        })
        assert.strictEqual(distance.rows[0]!.get("dist"), 0)
        yield* g.delete()
      })
    )
  )
})
