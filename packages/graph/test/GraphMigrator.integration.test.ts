// Against a real FalkorDB: set FALKORDB_URL to run; skipped otherwise. The migrator's lock and
// record (8 migrators on 8 separate clients apply each migration once), failures, bad input,
// the loaders, and ensureIndexes / ensureConstraints on a real server.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import * as GraphMigrator from "../src/GraphMigrator.ts"
import * as MigrationError from "../src/MigrationError.ts"
import { fresh, run as runWith, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-migrate:${name}:${process.pid}`
const run = <A, E>(effect: Effect.Effect<A, E, FalkorDB.FalkorDB>) => runWith(effect, { connections: 2 })

/** A fresh graph and no record or lock left from an earlier run. */
const setup = (name: string) =>
  Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    const graph = yield* fresh(db, graphName(name))
    const key = GraphMigrator.defaultKey(graph.name)
    yield* db.connection.execute(["DEL", key, `${key}:lock`])
    return { db, graph, key }
  })

const reasonOf = (e: unknown) => (MigrationError.isMigrationError(e) ? e.reason : undefined)

/** `MERGE`s a node counting how often migration `id` ran. */
const counting = (id: number) =>
  cypher`MERGE (c:Applied {id: ${id}}) ON CREATE SET c.runs = 1 ON MATCH SET c.runs = c.runs + 1`

const runsOf = (name: string) =>
  Effect.map(
    FalkorDB.FalkorDB.use((db) =>
      db.graph(name).roQuery("MATCH (c:Applied) RETURN c.id AS id, c.runs AS runs ORDER BY id")
    ),
    (r) => r.rows.map((row) => [row.get("id"), row.get("runs")])
  )

describe.skipIf(!url)("GraphMigrator against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("8 migrators on 8 separate clients started at once apply each migration exactly once", () =>
    Effect.gen(function* () {
      const { graph, key } = yield* run(setup("concurrent"))
      let effectRuns = 0
      const loader = GraphMigrator.fromRecord<FalkorDB.FalkorDB>({
        "1_text": `MERGE (c:Applied {id: 1}) ON CREATE SET c.runs = 1 ON MATCH SET c.runs = c.runs + 1`,
        "2_effect": Effect.gen(function* () {
          effectRuns++
          // Long enough for every other migrator to be waiting on the lock meanwhile.
          yield* Effect.sleep("100 millis")
          const db = yield* FalkorDB.FalkorDB
          yield* db.graph(graph.name).query(counting(2))
        }),
        "3_function": (g) => g.query(counting(3)),
        "10_list": [counting(10), "MATCH (c:Applied {id: 10}) SET c.listed = true"]
      })
      const results = yield* Effect.all(
        Array.from({ length: 8 }, () =>
          // Each migrator has its own client: its own connections, its own lock token.
          runWith(GraphMigrator.run({ graph: graph.name, loader, lockTtl: "2 seconds" }), { connections: 1 })
        ),
        { concurrency: "unbounded" }
      )
      const applied = results.flat().map(([id]) => id)
      assert.deepStrictEqual(
        applied.sort((a, b) => a - b),
        [1, 2, 3, 10]
      )
      // One migrator applied all of them (it held the lock); the others found nothing to do.
      assert.strictEqual(results.filter((r) => r.length > 0).length, 1)
      assert.deepStrictEqual(
        results.find((r) => r.length > 0),
        [
          [1, "text"],
          [2, "effect"],
          [3, "function"],
          [10, "list"]
        ]
      )
      assert.strictEqual(effectRuns, 1)
      const runs = yield* run(runsOf(graph.name))
      assert.deepStrictEqual(runs, [
        [1, 1],
        [2, 1],
        [3, 1],
        [10, 1]
      ])
      const recorded = yield* run(GraphMigrator.applied({ graph: graph.name }))
      assert.deepStrictEqual(
        recorded.map((m) => [m.id, m.name]),
        [
          [1, "text"],
          [2, "effect"],
          [3, "function"],
          [10, "list"]
        ]
      )
      assert.isTrue(recorded.every((m) => m.appliedAt instanceof Date && !Number.isNaN(m.appliedAt.getTime())))
      // The lock is released, and a later run applies only what is new.
      const lock = yield* run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["EXISTS", `${key}:lock`])))
      assert.strictEqual(lock, 0)
      const more = GraphMigrator.fromRecord({
        "1_text": "RETURN 1",
        "11_more": counting(11)
      })
      const later = yield* run(GraphMigrator.run({ graph: graph.name, loader: more }))
      assert.deepStrictEqual(later, [[11, "more"]])
    })
  )

  it.live("the lease is renewed while a migration outlasts lockTtl: a waiting migrator does not take over", () =>
    Effect.gen(function* () {
      const { graph } = yield* run(setup("renewal"))
      let started = 0
      const loader = GraphMigrator.fromRecord<FalkorDB.FalkorDB>({
        "1_slow": Effect.gen(function* () {
          started++
          // 2.5 leases long: without renewals the lock would expire twice meanwhile.
          yield* Effect.sleep("2500 millis")
          yield* FalkorDB.FalkorDB.use((db) => db.graph(graph.name).query(counting(1)))
        })
      })
      const results = yield* Effect.all(
        Array.from({ length: 2 }, () =>
          runWith(GraphMigrator.run({ graph: graph.name, loader, lockTtl: "1 second" }), { connections: 1 })
        ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(started, 1)
      assert.deepStrictEqual(
        results.flat().map(([id]) => id),
        [1]
      )
      assert.deepStrictEqual(yield* run(runsOf(graph.name)), [[1, 1]])
    })
  )

  it.live("a failed migration stops the run, names its id, is not recorded, and the lock is released", () =>
    Effect.gen(function* () {
      const { graph, key } = yield* run(setup("failed"))
      let laterRan = false
      const loader = GraphMigrator.fromRecord({
        "1_ok": counting(1),
        "2_broken": "MATCH (n RETURN n",
        "3_after": Effect.sync(() => {
          laterRan = true
        })
      })
      const error = yield* Effect.flip(run(GraphMigrator.run({ graph: graph.name, loader })))
      const reason = reasonOf(error)
      assert.strictEqual(reason?._tag, "Failed")
      assert.strictEqual((reason as MigrationError.Failed).id, 2)
      assert.strictEqual((reason as MigrationError.Failed).name, "broken")
      assert.match(error.message, /migration 2_broken failed and was not recorded/)
      // The server's error is kept as the cause.
      assert.strictEqual(((reason as MigrationError.Failed).cause as { _tag: string })._tag, "FalkorError")
      assert.isFalse(laterRan)
      const recorded = yield* run(GraphMigrator.applied({ graph: graph.name }))
      assert.deepStrictEqual(
        recorded.map((m) => m.id),
        [1]
      )
      // Fixed, it runs again at once (the failed run released its lock): 2 and 3 only.
      const fixed = GraphMigrator.fromRecord({
        "1_ok": counting(1),
        "2_broken": counting(2),
        "3_after": Effect.sync(() => {
          laterRan = true
        })
      })
      const again = yield* run(GraphMigrator.run({ graph: graph.name, key, loader: fixed, lockTimeout: "1 second" }))
      assert.deepStrictEqual(again, [
        [2, "broken"],
        [3, "after"]
      ])
      assert.isTrue(laterRan)
      assert.deepStrictEqual(yield* run(runsOf(graph.name)), [
        [1, 1],
        [2, 1]
      ])
    })
  )

  it.live("bad input fails before anything runs: an id used twice, a name without an id", () =>
    Effect.gen(function* () {
      const { graph, key } = yield* run(setup("bad-input"))
      let ran = false
      const twice = GraphMigrator.fromRecord({
        "1_people": Effect.sync(() => {
          ran = true
        }),
        "2_seed": "CREATE (:Seed)",
        "01_again": "CREATE (:Again)"
      })
      const duplicate = yield* Effect.flip(run(GraphMigrator.run({ graph: graph.name, loader: twice })))
      const reason = reasonOf(duplicate) as MigrationError.DuplicateId
      assert.strictEqual(reason._tag, "DuplicateId")
      assert.deepStrictEqual(reason.duplicates, [[1, ["people", "again"]]])
      assert.match(duplicate.message, /migration ids used more than once: 1 \(people, again\); nothing was run/)
      const unnamed = GraphMigrator.fromRecord({ "1_people": "CREATE (:P)", seed: "CREATE (:Seed)" })
      const invalid = yield* Effect.flip(run(GraphMigrator.run({ graph: graph.name, loader: unnamed })))
      assert.strictEqual(reasonOf(invalid)?._tag, "InvalidName")
      assert.isFalse(ran)
      // Nothing was sent: no record, no lock, no graph.
      const exists = yield* run(
        FalkorDB.FalkorDB.use((db) => db.connection.execute(["EXISTS", key, `${key}:lock`, graph.name]))
      )
      assert.strictEqual(exists, 0)
    })
  )

  it.live("a lock held by another migrator: Locked after lockTimeout; a lost lease: LockLost, not recorded", () =>
    Effect.gen(function* () {
      const { graph, key } = yield* run(setup("lock"))
      const loader = GraphMigrator.fromRecord({ "1_one": counting(1) })
      yield* run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["SET", `${key}:lock`, "someone", "PX", "30000"])))
      const locked = yield* Effect.flip(
        run(GraphMigrator.run({ graph: graph.name, loader, lockTimeout: "300 millis" }))
      )
      assert.strictEqual(reasonOf(locked)?._tag, "Locked")
      assert.match(locked.message, /held the lock .* for more than 300ms; nothing was run/)
      // Nothing ran: the graph was never created.
      assert.strictEqual(yield* run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["EXISTS", graph.name]))), 0)
      // The other holder's lock is untouched.
      const holder = yield* run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["GET", `${key}:lock`])))
      assert.strictEqual(new TextDecoder().decode(holder as Uint8Array), "someone")
      yield* run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["DEL", `${key}:lock`])))

      // The lease disappears while the migration runs (as when the process stalls past lockTtl).
      const losing = GraphMigrator.fromRecord<FalkorDB.FalkorDB>({
        "1_one": FalkorDB.FalkorDB.use((db) => db.connection.execute(["DEL", `${key}:lock`]))
      })
      const lost = yield* Effect.flip(run(GraphMigrator.run({ graph: graph.name, loader: losing })))
      assert.strictEqual(reasonOf(lost)?._tag, "LockLost")
      assert.deepStrictEqual(yield* run(GraphMigrator.applied({ graph: graph.name })), [])
    })
  )

  it.live("fromFileSystem: .mjs modules and .cypher scripts from a directory, README ignored", () =>
    Effect.gen(function* () {
      const { graph } = yield* run(setup("files"))
      const directory = mkdtempSync(join(tmpdir(), "graph-migrations-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
      writeFileSync(
        join(directory, "2_people.cypher"),
        "// two statements, a ';' inside a string\nCREATE (:Person {name: 'a;b'});\n/* c */ CREATE (:Person {name: 'c'});\n"
      )
      writeFileSync(
        join(directory, "1_module.mjs"),
        "export default (graph) => graph.query(\"CREATE (:Module {from: 'file'})\")\n"
      )
      writeFileSync(join(directory, "README.md"), "not a migration")
      const files = FileSystem.layerNoop({
        readDirectory: () => Effect.sync(() => ["README.md", "2_people.cypher", "1_module.mjs"]),
        readFileString: (path) => Effect.sync(() => readFileSync(path, "utf8"))
      })
      const applied = yield* run(
        GraphMigrator.run({ graph: graph.name, loader: GraphMigrator.fromFileSystem(directory) }).pipe(
          Effect.provide(Layer.merge(files, Path.layer))
        )
      )
      assert.deepStrictEqual(applied, [
        [1, "module"],
        [2, "people"]
      ])
      const rows = yield* run(
        FalkorDB.FalkorDB.use((db) =>
          db
            .graph(graph.name)
            .roQuery("MATCH (n) RETURN labels(n)[0] AS label, coalesce(n.name, n.from) AS value ORDER BY label, value")
        )
      )
      assert.deepStrictEqual(
        rows.rows.map((r) => [r.get("label"), r.get("value")]),
        [
          ["Module", "file"],
          ["Person", "a;b"],
          ["Person", "c"]
        ]
      )
    }).pipe(Effect.scoped)
  )

  it.live("ensureIndexes: creates only what is missing, waits until operational, leaves what exists", () =>
    run(
      Effect.gen(function* () {
        const { graph } = yield* setup("ensure-indexes")
        yield* graph.query("UNWIND range(1, 50) AS i CREATE (:Doc {n: i, title: 'doc ' + toString(i)})")
        yield* graph.indexes.createRange({ label: "Doc", properties: ["n"] })
        const declared: ReadonlyArray<GraphMigrator.IndexDeclaration> = [
          { type: "RANGE", label: "Doc", properties: ["n", "year"] },
          { type: "FULLTEXT", label: "Doc", properties: ["title"] },
          { type: "VECTOR", label: "Doc", property: "emb", dimension: 3, similarityFunction: "cosine" },
          { type: "RANGE", label: "Link", properties: ["weight"], entityType: "RELATIONSHIP" }
        ]
        const first = yield* GraphMigrator.ensureIndexes(graph, declared)
        assert.deepStrictEqual(first.created, [
          { type: "RANGE", label: "Doc", properties: ["year"] },
          declared[1],
          declared[2],
          declared[3]
        ])
        assert.deepStrictEqual(first.existing, [])
        const listed = yield* graph.indexes.list()
        assert.isTrue(listed.every((i) => i.status._tag === "Operational"))
        const doc = listed.find((i) => i.label === "Doc")!
        assert.deepStrictEqual(doc.types, { n: ["RANGE"], year: ["RANGE"], title: ["FULLTEXT"], emb: ["VECTOR"] })
        assert.strictEqual(listed.find((i) => i.label === "Link")?.entityType, "RELATIONSHIP")

        const second = yield* GraphMigrator.ensureIndexes(graph, declared)
        assert.deepStrictEqual(second, { created: [], existing: declared })

        const other = yield* Effect.flip(
          GraphMigrator.ensureIndexes(graph, [
            { type: "VECTOR", label: "Doc", property: "emb", dimension: 4, similarityFunction: "cosine" }
          ])
        )
        assert.strictEqual(reasonOf(other)?._tag, "SchemaMismatch")
        assert.match(other.message, /exists with dimension 3, cosine, not dimension 4, cosine/)

        const bad = yield* Effect.flip(
          GraphMigrator.ensureIndexes(graph, [
            { type: "RANGE", label: "Doc", properties: ["z"] },
            { type: "RANGE", label: "Doc", properties: [] }
          ])
        )
        assert.strictEqual((bad as { reason: { _tag: string } }).reason._tag, "InvalidArgument")
        // Nothing was created for the valid declaration either.
        const after = yield* graph.indexes.list()
        assert.isUndefined(after.find((i) => i.label === "Doc")!.types.z)
      })
    )
  )

  it.live("ensureIndexes and ensureConstraints from 4 clients at once: each created once, the rest existing", () =>
    Effect.gen(function* () {
      const { graph } = yield* run(setup("ensure-concurrent"))
      yield* run(FalkorDB.FalkorDB.use((db) => db.graph(graph.name).query("CREATE (:Item {sku: 1, name: 'a'})")))
      const indexes: ReadonlyArray<GraphMigrator.IndexDeclaration> = [
        { type: "RANGE", label: "Item", properties: ["price"] },
        { type: "FULLTEXT", label: "Item", properties: ["name"] }
      ]
      const constraints = [{ kind: "UNIQUE", label: "Item", properties: ["sku"] }] as const
      const reports = yield* Effect.all(
        Array.from({ length: 4 }, () =>
          runWith(
            FalkorDB.FalkorDB.use((db) =>
              Effect.all([
                GraphMigrator.ensureIndexes(db.graph(graph.name), indexes),
                GraphMigrator.ensureConstraints(db.graph(graph.name), constraints)
              ])
            ),
            { connections: 1 }
          )
        ),
        { concurrency: "unbounded" }
      )
      const created = reports.flatMap(([i]) => i.created.map((d) => `${d.type} ${d.label}`)).sort()
      assert.deepStrictEqual(created, ["FULLTEXT Item", "RANGE Item"])
      assert.strictEqual(reports.flatMap(([, c]) => c.created).length, 1)
      for (const [i, c] of reports) {
        assert.strictEqual(i.created.length + i.existing.length, 2)
        assert.strictEqual(c.created.length + c.existing.length, 1)
      }
      const listed = yield* run(FalkorDB.FalkorDB.use((db) => db.graph(graph.name).constraints.list()))
      assert.deepStrictEqual(
        listed.map((c) => [c.kind, c.properties, c.status]),
        [["UNIQUE", ["sku"], "OPERATIONAL"]]
      )
    })
  )

  it.live("ensureConstraints: unique with its index, mandatory, existing left alone, violations reported", () =>
    run(
      Effect.gen(function* () {
        const { graph } = yield* setup("ensure-constraints")
        yield* graph.query("CREATE (:User {email: 'a@x', name: 'A'}), (:User {email: 'b@x', name: 'B'})")
        const declared = [
          { kind: "UNIQUE", label: "User", properties: ["email"] },
          { kind: "MANDATORY", label: "User", properties: ["name"] }
        ] as const
        const first = yield* GraphMigrator.ensureConstraints(graph, declared)
        assert.deepStrictEqual(first, { created: declared, existing: [] })
        const listed = yield* graph.constraints.list()
        assert.deepStrictEqual(
          listed
            .map((c) => [c.kind, c.label, c.properties, c.status])
            .sort((a, b) => String(b[0]).localeCompare(String(a[0]))),
          [
            ["UNIQUE", "User", ["email"], "OPERATIONAL"],
            ["MANDATORY", "User", ["name"], "OPERATIONAL"]
          ]
        )
        const second = yield* GraphMigrator.ensureConstraints(graph, declared)
        assert.deepStrictEqual(second, { created: [], existing: declared })
        // Data that violates a declared constraint: the constraint FAILED, named.
        yield* graph.query("CREATE (:Team {code: 1}), (:Team {code: 1})")
        const violated = yield* Effect.flip(
          GraphMigrator.ensureConstraints(graph, [{ kind: "UNIQUE", label: "Team", properties: ["code"] }])
        )
        assert.strictEqual((violated as { reason: { _tag: string } }).reason._tag, "ConstraintFailed")
        assert.match(violated.message, /UNIQUE \(:Team \{code\}\)/)
      })
    )
  )
})
