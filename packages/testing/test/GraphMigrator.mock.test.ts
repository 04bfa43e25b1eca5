// The migrator and the ensure… helpers on FalkorDBMock: Cypher migrations answered by scripts,
// the record and the lock in a RedisMock (ioredis-mock runs the lock's scripts), indexes and
// constraints in the mock's own state. What users get to test their migrations without a server.
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
import type * as MigrationError from "@effect-falkordb/graph/MigrationError"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import * as RedisMock from "@effect-falkordb/testing/RedisMock"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

const scripts: ReadonlyArray<FalkorDBMock.Script> = [
  { query: "CREATE INDEX FOR (p:Person) ON (p.name)", statistics: { indicesCreated: 1 } },
  { query: "MERGE (:Person {name: 'Ada'})", statistics: { nodesCreated: 1 } },
  { query: "MATCH (n RETURN n", error: "errMsg: Invalid input 'R': expected ')' line: 1, column: 10" }
]

const mock = () => FalkorDBMock.layerFromRedis(scripts).pipe(Layer.provide(RedisMock.layer()))

describe("GraphMigrator on FalkorDBMock + RedisMock", () => {
  it.effect("applies each migration once, records it, and the next run applies only new ones", () =>
    Effect.gen(function* () {
      const control = yield* FalkorDBMock.FalkorDBMock
      let effectRuns = 0
      const loader = GraphMigrator.fromRecord({
        "1_index": "CREATE INDEX FOR (p:Person) ON (p.name)",
        "2_seed": ["MERGE (:Person {name: 'Ada'})"],
        "3_effect": Effect.sync(() => {
          effectRuns++
        })
      })
      assert.deepStrictEqual(yield* GraphMigrator.pending({ graph: "social", loader }), [
        [1, "index"],
        [2, "seed"],
        [3, "effect"]
      ])
      // pending runs nothing.
      yield* control.expectNotCalled("CREATE INDEX FOR (p:Person) ON (p.name)")
      const first = yield* GraphMigrator.run({ graph: "social", loader })
      assert.deepStrictEqual(first, [
        [1, "index"],
        [2, "seed"],
        [3, "effect"]
      ])
      assert.deepStrictEqual(yield* GraphMigrator.pending({ graph: "social", loader }), [])
      const second = yield* GraphMigrator.run({ graph: "social", loader })
      assert.deepStrictEqual(second, [])
      assert.strictEqual(effectRuns, 1)
      yield* control.expectCalled("CREATE INDEX FOR (p:Person) ON (p.name)", { times: 1, graph: "social" })
      yield* control.expectCalled("MERGE (:Person {name: 'Ada'})", { times: 1 })
      const recorded = yield* GraphMigrator.applied({ graph: "social" })
      assert.deepStrictEqual(
        recorded.map((m) => [m.id, m.name]),
        [
          [1, "index"],
          [2, "seed"],
          [3, "effect"]
        ]
      )
      // The lock was released.
      const db = yield* FalkorDB.FalkorDB
      assert.strictEqual(yield* db.connection.execute(["EXISTS", "{social}:migrations:lock"]), 0)
    }).pipe(Effect.provide(mock()))
  )

  it.effect("a failing migration is reported with its id and is not recorded", () =>
    Effect.gen(function* () {
      const loader = GraphMigrator.fromRecord({
        "1_index": "CREATE INDEX FOR (p:Person) ON (p.name)",
        "2_broken": "MATCH (n RETURN n",
        "3_seed": "MERGE (:Person {name: 'Ada'})"
      })
      const failed = yield* GraphMigrator.run({ graph: "social", loader, key: "migrations:social" }).pipe(
        Effect.andThen(Effect.die("the run should fail")),
        Effect.catchReason("MigrationError", "Failed", (reason) => Effect.succeed([reason.id, reason.name] as const))
      )
      assert.deepStrictEqual(failed, [2, "broken"])
      assert.deepStrictEqual(
        (yield* GraphMigrator.applied({ graph: "social", key: "migrations:social" })).map((m) => m.id),
        [1]
      )
      const control = yield* FalkorDBMock.FalkorDBMock
      yield* control.expectNotCalled("MERGE (:Person {name: 'Ada'})")
    }).pipe(Effect.provide(mock()))
  )

  it.effect("a migration that throws fails by id; one that is not a migration fails to load, by id", () =>
    Effect.gen(function* () {
      const thrown = yield* Effect.flip(
        GraphMigrator.run({
          graph: "social",
          loader: GraphMigrator.fromRecord({
            "7_throws": () => {
              throw new Error("boom")
            }
          })
        })
      )
      assert.strictEqual((thrown as MigrationError.MigrationError).reason._tag, "Failed")
      assert.match(thrown.message, /migration 7_throws failed and was not recorded: boom/)
      const loaders: ReadonlyArray<readonly [GraphMigrator.Loader<FalkorDB.FalkorDB>, RegExp]> = [
        [GraphMigrator.fromRecord({ "8_number": 42 as never }), /could not load migration 8_number: expected Cypher/],
        [
          GraphMigrator.fromRecord({ "9_empty": [] }),
          /could not load migration 9_empty: the list of statements is empty/
        ],
        [
          GraphMigrator.fromRecord({ "10_blank": ["RETURN 1", "  "] }),
          /could not load migration 10_blank: statement 2 is empty/
        ],
        [
          GraphMigrator.fromGlob({ "./m/11_open.cypher": () => Promise.resolve({ default: "RETURN 'open" }) }),
          /could not load migration 11_open: the .cypher file has an unterminated string starting on line 1/
        ],
        [
          GraphMigrator.fromGlob({ "./m/12_gone.ts": () => Promise.reject(new Error("no such module")) }),
          /could not load migration 12_gone: import failed: Error: no such module/
        ]
      ]
      for (const [loader, message] of loaders) {
        const error = yield* Effect.flip(GraphMigrator.run({ graph: "social", loader }))
        assert.strictEqual((error as MigrationError.MigrationError).reason._tag, "LoadFailed")
        assert.match(error.message, message)
      }
      const misnamed = yield* Effect.flip(
        GraphMigrator.run({
          graph: "social",
          loader: GraphMigrator.fromGlob({ "./m/3-seed.ts": () => Promise.resolve({ default: "RETURN 1" }) })
        })
      )
      assert.strictEqual((misnamed as MigrationError.MigrationError).reason._tag, "InvalidName")
      assert.deepStrictEqual(yield* GraphMigrator.applied({ graph: "social" }), [])
    }).pipe(Effect.provide(mock()))
  )

  it.effect("options out of their domain fail before anything runs", () =>
    Effect.gen(function* () {
      let ran = false
      const loader = GraphMigrator.fromRecord({
        "1_a": Effect.sync(() => {
          ran = true
        })
      })
      const cases: ReadonlyArray<readonly [Partial<GraphMigrator.MigratorOptions>, string]> = [
        [{ graph: "" }, "graph"],
        [{ key: "" }, "key"],
        [{ key: "k", lockKey: "k" }, "lockKey"],
        [{ lockTtl: "10 millis" }, "lockTtl"],
        [{ lockTtl: "Infinity" }, "lockTtl"],
        [{ lockTtl: "soon" as never }, "lockTtl"],
        [{ lockTimeout: "later" as never }, "lockTimeout"]
      ]
      for (const [options, option] of cases) {
        const error = yield* Effect.flip(GraphMigrator.run({ graph: "social", loader, ...options }))
        const reason = (error as MigrationError.MigrationError).reason as MigrationError.InvalidOption
        assert.strictEqual(reason._tag, "InvalidOption")
        assert.strictEqual(reason.option, option)
      }
      assert.isFalse(ran)
    }).pipe(Effect.provide(mock()))
  )

  it.effect("fromGlob: module and .cypher imports, applied in id order", () =>
    Effect.gen(function* () {
      const control = yield* FalkorDBMock.FalkorDBMock
      const loader = GraphMigrator.fromGlob({
        "./migrations/2_seed.cypher": () => Promise.resolve({ default: "MERGE (:Person {name: 'Ada'});\n" }),
        "./migrations/1_index.ts": () => Promise.resolve({ default: "CREATE INDEX FOR (p:Person) ON (p.name)" }),
        "./migrations/helpers.ts": () => Promise.reject(new Error("not a migration, never imported"))
      })
      assert.deepStrictEqual(yield* GraphMigrator.run({ graph: "social", loader }), [
        [1, "index"],
        [2, "seed"]
      ])
      const calls = yield* control.calls
      assert.deepStrictEqual(
        calls.map((c) => c.query),
        ["CREATE INDEX FOR (p:Person) ON (p.name)", "MERGE (:Person {name: 'Ada'})"]
      )
    }).pipe(Effect.provide(mock()))
  )

  it.effect("a migrator waiting for the lock can be interrupted: nothing runs, the holder's lock stays", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.connection.execute(["SET", "{social}:migrations:lock", "someone"])
      let ran = false
      const waiting = yield* Effect.forkChild(
        GraphMigrator.run({
          graph: "social",
          loader: GraphMigrator.fromRecord({
            "1_a": Effect.sync(() => {
              ran = true
            })
          })
        })
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.interrupt(waiting)
      assert.isFalse(ran)
      const holder = yield* db.connection.execute(["GET", "{social}:migrations:lock"])
      assert.strictEqual(new TextDecoder().decode(holder as Uint8Array), "someone")
      // The holder's lock outlasts the default lockTimeout: Locked, nothing run.
      const locked = yield* Effect.forkChild(
        Effect.flip(GraphMigrator.run({ graph: "social", loader: GraphMigrator.fromRecord({ "1_a": Effect.void }) }))
      )
      yield* TestClock.adjust("6 minutes")
      const error = yield* Fiber.join(locked)
      assert.strictEqual((error as MigrationError.MigrationError).reason._tag, "Locked")
      assert.isFalse(ran)
    }).pipe(Effect.provide(mock()))
  )

  it.effect("a record key holding something else is a BadState, not a crash", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.connection.execute(["HSET", "{social}:migrations", "one", "x"])
      const error = yield* Effect.flip(GraphMigrator.applied({ graph: "social" }))
      assert.strictEqual((error as MigrationError.MigrationError).reason._tag, "BadState")
      assert.match(error.message, /the field "one" is not a migration id/)
      yield* db.connection.execute(["DEL", "{social}:migrations"])
      yield* db.connection.execute(["SET", "{social}:migrations", "a string"])
      const wrongType = yield* Effect.flip(
        GraphMigrator.run({ graph: "social", loader: GraphMigrator.fromRecord({ "1_a": Effect.void }) })
      )
      assert.strictEqual((wrongType as MigrationError.MigrationError).reason._tag, "BadState")
    }).pipe(Effect.provide(mock()))
  )

  it.effect("ensureIndexes and ensureConstraints against the mock's own index and constraint state", () =>
    Effect.gen(function* () {
      const graph = (yield* FalkorDB.FalkorDB).graph("users")
      yield* graph.indexes.createRange({ label: "User", properties: ["email"] })
      const indexes = yield* GraphMigrator.ensureIndexes(graph, [
        { type: "RANGE", label: "User", properties: ["email", "name"] },
        { type: "VECTOR", label: "User", property: "emb", dimension: 4, similarityFunction: "cosine" }
      ])
      assert.deepStrictEqual(indexes.created, [
        { type: "RANGE", label: "User", properties: ["name"] },
        { type: "VECTOR", label: "User", property: "emb", dimension: 4, similarityFunction: "cosine" }
      ])
      assert.deepStrictEqual(indexes.existing, [])
      const declared = [
        { kind: "UNIQUE", label: "User", properties: ["email"] },
        { kind: "MANDATORY", label: "User", properties: ["name"] }
      ] as const
      const constraints = yield* GraphMigrator.ensureConstraints(graph, declared)
      assert.deepStrictEqual(constraints, { created: declared, existing: [] })
      assert.deepStrictEqual(yield* GraphMigrator.ensureConstraints(graph, declared), {
        created: [],
        existing: declared
      })
    }).pipe(Effect.provide(FalkorDBMock.layer()))
  )
})
