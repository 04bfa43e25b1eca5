// The graph's findAll / findOne / findOneOption and the spelled-out names, through the real
// client on FalkorDBMock.
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Option, Schema, Stream } from "effect"

const Person = Schema.Struct({ name: Schema.String, born: Schema.Int })
const PEOPLE = "MATCH (p:Person) WHERE p.born > $year RETURN p.name AS name, p.born AS born"

const layer = FalkorDBMock.layer([
  {
    query: PEOPLE,
    readOnly: true,
    respond: (call) =>
      call.parameters.year === 1900
        ? {
            rows: [
              { name: "Ada", born: 1915 },
              { name: "Alan", born: 1912 }
            ]
          }
        : call.parameters.year === 2000
          ? { rows: [], columns: ["name", "born"] }
          : { rows: [{ name: "Bad", born: "not a year" }] }
  }
])

describe("Graph find helpers", () => {
  it.effect("findAll decodes every row, findOne the first, findOneOption as an Option; all read-only", () =>
    Effect.gen(function* () {
      const graph = (yield* FalkorDB).graph("people")
      assert.deepStrictEqual(yield* graph.findAll(Person, PEOPLE, { year: 1900 }), [
        { name: "Ada", born: 1915 },
        { name: "Alan", born: 1912 }
      ])
      assert.deepStrictEqual(yield* graph.findAll(Person, PEOPLE, { year: 2000 }), [])
      assert.deepStrictEqual(yield* graph.findOne(Person, PEOPLE, { year: 1900 }), { name: "Ada", born: 1915 })
      const none = yield* Effect.flip(graph.findOne(Person, PEOPLE, { year: 2000 }))
      assert.isTrue(Cause.isNoSuchElementError(none))
      assert.deepStrictEqual(yield* graph.findOneOption(Person, PEOPLE, { year: 2000 }), Option.none())
      assert.deepStrictEqual(
        yield* graph.findOneOption(Person, PEOPLE, { year: 1900 }),
        Option.some({ name: "Ada", born: 1915 })
      )
      // A row the schema refuses: RowDecode naming the row and the column, as GraphSchema's.
      const bad = yield* Effect.flip(graph.findAll(Person, PEOPLE, { year: 1 }))
      assert.isFalse(Cause.isNoSuchElementError(bad))
      if (!Cause.isNoSuchElementError(bad))
        assert.deepInclude(bad.reason, { _tag: "RowDecode", row: 0, column: "born" })
      const calls = yield* (yield* FalkorDBMock.FalkorDBMock).calls
      assert.isTrue(calls.every((call) => call.command === "GRAPH.RO_QUERY"))
    }).pipe(Effect.provide(layer))
  )

  it.effect(
    "streamAs / readOnlyStreamAs stream typed rows; readOnlyQuery / readOnlyStream are roQuery / roStream",
    () =>
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("people")
        const streamed = yield* graph.readOnlyStreamAs(Person, PEOPLE, { year: 1900 }).pipe(Stream.runCollect)
        assert.deepStrictEqual(
          streamed.map((p) => p.name),
          ["Ada", "Alan"]
        )
        const result = yield* graph.readOnlyQuery(PEOPLE, { year: 1900 })
        assert.strictEqual(result.rows.length, 2)
        const rows = yield* graph.readOnlyStream(PEOPLE, { year: 1900 }).pipe(Stream.runCollect)
        assert.strictEqual(rows.length, 2)
        // streamAs sends GRAPH.QUERY: the read-only script does not answer it.
        const write = yield* Effect.flip(graph.streamAs(Person, PEOPLE, { year: 1900 }).pipe(Stream.runCollect))
        assert.include(write.message, "answers roQuery only")
      }).pipe(Effect.provide(layer))
  )
})
