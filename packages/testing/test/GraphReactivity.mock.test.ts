// Reactive queries on FalkorDBMock with the in-process Reactivity: what users get to test a
// reactive read model without a server.
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

let people = 0
const scripts: ReadonlyArray<FalkorDBMock.Script> = [
  { query: "MATCH (p:Person) RETURN count(p) AS n", respond: () => ({ rows: [{ n: people }] }) },
  {
    query: "CREATE (:Person)",
    respond: () => {
      people++
      return { statistics: { nodesCreated: 1 } }
    }
  },
  { query: "CREATE (:Person", error: "errMsg: Invalid input" }
]

describe("GraphReactivity on FalkorDBMock", () => {
  it.effect("mutations re-run the reactive queries on their keys; failed mutations and other keys do not", () =>
    Effect.gen(function* () {
      people = 0
      const graph = (yield* FalkorDB.FalkorDB).graph("social")
      const control = yield* FalkorDBMock.FalkorDBMock
      const seen = yield* Queue.unbounded<number>()
      const counts = graph.roQuery("MATCH (p:Person) RETURN count(p) AS n").pipe(
        Effect.map((r) => Number(r.rows[0]!.get("n"))),
        GraphReactivity.reactive(["people"])
      )
      yield* Effect.forkScoped(Stream.runForEach(counts, (n) => Queue.offer(seen, n)))
      assert.strictEqual(yield* Queue.take(seen), 0)

      yield* GraphReactivity.mutation(["people"], graph.query("CREATE (:Person)"))
      assert.strictEqual(yield* Queue.take(seen), 1)
      // Invalidations run their handlers synchronously: by now every re-run has been started.
      yield* GraphReactivity.mutation(["teams"], Effect.void)
      const failed = yield* Effect.flip(GraphReactivity.mutation(["people"], graph.query("CREATE (:Person")))
      assert.strictEqual(failed.reason._tag, "Syntax")
      yield* graph.query("CREATE (:Person)").pipe(GraphReactivity.mutation({ people: [1] }))
      assert.strictEqual(yield* Queue.take(seen), 2)
      yield* control.expectCalled("MATCH (p:Person) RETURN count(p) AS n", { times: 3 })
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(FalkorDBMock.layer(scripts), GraphReactivity.layer)))
  )

  it.effect("a reactive query that fails ends its stream with the query's error", () =>
    Effect.gen(function* () {
      const graph = (yield* FalkorDB.FalkorDB).graph("social")
      const error = yield* Effect.flip(
        Stream.runCollect(graph.query("CREATE (:Person").pipe(GraphReactivity.reactive(["people"])))
      )
      assert.strictEqual(error.reason._tag, "Syntax")
    }).pipe(Effect.provide(Layer.merge(FalkorDBMock.layer(scripts), GraphReactivity.layer)))
  )
})
