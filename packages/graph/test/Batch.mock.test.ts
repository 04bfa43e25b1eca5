// Batch.run is given what it decodes with explicitly: the graph's own schema cache entry
// (`graph.schema`), no registry of handles. A Graph that FalkorDB.graph did not make has no
// such entry, and its batch's replies fail with InvalidArgument instead of decoding wrongly.
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Batch from "../src/Batch.ts"
import { FalkorDB } from "../src/FalkorDB.ts"
import type { Graph } from "../src/Graph.ts"

const query = "MATCH (n:Person) RETURN n.name AS name"

describe("Batch.run through FalkorDBMock", () => {
  it.effect("decodes through the graph's schema cache; a Graph not made by FalkorDB.graph is refused", () =>
    Effect.gen(function* () {
      const db = yield* FalkorDB
      const graph = db.graph("people")
      const [found] = yield* Batch.run(graph, db.connection, [{ query, readOnly: true }])
      assert.isTrue(found !== undefined && Result.isSuccess(found))
      if (found === undefined || !Result.isSuccess(found)) return
      assert.deepStrictEqual(
        found.success.rows.map((row) => row.get("name")),
        ["Ada"]
      )
      const foreign: Graph = {
        ...graph,
        schema: {
          graph: "people",
          get: () => [],
          version: undefined,
          refreshes: { labels: 0, relationshipTypes: 0, propertyKeys: 0 },
          replacements: 0
        }
      }
      const [refused] = yield* Batch.run(foreign, db.connection, [{ query, readOnly: true }])
      assert.isTrue(refused !== undefined && Result.isFailure(refused))
      if (refused === undefined || !Result.isFailure(refused)) return
      assert.strictEqual(refused.failure.reason._tag, "InvalidArgument")
      assert.include(refused.failure.message, "not a Graph made by FalkorDB.graph")
    }).pipe(Effect.provide(FalkorDBMock.layer([{ query, rows: [{ name: "Ada" }] }])))
  )
})
