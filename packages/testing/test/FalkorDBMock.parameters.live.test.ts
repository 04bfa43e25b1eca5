// FalkorDBMock against the run's real FalkorDB (FALKORDB_URL) and the 4.18 recordings: a query
// whose `$name` parameters are not all given fails alike on both, with the recorded text.
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import * as FalkorDBModule from "@effect-falkordb/graph/FalkorDB"
import type { ParameterValue } from "@effect-falkordb/graph/Cypher"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"

const url = process.env.FALKORDB_URL

/** Queries and parameters; each either runs on both or fails on both with the same text. */
const cases: ReadonlyArray<readonly [string, { readonly [name: string]: ParameterValue }]> = [
  ["RETURN $b AS v", { a: 1 }],
  ["RETURN $a AS v", { A: 1 }],
  ["RETURN $a AS v, $b AS w", { a: 1 }],
  ["RETURN $a AS v", { a: 1, unused: 2 }],
  ["RETURN '$a' AS v", {}],
  ["RETURN 1 AS v // $a", {}],
  ["RETURN 1 AS v /* $a */", {}],
  ["RETURN $`odd name` AS v", { "odd name": 1 }],
  ["UNWIND $list AS x RETURN x AS v", { list: [1, 2] }],
  ["UNWIND $list AS x RETURN x AS v", {}]
]

/** The outcome of each case: the rows' count, or the server's message of the failure. */
const outcomes = Effect.gen(function* () {
  const graph = (yield* FalkorDB).graph("mock-parameters-live")
  return yield* Effect.forEach(cases, ([query, parameters]) =>
    graph.query(query, parameters).pipe(
      Effect.map((result) => `rows: ${result.rows.length}`),
      Effect.catch((error) =>
        Effect.succeed(
          `${error.reason._tag}: ${"serverMessage" in error.reason ? error.reason.serverMessage : error.message}`
        )
      )
    )
  )
})

describe.runIf(url !== undefined)("FalkorDBMock's Missing parameters", () => {
  it.live("fails the same queries as a real FalkorDB, with the 4.18 recording's text", () =>
    Effect.gen(function* () {
      const recording = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "escapes-and-params")
      const exchange = recording.exchanges.find((e) => e.request[2] === "CYPHER a=1 RETURN $b AS b")!
      const recorded = Buffer.from(exchange.reply_base64, "base64").toString("utf8").slice(1, -2)
      assert.strictEqual(recorded, "Missing parameters")

      const live = yield* outcomes.pipe(
        Effect.provide(Layer.fresh(FalkorDBModule.layer({ url: url!, strategy: "single" })))
      )
      // Every query is scripted: only the parameter check can fail one.
      const mocked = yield* outcomes.pipe(Effect.provide(FalkorDBMock.layer([{ query: () => true, rows: [{ v: 1 }] }])))
      const missing = `InvalidParameter: ${recorded}`
      assert.deepStrictEqual(
        live.map((outcome) => outcome === missing),
        [true, true, true, false, false, false, false, false, false, true]
      )
      assert.deepStrictEqual(
        mocked.map((outcome) => outcome === missing),
        live.map((outcome) => outcome === missing)
      )
    })
  )
})
