// Against a real FalkorDB: set FALKORDB_URL to run; skipped otherwise. Reactive queries across
// two app instances: each with its own FalkorDB client, its own RedisPubSub subscriber and its
// own GraphReactivity.layerPubSub, so an invalidation crosses through the server's Pub/Sub.
import { assert, describe, it } from "@effect/vitest"
import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import * as GraphReactivity from "../src/GraphReactivity.ts"
import { fresh, url } from "./integration.ts"

const name = (what: string) => `effect-falkordb-reactive:${what}:${process.pid}`

/** One app instance: its own connections, subscriber and Reactivity on `channel`. */
const instance = (channel: string) =>
  Layer.fresh(
    GraphReactivity.layerPubSub({ channel }).pipe(
      Layer.provideMerge(RedisPubSub.layer({ url: url! })),
      Layer.provideMerge(FalkorDB.layer({ url: url!, connections: 2 }))
    )
  )

const count = (graph: string, label: string) =>
  FalkorDB.FalkorDB.use((db) => db.graph(graph).roQuery(`MATCH (n:${label}) RETURN count(n) AS n`)).pipe(
    Effect.map((result) => Number(result.rows[0]!.get("n")))
  )

const create = (graph: string, label: string) =>
  FalkorDB.FalkorDB.use((db) => db.graph(graph).query(`CREATE (:${label})`))

/** Two instances on one channel, and a graph that exists (a read of a missing graph fails). */
const twoInstances = (what: string) =>
  Effect.gen(function* () {
    const graph = name(what)
    const channel = name(`${what}-channel`)
    const a = yield* Layer.build(instance(channel))
    const b = yield* Layer.build(instance(channel))
    yield* Effect.provideContext(
      FalkorDB.FalkorDB.use((db) => fresh(db, graph).pipe(Effect.andThen((g) => g.query("CREATE (:Seed)")))),
      a
    )
    return { graph, channel, a, b }
  })

describe.skipIf(!url)("GraphReactivity across two instances (FALKORDB_URL)", () => {
  it.live("a mutation in one instance re-runs the other's reactive query; unrelated keys do not", () =>
    Effect.gen(function* () {
      const { graph, a, b } = yield* twoInstances("cross")

      // Instance A watches the people count.
      let runs = 0
      const seen = yield* Queue.unbounded<number>()
      const people = GraphReactivity.reactive(
        ["people"],
        Effect.tap(count(graph, "Person"), () =>
          Effect.sync(() => {
            runs++
          })
        )
      )
      yield* Effect.forkScoped(Stream.runForEach(people, (n) => Queue.offer(seen, n)).pipe(Effect.provideContext(a)))
      assert.strictEqual(yield* Queue.take(seen), 0)

      // Instance B writes. An unrelated key first, then people: published in that order, applied
      // in that order, so when the people count arrives the unrelated one was already seen.
      const inB = <X, E>(effect: Effect.Effect<X, E, FalkorDB.FalkorDB | Reactivity.Reactivity>) =>
        Effect.provideContext(effect, b)
      yield* inB(GraphReactivity.mutation(["teams"], create(graph, "Team")))
      yield* inB(GraphReactivity.mutation(["people"], create(graph, "Person")))
      assert.strictEqual(yield* Queue.take(seen), 1)
      assert.strictEqual(runs, 2)

      // A record of ids stands for the name and each id: it reaches a query on the name.
      yield* inB(GraphReactivity.mutation({ people: [7] }, create(graph, "Person")))
      assert.strictEqual(yield* Queue.take(seen), 2)

      // A failed mutation invalidates nothing; the next good one is the next emission.
      const failed = yield* Effect.flip(
        inB(
          GraphReactivity.mutation(
            ["people"],
            FalkorDB.FalkorDB.use((db) => db.graph(graph).query("CREATE (:Person"))
          )
        )
      )
      assert.strictEqual(failed.reason._tag, "Syntax")
      yield* inB(GraphReactivity.mutation(["people"], create(graph, "Person")))
      assert.strictEqual(yield* Queue.take(seen), 3)
      assert.strictEqual(runs, 4)

      // invalidateUnsafe (synchronous, as Atom uses it) is published too.
      yield* inB(Reactivity.Reactivity.use((reactivity) => Effect.sync(() => reactivity.invalidateUnsafe(["people"]))))
      assert.strictEqual(yield* Queue.take(seen), 3)
      assert.strictEqual(runs, 5)
    }).pipe(Effect.scoped)
  )

  it.live("structural object keys cross processes; a batch goes out as one message with every key", () =>
    Effect.gen(function* () {
      const { graph, channel, a, b } = yield* twoInstances("keys")
      const seen = yield* Queue.unbounded<number>()
      const key = { graph, label: "Person" }
      yield* Effect.forkScoped(
        Stream.runForEach(GraphReactivity.reactive([key], count(graph, "Person")), (n) => Queue.offer(seen, n)).pipe(
          Effect.provideContext(a)
        )
      )
      assert.strictEqual(yield* Queue.take(seen), 0)
      // Another object with the same structure, in the other process.
      yield* Effect.provideContext(GraphReactivity.mutation([{ graph, label: "Person" }], create(graph, "Person")), b)
      assert.strictEqual(yield* Queue.take(seen), 1)

      // Listen on the channel itself to see what a batch publishes.
      const messages = yield* Effect.provideContext(
        RedisPubSub.RedisPubSub.use((pubsub) => pubsub.subscribe(channel)),
        a
      )
      const published = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(Stream.runForEach(messages, (m) => Queue.offer(published, m.message)))
      yield* Effect.provideContext(
        Reactivity.Reactivity.use((reactivity) =>
          reactivity.withBatch(
            Effect.all([
              GraphReactivity.mutation(["people"], create(graph, "Person")),
              GraphReactivity.mutation({ teams: [1] }, create(graph, "Team"))
            ])
          )
        ),
        b
      )
      const message = JSON.parse(yield* Queue.take(published)) as { keys: ReadonlyArray<string> }
      assert.deepStrictEqual([...message.keys].sort(), ["people", "teams", "teams:1"])
    }).pipe(Effect.scoped)
  )
})
