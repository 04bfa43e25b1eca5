/**
 * Reactive queries: the examples of the graph README's "Reactive queries" section, here so that
 * CI type-checks them (`pnpm check` covers every scratchpad file).
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

// README: reactive
const program = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("social")
  // Runs now, and again after every mutation of "people" (in this instance or, with
  // layerPubSub, in any other).
  const count = graph.roQuery("MATCH (p:Person) RETURN count(p) AS n").pipe(
    Effect.map((result) => Number(result.rows[0]?.get("n"))),
    GraphReactivity.reactive(["people"])
  )
  yield* Effect.forkScoped(Stream.runForEach(count, (n) => Effect.log(`people: ${n}`)))
  // Invalidates "people" once the write succeeded.
  yield* graph.query("CREATE (:Person {name: 'Ada'})").pipe(GraphReactivity.mutation(["people"]))
})

const options = { url: "redis://127.0.0.1:6379" }
/** Instances sharing the server see each other's invalidations. */
export const Live = GraphReactivity.layerPubSub().pipe(
  Layer.provideMerge(RedisPubSub.layer(options)),
  Layer.provideMerge(FalkorDB.layer(options))
)

export const main = program.pipe(Effect.scoped, Effect.provide(Live))
