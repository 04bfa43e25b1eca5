// Vector and full-text search end to end over real sockets against the FalkorDB 4.18.11
// recordings `vector-search` and `index-lifecycle` (see ./support/replay.ts: the client sends
// the label, property, k and the query vector as parameters where the recording has literals).
import * as Search from "../src/Search.ts"
import { Edge, Node } from "../src/Value.ts"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { serverMessageOf } from "./helpers.ts"
import { type Command, withReplay } from "./support/replay.ts"

const ro = (g: string, text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]
const nodes = (g: string, params: string, yields = "node, score RETURN node, score") =>
  ro(g, `CYPHER ${params} CALL db.idx.vector.queryNodes($a0, $a1, $a2, vecf32($a3)) YIELD ${yields}`)

describe("Search over recorded replies (vector-search)", () => {
  const g = "vector-search"
  it.live("k nearest nodes and relationships with scores; the recorded errors typed", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const search = Search.make(db.graph(g))
            const near = yield* Stream.runCollect(
              search.vectorNodes({ label: "Doc", property: "emb", k: 2, vector: new Float32Array([1, 1, 1]) })
            )
            const edges = yield* Stream.runCollect(
              search.vectorRelationships({ label: "SIM", property: "w", k: 2, vector: [1, 1] })
            )
            const dimension = yield* Effect.flip(
              Stream.runCollect(search.vectorNodes({ label: "Doc", property: "emb", k: 3, vector: [1, 1] }))
            )
            const zero = yield* Effect.flip(
              Stream.runCollect(search.vectorNodes({ label: "Doc", property: "emb", k: 0, vector: [1, 1, 1] }))
            )
            const unknown = yield* Effect.flip(
              Stream.runCollect(search.vectorNodes({ label: "Nope", property: "emb", k: 3, vector: [1, 1, 1] }))
            )
            const fractional = yield* Effect.flip(
              Stream.runCollect(search.vectorNodes({ label: "Doc", property: "emb", k: 1.5, vector: [1, 1, 1] }))
            )
            return { near, edges, dimension, zero, unknown, fractional }
          }),
        {
          translations: [
            [
              nodes(g, "`a0`='Doc' `a1`='emb' `a2`=2 `a3`=[1, 1, 1]"),
              ro(
                g,
                "CALL db.idx.vector.queryNodes('Doc', 'emb', 2, vecf32([1.0, 1.0, 1.0])) YIELD node, score RETURN node, score"
              )
            ],
            [
              ro(
                g,
                "CYPHER `a0`='SIM' `a1`='w' `a2`=2 `a3`=[1, 1] CALL db.idx.vector.queryRelationships($a0, $a1, $a2, vecf32($a3)) YIELD relationship, score RETURN relationship, score"
              ),
              ro(
                g,
                "CALL db.idx.vector.queryRelationships('SIM', 'w', 2, vecf32([1.0, 1.0])) YIELD relationship, score RETURN relationship, score"
              )
            ],
            [
              nodes(g, "`a0`='Doc' `a1`='emb' `a2`=3 `a3`=[1, 1]"),
              ro(g, "CALL db.idx.vector.queryNodes('Doc', 'emb', 3, vecf32([1.0, 1.0])) YIELD node RETURN node")
            ],
            [
              nodes(g, "`a0`='Doc' `a1`='emb' `a2`=0 `a3`=[1, 1, 1]"),
              ro(g, "CALL db.idx.vector.queryNodes('Doc', 'emb', 0, vecf32([1.0, 1.0, 1.0])) YIELD node RETURN node")
            ],
            [
              nodes(g, "`a0`='Nope' `a1`='emb' `a2`=3 `a3`=[1, 1, 1]"),
              ro(g, "CALL db.idx.vector.queryNodes('Nope', 'emb', 3, vecf32([1.0, 1.0, 1.0])) YIELD node RETURN node")
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const v = run.value
      assert.deepStrictEqual(
        v.near.map((r) => [r.node.properties.n, Array.from(r.node.properties.emb as Float32Array), r.score]),
        [
          [1, [1, 1, 1], 0],
          [36, [1, 1, 1], 0]
        ]
      )
      assert.isTrue(v.near.every((r) => r.node instanceof Node && r.node.labels[0] === "Doc"))
      assert.strictEqual(v.edges.length, 2)
      assert.isTrue(v.edges.every((r) => r.relationship instanceof Edge && r.relationship.relationshipType === "SIM"))
      assert.strictEqual(v.edges[0]!.score, -1.19209289550781e-7)
      assert.strictEqual(v.dimension.reason._tag, "VectorDimension")
      assert.strictEqual(serverMessageOf(v.dimension), "Vector dimension mismatch, expected 3 but got 2")
      assert.strictEqual(v.zero.reason._tag, "ProcedureArguments")
      assert.strictEqual(v.unknown.reason._tag, "ProcedureArguments")
      assert.strictEqual(serverMessageOf(v.unknown), "Invalid arguments for procedure 'db.idx.vector.queryNodes'")
      assert.strictEqual(v.fractional.reason._tag, "InvalidArgument")
      assert.strictEqual(run.sent.filter((c) => c[2]!.includes("queryNodes")).length, 4)
    })
  )
})

describe("Search over recorded replies (index-lifecycle)", () => {
  const g = "index-lifecycle"
  it.live("a vector query while the index builds fails with ProcedureArguments; a full-text query", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const search = Search.make(db.graph(g))
            const building = yield* Effect.flip(
              Stream.runCollect(search.vectorNodes({ label: "Doc", property: "emb", k: 3, vector: [1, 1, 1] }))
            )
            const text = yield* Stream.runCollect(search.fulltextNodes({ label: "Doc", query: "doc 1234" }))
            return { building, text }
          }),
        {
          translations: [
            [
              nodes(g, "`a0`='Doc' `a1`='emb' `a2`=3 `a3`=[1, 1, 1]"),
              ro(
                g,
                "CALL db.idx.vector.queryNodes('Doc', 'emb', 3, vecf32([1.0, 1.0, 1.0])) YIELD node, score RETURN node.n AS n, score ORDER BY score, n"
              )
            ],
            // Recorded with a projection; its reply has no rows (the index was still building).
            [
              ro(
                g,
                "CYPHER `a0`='Doc' `a1`='doc 1234' CALL db.idx.fulltext.queryNodes($a0, $a1) YIELD node, score RETURN node, score"
              ),
              ro(
                g,
                "CALL db.idx.fulltext.queryNodes('Doc', 'doc 1234') YIELD node, score RETURN node.n AS n ORDER BY n LIMIT 3"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      assert.strictEqual(run.value.building.reason._tag, "ProcedureArguments")
      assert.include(run.value.building.hint, "awaitOperational")
      assert.deepStrictEqual(run.value.text, [])
    })
  )
})
