// Against a real FalkorDB: set FALKORDB_URL (e.g. redis://127.0.0.1:6379) to run; skipped otherwise.
// Same scenarios as the recorded-reply tests: values, parameters, errors, streams, typed rows,
// the schema cache (concurrency and a graph replaced by someone else), delete and copy.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import { Edge, Node, Path, type Point } from "../src/Value.ts"
import * as Value from "../src/Value.ts"
import { fresh, run } from "./integration.ts"

const slowQuery = "UNWIND range(1, 3000000) AS x WITH x ORDER BY x DESC RETURN x LIMIT 1"
const graphName = (name: string) => `effect-falkordb-it:${name}:${process.pid}`

describe.skipIf(!process.env.FALKORDB_URL)("FalkorDB integration (FALKORDB_URL)", () => {
  it.live("every value type round-trips through a real server", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("values"))
        yield* g.query(
          "CREATE (:Person {name: 'Alice', age: 30})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob', age: 25})"
        )
        const scalars = yield* g.roQuery(
          "RETURN null AS n, 'text' AS s, 9223372036854775807 AS big, true AS t, 3.5 AS d, 1.0/0 AS inf, [1, 'two'] AS a, {k: 'v'} AS m, point({latitude: 32.07, longitude: 34.78}) AS p, vecf32([1.5, -0.25]) AS v"
        )
        const row = scalars.rows[0]!
        assert.strictEqual(row.get("n"), null)
        assert.strictEqual(row.get("s"), "text")
        assert.strictEqual(row.get("big"), 9223372036854775807n)
        assert.strictEqual(row.get("t"), true)
        assert.strictEqual(row.get("d"), 3.5)
        assert.strictEqual(row.get("inf"), Infinity)
        assert.deepStrictEqual(row.get("a"), [1, "two"])
        assert.deepStrictEqual(row.get("m"), { k: "v" })
        assert.strictEqual((row.get("p") as Point).latitude, Math.fround(32.07))
        assert.deepStrictEqual(Array.from(row.get("v") as Float32Array), [1.5, -0.25])
        const entities = yield* g.roQuery("MATCH p = (a:Person {name: 'Alice'})-[r:KNOWS]->(b) RETURN a, r, b, p")
        const [a, r, , p] = entities.rows[0]!.values
        assert.instanceOf(a, Node)
        assert.deepStrictEqual((a as Node).labels, ["Person"])
        assert.deepStrictEqual((a as Node).properties, { name: "Alice", age: 30 })
        assert.instanceOf(r, Edge)
        assert.strictEqual((r as Edge).relationshipType, "KNOWS")
        assert.instanceOf(p, Path)
        assert.strictEqual((p as Path).length, 1)
        yield* g.delete()
      })
    )
  )

  it.live("parameters survive hostile strings; statistics are typed", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("params"))
        const hostile = "' RETURN 1 AS pwned // \\ \" ` \n 😀"
        const created = yield* g.query(cypher`CREATE (n:T {s: ${hostile}}) RETURN n.s AS s`)
        assert.strictEqual(created.rows[0]!.get("s"), hostile)
        assert.strictEqual(created.statistics.nodesCreated, 1)
        assert.strictEqual(created.statistics.propertiesSet, 1)
        // Every code point survives the round trip, a leading U+FEFF included.
        const bom = "\uFEFF\uFEFFstarts with byte-order marks"
        const echoed = yield* g.roQuery("RETURN $s AS s, {k: $s} AS m", { s: bom })
        assert.deepStrictEqual(echoed.rows[0]!.values, [bom, { k: bom }])
        const listed = yield* g.roQuery("RETURN $l AS l, $m AS m", { l: [1, 2.5, "x"], m: { "my key": 1n } })
        assert.deepStrictEqual(listed.rows[0]!.values, [[1, 2.5, "x"], { "my key": 1 }])
        yield* g.delete()
      })
    )
  )

  it.live("errors are classified", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("errors"))
        assert.strictEqual((yield* Effect.flip(g.roQuery("RETURN 1"))).reason._tag, "UnknownGraph")
        yield* g.query("CREATE ()")
        assert.strictEqual((yield* Effect.flip(g.query("MATCH (n RETURN n"))).reason._tag, "Syntax")
        assert.strictEqual((yield* Effect.flip(g.roQuery("CREATE ()"))).reason._tag, "ReadOnlyQuery")
        assert.strictEqual((yield* Effect.flip(g.roQuery("RETURN nosuch()"))).reason._tag, "UnknownFunction")
        assert.strictEqual((yield* Effect.flip(g.roQuery("CALL db.nosuch()"))).reason._tag, "UnknownProcedure")
        // The server checks its TIMEOUT between operations: a sort of 3 million values is stopped
        // promptly (measured on 4.18.11: "Query timed out" after about 0.7 s), unlike a single
        // count over 100 million values, which ran 26 s before the check.
        const slow = yield* Effect.flip(g.roQuery(slowQuery, undefined, { timeout: 1 }))
        assert.deepInclude(slow.reason, {
          _tag: "Timeout",
          origin: "server",
          timeout: 1,
          stillRunning: false,
          serverMessage: "Query timed out"
        })
        yield* g.delete()
      })
    )
  )

  it.live("a query the client stopped waiting for is a client Timeout; the next query runs on another connection", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("client-timeout"))
        yield* g.query("CREATE ()")
        const gaveUp = yield* Effect.flip(g.roQuery(slowQuery, undefined, { clientTimeout: "20 millis" }))
        assert.deepInclude(gaveUp.reason, { _tag: "Timeout", origin: "client", stillRunning: true })
        // The slow query still runs on its connection; this one is steered to another and answers at once.
        const quick = yield* g.roQuery("RETURN 1 AS one")
        assert.strictEqual(quick.rows[0]!.get("one"), 1)
        yield* g.delete()
      })
    )
  )

  it.live("streams and typed rows", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("stream"))
        yield* g.query("UNWIND range(1, 5000) AS i CREATE (:Item {i: i, name: 'item' + toString(i)})")
        const count = yield* g.roStream("MATCH (n:Item) RETURN n").pipe(Stream.runCount)
        assert.strictEqual(count, 5000)
        const Item = Schema.Struct({
          n: Value.nodeProperties(Schema.Struct({ i: Schema.Number, name: Schema.String }))
        })
        const typed = yield* g
          .roQueryAs(Item, "MATCH (n:Item) WHERE n.i <= 3 RETURN n ORDER BY n.i")
          .pipe(Stream.runCollect)
        assert.deepStrictEqual(
          Array.from(typed, (r) => r.n.i),
          [1, 2, 3]
        )
        const bad = yield* Effect.flip(
          Stream.runCollect(g.roQueryAs(Schema.Struct({ x: Schema.String }), "RETURN 1 AS x"))
        )
        assert.deepInclude(bad.reason, { _tag: "RowDecode", column: "x" })
        yield* g.delete()
      })
    )
  )

  it.live("schema cache: concurrent decoders share one refresh per kind", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("schema-concurrency"))
        yield* g.query("CREATE (:Person {name: 'a'})")
        const results = yield* Effect.forEach(Array.from({ length: 16 }), () => g.roQuery("MATCH (n) RETURN n"), {
          concurrency: "unbounded"
        })
        for (const r of results) assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["Person"])
        assert.deepStrictEqual(g.schema.refreshes, { labels: 1, relationshipTypes: 0, propertyKeys: 1 })
        yield* g.delete()
      })
    )
  )

  it.live("schema cache: a graph deleted and re-created by someone else is not mislabeled (version check)", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const name = graphName("schema-replaced")
        const g = yield* fresh(db, name)
        yield* g.query("CREATE (:Person {name: 'a'})")
        const before = yield* g.roQuery("MATCH (n) RETURN n")
        assert.deepStrictEqual((before.rows[0]!.get("n") as Node).labels, ["Person"])
        // Someone else (another client, its own cache) deletes and re-creates the graph.
        yield* run(
          Effect.gen(function* () {
            const other = (yield* FalkorDB.FalkorDB).graph(name)
            yield* other.delete()
            yield* other.query("CREATE (:Movie {title: 't'})")
          })
        )
        const after = yield* g.roQuery("MATCH (n) RETURN n")
        assert.deepStrictEqual((after.rows[0]!.get("n") as Node).labels, ["Movie"])
        assert.deepStrictEqual((after.rows[0]!.get("n") as Node).properties, { title: "t" })
        assert.isAtLeast(g.schema.replacements, 1)
        yield* g.delete()
      }),
      { schemaVersionCheck: true }
    )
  )

  it.live("copy, list, explain, profile and slowlog", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("admin"))
        yield* fresh(db, graphName("admin-copy"))
        yield* g.query("CREATE (:A {x: 1})")
        const copy = yield* g.copy(graphName("admin-copy"))
        const names = yield* db.list()
        assert.isTrue(names.includes(copy.name))
        const copied = yield* copy.roQuery("MATCH (n:A) RETURN n.x AS x")
        assert.strictEqual(copied.rows[0]!.get("x"), 1)
        const plan = yield* g.explain("MATCH (n:A) RETURN n")
        assert.isAbove(plan.lines.length, 0)
        const profile = yield* g.profile("MATCH (n:A) RETURN n")
        assert.isDefined(profile.roots[0]!.recordsProduced)
        yield* g.slowlog()
        yield* copy.delete()
        yield* g.delete()
      })
    )
  )
})
