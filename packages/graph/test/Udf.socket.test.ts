// UDF libraries and GRAPH.INFO end to end over real sockets against the FalkorDB recordings
// `udf`, `info`, `admin-info-memory` (4.18.11 and 4.4.0) and `resp3` (4.18.11). Every request
// the client sends here was recorded exactly as sent.
import * as GraphInfo from "../src/GraphInfo.ts"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { serverMessageOf } from "./helpers.ts"
import { withReplay } from "./support/replay.ts"

const mathlib =
  "function add(a, b) { return a + b; }\nfunction greet(s) { return 'hello ' + s; }\nfalkor.register('add', add);\nfalkor.register('greet', greet);"

describe("Udf over recorded replies (udf)", () => {
  it.live("load, list (all, one, with code), call, replace, errors, delete, flush", () =>
    Effect.gen(function* () {
      const run = yield* withReplay("udf", (db) =>
        Effect.gen(function* () {
          const udf = db.udf
          const graph = db.graph("udf")
          yield* udf.flush()
          const none = yield* udf.list()
          yield* udf.load("mathlib", mathlib)
          const all = yield* udf.list()
          const one = yield* udf.list({ library: "mathlib" })
          const withCode = yield* udf.list({ library: "mathlib", withCode: true })
          const called = yield* graph.query("RETURN mathlib.add(1, 2) AS three, mathlib.greet('world') AS g")
          yield* graph.query("UNWIND [1, 2, 3] AS x RETURN mathlib.add(x, 0.5) AS y")
          const noSuch = yield* Effect.flip(graph.query("RETURN mathlib.nosuch(1) AS n"))
          const exists = yield* Effect.flip(
            udf.load("mathlib", "function add(a, b) { return a - b; }\nfalkor.register('add', add);")
          )
          yield* udf.load("mathlib", "function add(a, b) { return a * b; }\nfalkor.register('add', add);", {
            replace: true
          })
          const replaced = yield* graph.query("RETURN mathlib.add(3, 4) AS replaced")
          const invalid = yield* Effect.flip(udf.load("badlib", "this is not javascript {"))
          yield* udf.load("emptylib", "var x = 1;")
          yield* udf.load("throwlib", "function boom() { throw new Error('kaboom'); }\nfalkor.register('boom', boom);")
          const thrown = yield* Effect.flip(graph.query("RETURN throwlib.boom() AS b"))
          const three = yield* udf.list()
          yield* udf.delete("mathlib")
          const missing = yield* Effect.flip(udf.delete("mathlib"))
          const gone = yield* Effect.flip(graph.query("RETURN mathlib.add(1, 2) AS gone"))
          yield* udf.flush()
          const empty = yield* udf.list()
          const unnamed = yield* Effect.flip(udf.delete(""))
          return {
            none,
            all,
            one,
            withCode,
            called,
            noSuch,
            exists,
            replaced,
            invalid,
            thrown,
            three,
            missing,
            gone,
            empty,
            unnamed
          }
        })
      )
      const v = run.value
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(v.none, [])
      assert.deepStrictEqual(v.all, [{ name: "mathlib", functions: ["add", "greet"], code: undefined }])
      assert.deepStrictEqual(v.one, v.all)
      assert.deepStrictEqual(v.withCode, [{ name: "mathlib", functions: ["add", "greet"], code: mathlib }])
      assert.deepStrictEqual(v.called.rows[0]!.values, [3, "hello world"])
      assert.strictEqual(v.noSuch.reason._tag, "UnknownFunction")
      assert.strictEqual(v.exists.reason._tag, "UdfExists")
      assert.strictEqual(serverMessageOf(v.exists), "Failed to register, UDF Library 'mathlib' already registered")
      assert.strictEqual(v.replaced.rows[0]!.get("replaced"), 12)
      assert.strictEqual(v.invalid.reason._tag, "UdfInvalid")
      assert.include(serverMessageOf(v.invalid)!, "SyntaxError: expecting ';'")
      assert.strictEqual(v.thrown.reason._tag, "UdfException")
      assert.include(serverMessageOf(v.thrown)!, "kaboom")
      assert.deepStrictEqual(
        v.three.map((l) => [l.name, l.functions]),
        [
          ["mathlib", ["add"]],
          ["emptylib", []],
          ["throwlib", ["boom"]]
        ]
      )
      assert.strictEqual(v.missing.reason._tag, "UdfNotFound")
      assert.strictEqual(v.gone.reason._tag, "UnknownFunction")
      assert.deepStrictEqual(v.empty, [])
      assert.strictEqual(v.unnamed.reason._tag, "InvalidArgument")
      assert.deepStrictEqual(run.sent.slice(0, 3), [
        ["GRAPH.UDF", "FLUSH"],
        ["GRAPH.UDF", "LIST"],
        ["GRAPH.UDF", "LOAD", "mathlib", mathlib]
      ])
      assert.isTrue(run.sent.some((c) => c[0] === "GRAPH.UDF" && c[2] === "REPLACE"))
    })
  )
})

describe("GraphInfo over recorded replies", () => {
  it.live("4.18.11 (info): every section, combined, case-insensitive, unknown sections typed", () =>
    Effect.gen(function* () {
      const run = yield* withReplay("info", (db) =>
        Effect.gen(function* () {
          const info = (sections?: ReadonlyArray<string>) => db.info(sections)
          return {
            all: yield* info(),
            running: yield* info(["RunningQueries"]),
            waiting: yield* info(["WaitingQueries"]),
            pool: yield* info(["ObjectPool"]),
            unknown: yield* Effect.flip(info(["Queries"])),
            upper: yield* info(["RUNNINGQUERIES"]),
            bogus: yield* Effect.flip(info(["bogus"])),
            two: yield* info(["RunningQueries", "WaitingQueries"])
          }
        })
      )
      const v = run.value
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(v.all, {
        runningQueries: [],
        waitingQueries: [],
        objectPool: { uniqueObjects: 0, averageReferences: 0 },
        other: {}
      })
      assert.deepStrictEqual(v.running, {
        runningQueries: [],
        waitingQueries: undefined,
        objectPool: undefined,
        other: {}
      })
      assert.deepStrictEqual(v.waiting.waitingQueries, [])
      assert.isUndefined(v.waiting.runningQueries)
      assert.deepStrictEqual(v.pool.objectPool, { uniqueObjects: 0, averageReferences: 0 })
      assert.strictEqual(v.unknown.reason._tag, "InvalidArgument")
      assert.strictEqual(serverMessageOf(v.unknown), "no section found")
      assert.deepStrictEqual(v.upper.runningQueries, [])
      assert.strictEqual(v.bogus.reason._tag, "InvalidArgument")
      assert.deepStrictEqual(v.two.runningQueries, [])
      assert.deepStrictEqual(v.two.waitingQueries, [])
    })
  )

  it.live("4.18.11 over RESP3 (resp3): the pool average arrives as a double", () =>
    Effect.gen(function* () {
      const run = yield* withReplay("resp3", (db) => GraphInfo.info(db.connection), { protocol: 3 })
      assert.deepStrictEqual(run.value.objectPool, { uniqueObjects: 0, averageReferences: 0 })
      assert.deepStrictEqual(run.value.runningQueries, [])
    })
  )

  it.live("4.4.0 (admin-info-memory): two sections; ObjectPool is not a section there", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        "admin-info-memory",
        (db) =>
          Effect.gen(function* () {
            const all = yield* GraphInfo.info(db.connection)
            const pool = yield* Effect.flip(GraphInfo.info(db.connection, ["ObjectPool"]))
            return { all, pool }
          }),
        { version: "falkordb-4.4.0" }
      )
      assert.deepStrictEqual(run.value.all, {
        runningQueries: [],
        waitingQueries: [],
        objectPool: undefined,
        other: {}
      })
      assert.strictEqual(run.value.pool.reason._tag, "InvalidArgument")
    })
  )
})
