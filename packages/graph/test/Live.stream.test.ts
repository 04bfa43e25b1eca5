// Against the real FalkorDB of the run (FALKORDB_URL): a roStream of 200 000 nodes read by a slow
// consumer holds about as much memory on a cold schema (the client meets every label and
// property id for the first time, mid-stream) as on a warm one. The bound is on memory: the
// live heap (after a full garbage collection) sampled while the consumer lags, and the rows the
// stream held undecoded at most — never on time.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { Node } from "../src/Value.ts"
import { fresh, url } from "./integration.ts"

V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void

const NODES = 200_000
const graphName = `effect-falkordb-live-stream:${process.pid}`

/** Live heap bytes: what is still reachable after a full collection. */
const liveHeap = () => {
  gc()
  return process.memoryUsage().heapUsed
}

/**
 * Streams every node to a consumer that lags (a timer turn every 2000 rows) and samples the
 * live heap every 20 000 rows. Returns the most above the baseline taken before the query.
 */
const streamAll = (db: FalkorDB.FalkorDB["Service"]) =>
  Effect.gen(function* () {
    const g = db.graph(graphName)
    const baseline = liveHeap()
    let peak = 0
    let count = 0
    let sum = 0
    yield* g.roStream("MATCH (n:Item) RETURN n").pipe(
      Stream.runForEach((row) => {
        const n = row.get("n") as Node
        sum += n.properties.i as number
        count++
        if (count % 20_000 === 0) peak = Math.max(peak, liveHeap() - baseline)
        return count % 2000 === 0 ? Effect.sleep("1 millis") : Effect.void
      })
    )
    return { count, sum, peak, refreshes: g.schema.refreshes }
  })

interface Run {
  readonly count: number
  readonly sum: number
  readonly peak: number
}

const client = (options: FalkorDB.Options) =>
  Layer.fresh(FalkorDB.layer({ url: url!, commandTimeout: "120 seconds", ...options }))

const MiB = 1024 * 1024

describe.skipIf(!url)("live roStream memory (FALKORDB_URL)", () => {
  it.live(
    "200k nodes to a slow consumer: the live heap stays bounded on a cold schema as on a warm one",
    () =>
      Effect.gen(function* () {
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName)
          yield* g.query(
            `UNWIND range(1, ${NODES}) AS i CREATE (:Item {i: i, name: 'item-' + toString(i), tags: ['a', 'b']})`
          )
        }).pipe(Effect.provide(client({ connections: 2 })))
        const expectedSum = (NODES * (NODES + 1)) / 2
        const check = (label: string, run: Run) => {
          assert.strictEqual(run.count, NODES, label)
          assert.strictEqual(run.sum, expectedSum, label)
          // The whole result decoded would be about 100 MB of heap; a stream holds a few chunks.
          assert.isBelow(run.peak, 32 * MiB, `${label}: live heap peak ${(run.peak / MiB).toFixed(1)} MiB`)
        }
        // Cold: a new client, whose schema cache knows nothing of the graph; the refresh travels
        // on another engine. Warm: the same client again, every name known.
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const cold = yield* streamAll(db)
          check("cold, 4 engines", cold)
          assert.deepStrictEqual(cold.refreshes, { labels: 1, relationshipTypes: 0, propertyKeys: 1 })
          check("warm, 4 engines", yield* streamAll(db))
        }).pipe(Effect.provide(client({ connections: 4 })))
        // One shared socket, or a pool of one the stream holds: the refresh goes on a connection
        // of its own, not behind the reply.
        for (const [label, options] of [
          ["cold, single connection", { strategy: "single" }],
          ["cold, pool of one", { strategy: "pooled", size: 1 }]
        ] as const) {
          yield* Effect.gen(function* () {
            const db = yield* FalkorDB.FalkorDB
            const cold = yield* streamAll(db)
            check(label, cold)
            assert.deepStrictEqual(cold.refreshes, { labels: 1, relationshipTypes: 0, propertyKeys: 1 })
          }).pipe(Effect.provide(client(options)))
        }
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          yield* db.graph(graphName).delete()
        }).pipe(Effect.provide(client({})))
      }),
    180_000
  )
})
