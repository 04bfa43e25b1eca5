/**
 * Smoke test of the graph throughput table: one short cell of each query through each client
 * against the simulated FalkorDB, and the simulator sent exactly as many graph replies as the
 * cell counted operations. No timing is asserted.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Simulation from "../src/graph-simulation.ts"
import * as GraphThroughput from "../src/graph-throughput.ts"
import * as Pacer from "../src/pacer.ts"

const counted = (sim: Simulation.Simulation, client: GraphThroughput.GraphClient, text: string, callers: number) =>
  Effect.gen(function* () {
    const before = yield* sim.stats
    const sample = yield* client.loop(text, callers, 20)
    const after = yield* sim.stats
    assert.isAbove(sample.ops, 0, client.name)
    assert.strictEqual(after.replies - before.replies, sample.ops, `${client.name}: ${text}`)
    assert.strictEqual(after.unrecorded, 0)
    assert.isAtMost(after.maxInService, sim.workers)
  })

describe("graph throughput cells", () => {
  it.live(
    "every client, both queries, in-process simulator: replies sent = operations counted",
    () =>
      Effect.gen(function* () {
        const sim = yield* Simulation.inProcess({ workers: 4, serviceMicros: 200 })
        const clients = yield* GraphThroughput.openClients(sim.port)
        assert.deepStrictEqual(
          clients.map((c) => c.name),
          [GraphThroughput.MULTIPLEXED, "ours pooled (8)", "ours single", GraphThroughput.FALKORDB_TS]
        )
        // The first traversal fills each client's schema cache (three procedure calls).
        yield* GraphThroughput.warm(clients)
        for (const client of clients) {
          for (const query of GraphThroughput.queries) yield* counted(sim, client, query.text, 8)
        }
      }),
    60_000
  )

  it.live.skipIf(!Simulation.canSpawn)(
    "the simulator in a child process (as the bench runs it)",
    () =>
      Effect.gen(function* () {
        const sim = yield* Simulation.spawn({ workers: 2, serviceMicros: 200 })
        assert.strictEqual(sim.where, "child process")
        const clients = yield* GraphThroughput.openClients(sim.port)
        yield* GraphThroughput.warm(clients)
        yield* counted(sim, clients[0]!, GraphThroughput.queries[1]!.text, 16)
        yield* counted(sim, clients[3]!, GraphThroughput.queries[0]!.text, 4)
      }),
    60_000
  )

  it.live(
    "paced cells (the equal-rate table): no client runs more queries than permits were due, and every one ran",
    () =>
      Effect.gen(function* () {
        const sim = yield* Simulation.inProcess({ workers: 4, serviceMicros: 200 })
        const clients = yield* GraphThroughput.openClients(sim.port)
        yield* GraphThroughput.warm(clients)
        const perSecond = 2000
        for (const client of [clients[0]!, clients[3]!]) {
          const before = yield* sim.stats
          const started = performance.now()
          const pacer = Pacer.start(perSecond)
          const sample = yield* client.loop(GraphThroughput.queries[1]!.text, 16, 100, pacer)
          pacer.stop()
          const due = Math.floor(((performance.now() - started) * perSecond) / 1000)
          const after = yield* sim.stats
          assert.isAbove(sample.ops, 0, client.name)
          assert.isAtMost(sample.ops, due, `${client.name}: ${sample.ops} queries, ${due} permits due`)
          assert.strictEqual(after.replies - before.replies, sample.ops, client.name)
        }
      }),
    60_000
  )
})
