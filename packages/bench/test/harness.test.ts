/**
 * Smoke test of the benchmark harness: one very small cell of each kind runs to completion
 * and the server saw exactly the operations the cell counted. No timing is asserted.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Harness from "../src/harness.ts"
import * as Peers from "../src/peers.ts"
import * as RedisBenchmark from "../src/redisBenchmark.ts"
import * as Transport from "../src/transport.ts"

describe("harness (pure)", () => {
  it("median", () => {
    assert.strictEqual(Harness.median([3, 1, 2]), 2)
    assert.strictEqual(Harness.median([4, 1, 3, 2]), 2.5)
    assert.isNaN(Harness.median([]))
  })

  it.effect("measure keeps rows in order and starts each row at the next column every round", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const cell = (row: string, column: string): Harness.Cell => ({
        row,
        column,
        run: (millis) =>
          Effect.sync(() => {
            if (millis === 10) order.push(`${row}/${column}`)
            return { ops: 1, seconds: 1 }
          })
      })
      yield* Harness.measure([cell("r", "a"), cell("r", "b"), cell("r", "c"), cell("s", "a"), cell("s", "b")], {
        runs: 3,
        millis: 10,
        warmupMillis: 1
      })
      assert.deepStrictEqual(order, [
        ...["r/a", "r/b", "r/c", "s/a", "s/b"],
        ...["r/b", "r/c", "r/a", "s/b", "s/a"],
        ...["r/c", "r/a", "r/b", "s/a", "s/b"]
      ])
    })
  )

  it.effect("measure interleaves the cells of every round and keeps run order for same-run ratios", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const cell = (row: string, column: string, ops: number): Harness.Cell => ({
        row,
        column,
        run: (millis) =>
          Effect.sync(() => {
            order.push(`${row}/${column}@${millis}`)
            return { ops: ops * (order.length + 1), seconds: 1 }
          })
      })
      const measured = yield* Harness.measure([cell("r", "a", 2), cell("r", "b", 1)], {
        runs: 2,
        millis: 10,
        warmupMillis: 1
      })
      // The second round starts the row at b.
      assert.deepStrictEqual(order, ["r/a@1", "r/b@1", "r/a@10", "r/b@10", "r/b@10", "r/a@10"])
      // Each sample's ops tell when it ran (2 or 1 × one more than the runs before it): a ran
      // 3rd and 6th, b 4th and 5th; ratios pair the samples of the same round.
      assert.deepStrictEqual(
        measured
          .get("r")
          ?.get("a")
          ?.map((s) => s.ops),
        [8, 14]
      )
      assert.deepStrictEqual(
        measured
          .get("r")
          ?.get("b")
          ?.map((s) => s.ops),
        [5, 6]
      )
      assert.strictEqual(Harness.medianRatio(measured, "r", "a", "b"), (8 / 5 + 14 / 6) / 2)
      // Every recorded sample carries this process's CPU time while its cell ran.
      for (const column of ["a", "b"]) {
        for (const sample of measured.get("r")?.get(column) ?? []) {
          assert.isNumber(sample.cpuMicros)
          assert.isAtLeast(sample.cpuMicros!, 0)
        }
      }
      assert.isFalse(Number.isNaN(Harness.medianCpuPerOp(measured, "r", "a")))
    })
  )

  it("CPU per operation: µs ÷ completed ops, NaN when not measured", () => {
    assert.strictEqual(Harness.cpuPerOp({ ops: 4, seconds: 1, cpuMicros: 10 }), 2.5)
    assert.isNaN(Harness.cpuPerOp({ ops: 4, seconds: 1 }))
    assert.strictEqual(Harness.formatMicros(2.5), "2.50")
    assert.strictEqual(Harness.formatMicros(Number.NaN), "—")
  })

  it("parses redis-benchmark CSV", () => {
    const output = '"test","rps","avg_latency_ms"\n"SET","434782.59","0.500"\n'
    assert.strictEqual(RedisBenchmark.parseCsv(output), 434782.59)
    assert.isUndefined(RedisBenchmark.parseCsv('"test","rps"\n'))
  })
})

const counter = (redis: RedisConnection.RedisConnection["Service"]) =>
  redis.execute(["GET", Harness.COUNTER_KEY]).pipe(Effect.map((reply) => Number(replyToString(reply) ?? "0")))

const setCalls = (redis: RedisConnection.RedisConnection["Service"]) =>
  redis.execute(["INFO", "commandstats"]).pipe(
    Effect.map((reply) => {
      const match = /cmdstat_set:calls=(\d+)/.exec(replyToString(reply) ?? "")
      return match === null ? 0 : Number(match[1])
    })
  )

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("harness cells (redis-server)", (it) => {
  const url = Effect.gen(function* () {
    const server = yield* Embedded.EmbeddedServer
    return server.url
  })

  /** Runs a cell and checks the counter moved by exactly the ops it reports. */
  const counted = (run: Effect.Effect<Harness.Sample, unknown>) =>
    Effect.gen(function* () {
      const check = yield* RedisConnection.makeSingle({ url: yield* url })
      const before = yield* counter(check)
      const sample = yield* run
      const after = yield* counter(check)
      assert.isAbove(sample.ops, 0)
      assert.isAbove(sample.seconds, 0)
      assert.strictEqual(after - before, sample.ops)
    })

  const load = (callers: number, window: number) => ({ load: { callers, window }, op: "INCR" as const, millis: 30 })

  it.effect("Effect cells: pooled, multiplexed (execute), multiplexed x4 (submit window)", () =>
    Effect.gen(function* () {
      const u = yield* url
      const pooled = yield* RedisConnection.makePooled({ url: u, size: 2 })
      const one = yield* RedisConnection.makeMultiplexed({ url: u, connections: 1 })
      const four = yield* RedisConnection.makeMultiplexed({ url: u, connections: 4, routing: "spread" })
      yield* counted(Harness.runEffectCell(pooled, load(4, 1)))
      yield* counted(Harness.runEffectCell(one, load(8, 1)))
      yield* counted(Harness.runEffectCell(four, load(8, 8)))
    })
  )

  it.effect("Effect batch cells: one executeAll per batch, and N submits per batch", () =>
    Effect.gen(function* () {
      const u = yield* url
      const one = yield* RedisConnection.makeMultiplexed({ url: u, connections: 1 })
      const batches = { load: { callers: 4, window: 8, batch: true }, op: "INCR" as const, millis: 30 }
      yield* counted(Harness.runEffectCell(one, batches))
      yield* counted(Harness.runEffectCell(one, { ...batches, batchFace: "submits" }))
    })
  )

  it.effect("transport cells: the minimal client over node:net and over NodeSocket", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const { net, platform } = yield* Transport.makeClients(server.port)
      yield* counted(Harness.runEffectCell(net, load(8, 1)))
      yield* counted(Harness.runEffectCell(platform, load(8, 1)))
    })
  )

  it.effect("promise cells: every peer, window 1, a window of 8 and batches of 8", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      for (const peer of Peers.peers) {
        const client = yield* Effect.acquireRelease(
          Effect.promise(() => peer.open(server.port)),
          (c) => Effect.promise(() => c.close())
        )
        yield* counted(Effect.promise(() => Harness.runPromiseCell(client.send, load(4, 1))))
        yield* counted(Effect.promise(() => Harness.runPromiseCell(client.send, load(4, 8))))
        yield* counted(
          Effect.promise(() =>
            Harness.runPromiseCell(client.send, { ...load(4, 8), load: { callers: 4, window: 8, batch: true } })
          )
        )
      }
    })
  )

  it.effect("redis-benchmark cell: the server ran exactly the SETs it reported", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const check = yield* RedisConnection.makeSingle({ url: server.url })
      const before = yield* setCalls(check)
      const sample = yield* RedisBenchmark.measureOnce({ port: server.port, pipeline: 16, requests: 2000 })
      const after = yield* setCalls(check)
      assert.strictEqual(sample.ops, 2000)
      assert.strictEqual(after - before, 2000)
    })
  )
})
