// FalkorDBMock answers the commands of the index, constraint, UDF and GRAPH.INFO helpers from
// its own state, so code using them is testable without scripts; scripts still win.
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

describe("FalkorDBMock: indexes, constraints, UDFs, GRAPH.INFO", () => {
  it.effect("indexes and constraints live in the mock; the server's errors where a server gives them", () =>
    Effect.gen(function* () {
      const g = (yield* FalkorDB).graph("users")
      yield* g.indexes.createRange({ label: "User", properties: ["email"] })
      yield* g.indexes.createVector({ label: "User", property: "emb", dimension: 4, similarityFunction: "cosine" })
      yield* g.indexes.createRange({ label: "Odd Label", properties: ["odd prop"] })
      const indexes = yield* g.indexes.awaitOperational({ label: "User", timeout: "1 second" })
      assert.deepStrictEqual(indexes[0]!.properties, ["email", "emb"])
      assert.deepStrictEqual(indexes[0]!.types, { email: ["RANGE"], emb: ["VECTOR"] })
      assert.strictEqual(indexes[0]!.options.emb!.dimension, 4)
      assert.strictEqual(indexes[0]!.options.emb!.similarityFunction, "cosine")
      assert.deepStrictEqual(
        (yield* g.indexes.list()).map((i) => i.label),
        ["User", "Odd Label"]
      )
      const again = yield* Effect.flip(g.indexes.createRange({ label: "User", properties: ["email"] }))
      assert.strictEqual(again.reason._tag, "IndexExists")

      const unique = { kind: "UNIQUE", label: "User", properties: ["name"] } as const
      assert.strictEqual((yield* Effect.flip(g.constraints.create(unique))).reason._tag, "MissingIndex")
      assert.strictEqual(yield* g.constraints.create({ ...unique, createIndex: true }), "PENDING")
      const done = yield* g.constraints.awaitOperational(unique, { timeout: "1 second" })
      assert.strictEqual(done.status, "OPERATIONAL")
      assert.strictEqual((yield* Effect.flip(g.constraints.create(unique))).reason._tag, "ConstraintExists")
      yield* g.constraints.drop(unique)
      assert.strictEqual((yield* Effect.flip(g.constraints.drop(unique))).reason._tag, "ConstraintNotFound")
      yield* g.indexes.drop({ type: "VECTOR", label: "User", properties: ["emb"] })
      const missing = yield* Effect.flip(g.indexes.drop({ type: "VECTOR", label: "User", properties: ["emb"] }))
      assert.strictEqual(missing.reason._tag, "IndexNotFound")
    }).pipe(Effect.provide(FalkorDBMock.layer()))
  )

  it.live("a script for db.indexes() wins, so other statuses can be tested", () =>
    Effect.gen(function* () {
      const g = (yield* FalkorDB).graph("docs")
      const error = yield* Effect.flip(g.indexes.awaitOperational({ label: "Doc", timeout: "200 millis" }))
      assert.strictEqual(error.reason._tag, "WaitTimeout")
      assert.include(error.message, "[Indexing] 10/100: UNDER CONSTRUCTION")
    }).pipe(
      Effect.provide(
        FalkorDBMock.layer([
          {
            query: "CALL db.indexes()",
            rows: [
              {
                label: "Doc",
                properties: ["n"],
                types: { n: ["RANGE"] },
                entitytype: "NODE",
                status: "[Indexing] 10/100: UNDER CONSTRUCTION"
              }
            ]
          }
        ])
      )
    )
  )

  it.effect("UDF libraries and GRAPH.INFO", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB
      yield* db.udf.load("mathlib", "function add(a, b) { return a + b; }\nfalkor.register('add', add);")
      assert.strictEqual((yield* Effect.flip(db.udf.load("mathlib", "var x;"))).reason._tag, "UdfExists")
      yield* db.udf.load("mathlib", "function mul(a, b) { return a * b; }\nfalkor.register('mul', mul);", {
        replace: true
      })
      const [lib] = yield* db.udf.list({ withCode: true })
      assert.deepStrictEqual(lib!.functions, ["mul"])
      assert.include(lib!.code!, "mul")
      yield* db.udf.delete("mathlib")
      assert.strictEqual((yield* Effect.flip(db.udf.delete("mathlib"))).reason._tag, "UdfNotFound")
      const info = yield* db.info()
      assert.deepStrictEqual(info.objectPool, { uniqueObjects: 0, averageReferences: 0 })
      assert.deepStrictEqual(info.runningQueries, [])
      assert.strictEqual((yield* Effect.flip(db.info(["bogus"]))).reason._tag, "InvalidArgument")
    }).pipe(Effect.provide(FalkorDBMock.layer()))
  )
})
