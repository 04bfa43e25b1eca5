/**
 * The simulated FalkorDB serialises like the real server: one query at a time per
 * connection, at most W in service, replies in order and byte for byte as recorded. Time is
 * the TestClock, so every check counts replies after an exact number of service times.
 */
import { Buffer } from "node:buffer"
import * as FalkorDBSimulator from "@effect-falkordb/testing/FalkorDBSimulator"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { command, connect } from "./support/RawClient.ts"

const SERVICE = "10 millis"

/** Waits (in real time: the requests travel over real sockets) until the server saw `count` requests. */
const received = (sim: FalkorDBSimulator.Simulator, count: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 5000; i++) {
      const stats = yield* sim.stats
      if (stats.queries + stats.commands >= count) return stats
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
    }
    return yield* Effect.die(new Error(`the simulator never received ${count} requests`))
  })

const setup = (workers: number) =>
  Effect.gen(function* () {
    const recordings = yield* FalkorDBSimulator.benchmarkRecordings
    const sim = yield* FalkorDBSimulator.make({ recordings: recordings.all, workers, serviceTime: SERVICE })
    const query = (text: string, ...flags: ReadonlyArray<string>) => command("GRAPH.RO_QUERY", "g", text, ...flags)
    return { sim, recordings, returnOne: query(recordings.returnOne.query, "--compact"), query }
  })

describe("FalkorDBSimulator", () => {
  it.effect("two queries of one connection never overlap, even with free workers", () =>
    Effect.gen(function* () {
      const { sim, recordings, returnOne } = yield* setup(4)
      const client = yield* connect(sim.port)
      yield* client.send(returnOne.repeat(3))
      let stats = yield* received(sim, 3)
      assert.strictEqual(stats.inService, 1)
      for (const done of [1, 2, 3]) {
        yield* TestClock.adjust(SERVICE)
        stats = yield* sim.stats
        assert.strictEqual(stats.replies, done)
        assert.strictEqual(stats.inService, done < 3 ? 1 : 0)
      }
      assert.strictEqual(stats.maxInService, 1)
      const one = Buffer.from(recordings.returnOne.reply)
      const bytes = yield* client.awaitBytes(3 * one.length)
      assert.deepStrictEqual(bytes, Buffer.concat([one, one, one]))
    })
  )

  it.effect("at most W queries in service; queued connections take slots in arrival order", () =>
    Effect.gen(function* () {
      const { sim, recordings, returnOne } = yield* setup(2)
      const a = yield* connect(sim.port)
      const b = yield* connect(sim.port)
      const c = yield* connect(sim.port)
      yield* a.send(returnOne.repeat(2))
      yield* received(sim, 2)
      yield* b.send(returnOne)
      yield* received(sim, 3)
      yield* c.send(returnOne)
      let stats = yield* received(sim, 4)
      assert.strictEqual(stats.inService, 2)
      assert.strictEqual(stats.replies, 0)
      // a's first and b's finish; c (waiting since 0) and a's second (ready at 10 ms) start.
      yield* TestClock.adjust(SERVICE)
      stats = yield* sim.stats
      assert.strictEqual(stats.replies, 2)
      assert.strictEqual(stats.inService, 2)
      const one = Buffer.from(recordings.returnOne.reply)
      assert.deepStrictEqual(yield* b.awaitBytes(one.length), one)
      assert.strictEqual(a.bytes().length, one.length)
      assert.strictEqual(c.bytes().length, 0)
      yield* TestClock.adjust(SERVICE)
      stats = yield* sim.stats
      assert.strictEqual(stats.replies, 4)
      assert.strictEqual(stats.maxInService, 2)
      assert.deepStrictEqual(yield* a.awaitBytes(2 * one.length), Buffer.concat([one, one]))
      assert.deepStrictEqual(yield* c.awaitBytes(one.length), one)
    })
  )

  it.effect("replies are the recorded bytes, in request order; other commands wait behind a query", () =>
    Effect.gen(function* () {
      const { sim, recordings, query } = yield* setup(4)
      const labels = recordings.schema.find((r) => r.query === "CALL db.labels()" && !r.compact)!
      const client = yield* connect(sim.port)
      yield* client.send(
        query(recordings.traversal.query, "--compact") +
          command("PING") +
          query(labels.query) +
          query("RETURN 2", "--compact")
      )
      let stats = yield* received(sim, 4)
      assert.strictEqual(stats.replies, 0)
      yield* TestClock.adjust(SERVICE)
      yield* TestClock.adjust(SERVICE)
      yield* TestClock.adjust(SERVICE)
      stats = yield* sim.stats
      assert.strictEqual(stats.replies, 3)
      assert.strictEqual(stats.unrecorded, 1)
      const expected = Buffer.concat([
        Buffer.from(recordings.traversal.reply),
        Buffer.from("+PONG\r\n"),
        Buffer.from(labels.reply),
        Buffer.from(`-ERR simulator has no recording for --compact "RETURN 2"\r\n`)
      ])
      assert.deepStrictEqual(
        (yield* client.awaitBytes(expected.length)).toString("latin1"),
        expected.toString("latin1")
      )
    })
  )

  it.live("precise timer (worker thread, wall clock): every reply arrives, at most W at once", () =>
    Effect.gen(function* () {
      const recordings = yield* FalkorDBSimulator.benchmarkRecordings
      const sim = yield* FalkorDBSimulator.make({
        recordings: recordings.all,
        workers: 2,
        serviceTime: "300 micros",
        timer: "precise"
      })
      const one = Buffer.from(recordings.returnOne.reply)
      const request = command("GRAPH.RO_QUERY", "g", recordings.returnOne.query, "--compact")
      const clients = [yield* connect(sim.port), yield* connect(sim.port), yield* connect(sim.port)]
      for (const client of clients) yield* client.send(request.repeat(3))
      for (const client of clients) {
        assert.deepStrictEqual(yield* client.awaitBytes(3 * one.length), Buffer.concat([one, one, one]))
      }
      const stats = yield* sim.stats
      assert.strictEqual(stats.replies, 9)
      assert.strictEqual(stats.maxInService, 2)
      assert.strictEqual(stats.inService, 0)
    })
  )

  it.effect("the ceiling is min(W, connections) per service time", () =>
    Effect.gen(function* () {
      const { sim } = yield* setup(4)
      assert.strictEqual(sim.ceiling(8), 400)
      assert.strictEqual(sim.ceiling(1), 100)
      assert.strictEqual(FalkorDBSimulator.ceiling(4, 250, 8), 16_000)
      const invalid = yield* Effect.flip(FalkorDBSimulator.make({ recordings: [], workers: 0 }))
      assert.strictEqual(invalid.reason, "InvalidOptions")
    })
  )
})
