// The typed algorithm helpers through FalkorDBMock: the mock answers the exact query text the
// helper builds (parameters read back from the CYPHER prefix) with compact replies, and the
// real client decodes them into the helpers' Schemas.
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Algorithms from "@effect-falkordb/graph/Algorithms"
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import { Node } from "@effect-falkordb/graph/Value"

const city = (id: number, name: string) => new Node(id, ["City"], { name })

describe("Algorithms through FalkorDBMock", () => {
  it.effect("pageRank, WCC, betweenness and labelPropagation decode their rows", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB
      const algorithms = Algorithms.make(db.graph("roads"))
      const ranks = yield* Stream.runCollect(algorithms.pageRank({ label: "City", relationshipType: "ROAD" }))
      const components = yield* Stream.runCollect(algorithms.wcc({ nodeLabels: ["City"] }))
      const central = yield* Stream.runCollect(algorithms.betweenness())
      const communities = yield* Stream.runCollect(algorithms.labelPropagation({ maxIterations: 5 }))
      assert.deepStrictEqual(
        ranks.map((r) => [r.node.properties.name, r.score]),
        [
          ["A", 0.25],
          ["B", 0.75]
        ]
      )
      assert.deepStrictEqual(
        components.map((r) => r.componentId),
        [0, 1]
      )
      assert.deepStrictEqual(
        central.map((r) => r.score),
        [3]
      )
      assert.deepStrictEqual(
        communities.map((r) => r.communityId),
        [7]
      )
      const mock = yield* FalkorDBMock.FalkorDBMock
      yield* mock.expectCalled("CALL algo.pageRank($a0, $a1) YIELD node, score RETURN node, score", {
        parameters: { a0: "City", a1: "ROAD" }
      })
      yield* mock.expectCalled("CALL algo.WCC($a0) YIELD node, componentId RETURN node, componentId", {
        parameters: { a0: { nodeLabels: ["City"] } }
      })
      yield* mock.expectCalled("CALL algo.betweenness($a0) YIELD node, score RETURN node, score", {
        parameters: { a0: null }
      })
      yield* mock.expectCalled("CALL algo.labelPropagation($a0) YIELD node, communityId RETURN node, communityId", {
        parameters: { a0: { maxIterations: 5 } }
      })
    }).pipe(
      Effect.provide(
        FalkorDBMock.layer([
          {
            query: "CALL algo.pageRank($a0, $a1) YIELD node, score RETURN node, score",
            rows: [
              { node: city(0, "A"), score: 0.25 },
              { node: city(1, "B"), score: 0.75 }
            ]
          },
          {
            query: "CALL algo.WCC($a0) YIELD node, componentId RETURN node, componentId",
            rows: [
              { node: city(0, "A"), componentId: 0 },
              { node: city(1, "B"), componentId: 1 }
            ]
          },
          {
            query: "CALL algo.betweenness($a0) YIELD node, score RETURN node, score",
            rows: [{ node: city(2, "C"), score: 3.0 }]
          },
          {
            query: "CALL algo.labelPropagation($a0) YIELD node, communityId RETURN node, communityId",
            rows: [{ node: city(2, "C"), communityId: 7 }]
          }
        ])
      )
    )
  )

  it.effect("a row that does not match the helper's Schema fails with RowDecode", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB
      const error = yield* Effect.flip(Stream.runCollect(Algorithms.make(db.graph("roads")).pageRank()))
      assert.strictEqual(error.reason._tag, "RowDecode")
      assert.strictEqual(error.reason._tag === "RowDecode" ? error.reason.column : undefined, "score")
    }).pipe(
      Effect.provide(
        FalkorDBMock.layer([
          {
            query: "CALL algo.pageRank($a0, $a1) YIELD node, score RETURN node, score",
            rows: [{ node: city(0, "A"), score: "high" }]
          }
        ])
      )
    )
  )
})
