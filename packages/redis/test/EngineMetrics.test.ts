/**
 * Engine metrics (`metrics: true`) against a real redis-server: the values after a known
 * workload — latencies per strategy, a forced reconnect (`CLIENT KILL`), window waits with a
 * window of 1, requests in flight per engine while the server is paused, pooled waits — and
 * no engine metric at all when the option is off.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as EngineMetrics from "../src/internal/EngineMetrics.ts"
import * as RedisConnection from "../src/RedisConnection.ts"

/** A fresh registry per test: the values read are this test's only. */
const isolated = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Metric.MetricRegistry, new Map())

const pool = (server: { readonly host: string; readonly port: number }) => `${server.host}:${server.port}/0`

describe("engine metrics", { timeout: 30_000 }, () => {
  it.live("a single client: latency per strategy, errors included, and a reconnect after CLIENT KILL", () =>
    isolated(
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const redis = yield* RedisConnection.makeSingle({ url: server.url, metrics: true })
          const admin = yield* RedisConnection.makeSingle({ url: server.url })
          for (let i = 0; i < 10; i++) yield* redis.execute(["SET", `k${i}`, "v"])
          for (let i = 0; i < 3; i++) yield* Effect.flip(redis.execute(["INCR", "k1"]))
          yield* redis.pipeline([
            ["GET", "k1"],
            ["GET", "k2"]
          ])
          const attributes = { "db.client.connection.pool.name": pool(server), "redis.strategy": "single" }
          const duration = yield* Metric.value(
            Metric.withAttributes(EngineMetrics.requestDuration, { ...attributes, "db.system.name": "redis" })
          )
          // 10 SET + 3 failed INCR + 1 pipeline: one request each.
          assert.strictEqual(duration.count, 14)
          assert.isTrue(duration.min > 0)
          const used = Metric.withAttributes(EngineMetrics.connectionCount, {
            ...attributes,
            "db.client.connection.state": "used"
          })
          assert.strictEqual((yield* Metric.value(used)).value, 1)

          yield* admin.execute(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
          // Nothing is sent until the loss is seen, so the server's close is a clean one.
          const reconnects = Metric.withAttributes(EngineMetrics.reconnects, { ...attributes, "error.type": "closed" })
          const seen = yield* Metric.value(reconnects).pipe(
            Effect.repeat({ until: (s) => s.count > 0, times: 250, schedule: Schedule.spaced("20 millis") })
          )
          assert.strictEqual(seen.count, 1)
          yield* redis.execute(["PING"])
          assert.strictEqual((yield* Metric.value(reconnects)).count, 1)
          const snapshot = yield* Metric.snapshot
          const lost = snapshot.filter((s) => s.id === "redis.client.reconnects")
          assert.strictEqual(lost.length, 1, "one reason only")
          // No window wait at this load; the gauge of the engine reads 0 once idle.
          const waits = yield* Metric.value(Metric.withAttributes(EngineMetrics.windowWaits, attributes))
          assert.strictEqual(waits.count, 0)
          const pending = yield* Metric.value(
            Metric.withAttributes(EngineMetrics.pendingRequests, { ...attributes, "redis.engine": "0" })
          )
          assert.strictEqual(pending.value, 0)
          // Attributes are bounded: no key, no value.
          const text = JSON.stringify(snapshot)
          assert.notInclude(text, "k1")
        })
      )
    )
  )

  it.live(
    "window 1 and many callers: window waits counted; in-flight gauge per engine while the server is paused",
    () =>
      isolated(
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* Embedded.make()
            const redis = yield* RedisConnection.makeMultiplexed({
              url: server.url,
              metrics: true,
              window: 1,
              connections: 2,
              routing: "spread"
            })
            yield* Effect.forEach(
              Array.from({ length: 40 }, (_, i) => i),
              (i) => redis.execute(["INCR", `c${i % 4}`]),
              {
                concurrency: "unbounded",
                discard: true
              }
            )
            const attributes = { "db.client.connection.pool.name": pool(server), "redis.strategy": "multiplexed" }
            const waits = yield* Metric.value(Metric.withAttributes(EngineMetrics.windowWaits, attributes))
            // 40 callers on 2 engines of window 1: at most 2 get in without waiting.
            assert.isAtLeast(waits.count, 38)
            const duration = yield* Metric.value(
              Metric.withAttributes(EngineMetrics.requestDuration, { ...attributes, "db.system.name": "redis" })
            )
            assert.strictEqual(duration.count, 40)

            // Paused server: submitted commands stay in flight, and the gauges show where.
            const admin = yield* RedisConnection.makeSingle({ url: server.url })
            const wide = yield* RedisConnection.makeMultiplexed({ url: server.url, metrics: true, window: 16 })
            // Long enough that the reads below happen inside it even on a loaded machine.
            yield* admin.execute(["CLIENT", "PAUSE", "1500", "ALL"])
            const futures = yield* Effect.forEach(
              Array.from({ length: 5 }, (_, i) => i),
              (i) => wide.submit(["GET", `p${i}`])
            )
            const gauge = Metric.withAttributes(EngineMetrics.pendingRequests, {
              // The second live client of this server in this registry.
              "db.client.connection.pool.name": `${pool(server)}#2`,
              "redis.strategy": "multiplexed",
              "redis.engine": "0"
            })
            assert.strictEqual((yield* Metric.value(gauge)).value, 5)
            for (const future of futures) yield* future.await
            assert.strictEqual((yield* Metric.value(gauge)).value, 0)
            const engines = (yield* Metric.snapshot).filter(
              (s) =>
                s.id === "db.client.connection.pending_requests" &&
                s.attributes?.["db.client.connection.pool.name"] === pool(server)
            )
            assert.deepStrictEqual(engines.map((s) => s.attributes?.["redis.engine"]).sort(), ["0", "1"])
          })
        )
      )
  )

  it.live("pooled: borrow waits and idle/used connections", () =>
    isolated(
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const redis = yield* RedisConnection.makePooled({ url: server.url, metrics: true, size: 2 })
          yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            (i) => redis.execute(["SET", `s${i}`, "v"]),
            {
              concurrency: 6,
              discard: true
            }
          )
          const attributes = { "db.client.connection.pool.name": pool(server), "redis.strategy": "pooled" }
          const waited = yield* Metric.value(Metric.withAttributes(EngineMetrics.connectionWaitTime, attributes))
          assert.strictEqual(waited.count, 12)
          const state = (value: "used" | "idle") =>
            Effect.map(
              Metric.value(
                Metric.withAttributes(EngineMetrics.connectionCount, {
                  ...attributes,
                  "db.client.connection.state": value
                })
              ),
              (s) => s.value
            )
          assert.strictEqual(yield* state("used"), 0)
          assert.strictEqual(yield* state("idle"), 2)
          const fiber = yield* Effect.forkChild(redis.execute(["BLPOP", "nothing", "2"]).pipe(Effect.exit))
          // A blocking command on a pooled client waits on a borrowed connection.
          const used = yield* state("used").pipe(
            Effect.repeat({ until: (n) => n === 1, times: 300, schedule: Schedule.spaced("5 millis") })
          )
          assert.strictEqual(used, 1)
          assert.strictEqual(yield* state("idle"), 1)
          yield* Fiber.join(fiber)
        })
      )
    )
  )

  it.live("off by default: no engine metric is recorded", () =>
    isolated(
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const redis = yield* RedisConnection.makeMultiplexed({ url: server.url, window: 1 })
          yield* Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) => redis.execute(["INCR", `c${i}`]),
            {
              concurrency: "unbounded",
              discard: true
            }
          )
          assert.deepStrictEqual(yield* Metric.snapshot, [])
        })
      )
    )
  )
})
