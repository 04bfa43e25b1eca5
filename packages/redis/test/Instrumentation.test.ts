/**
 * The instrumentation layer against a real redis-server: metric values after a known
 * workload (folded replies counted like execute), and the attributes of command and pipeline spans, with no argument value in any
 * of them.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Tracer from "effect/Tracer"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisInstrumentation from "../src/RedisInstrumentation.ts"

const client = (url: string, options: RedisInstrumentation.InstrumentationOptions) =>
  Effect.gen(function* () {
    const base = yield* RedisConnection.makeSingle({ url })
    const context = yield* Effect.context<never>()
    return RedisInstrumentation.instrument(base, options, context)
  })

describe("instrumentation", { timeout: 30_000 }, () => {
  it.live("metrics count commands, errors by reason and durations after a known workload", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const redis = yield* client(server.url, { metrics: true })
        for (let i = 0; i < 5; i++) yield* redis.execute(["SET", `k${i}`, "secret-value"])
        yield* redis.execute(["GET", "k1"])
        yield* Effect.flip(redis.execute(["INCR", "k1"]))
        yield* redis.pipeline([
          ["GET", "k1"],
          ["GET", "k2"]
        ])
        yield* redis.executeAll([
          ["GET", "k1"],
          ["GET", "k2"],
          ["GET", "k3"]
        ])
        // A folded reply is one command, measured like execute.
        yield* redis.execute(["RPUSH", "list", "a", "b", "c"])
        const folded = yield* RedisConnection.executeFolded(redis, ["LRANGE", "list", "0", "-1"], () => {
          let elements = 0
          return {
            depth: 1,
            open: () => {},
            value: (depth) => {
              if (depth === 1) elements++
            },
            close: () => {},
            result: () => elements
          }
        })
        assert.strictEqual(folded, 3)
        const attributes = (operation: string) => ({ "db.operation.name": operation, "redis.strategy": "single" })
        const count = (operation: string) =>
          Effect.map(
            Metric.value(Metric.withAttributes(RedisInstrumentation.commands, attributes(operation))),
            (s) => s.count
          )
        assert.strictEqual(yield* count("SET"), 5)
        assert.strictEqual(yield* count("GET"), 1)
        assert.strictEqual(yield* count("INCR"), 1)
        assert.strictEqual(yield* count("LRANGE"), 1)
        assert.strictEqual(yield* count("PIPELINE"), 1)
        // One measurement for the batch, not one per command.
        assert.strictEqual(yield* count("EXECUTE_ALL"), 1)
        const failed = yield* Metric.value(
          Metric.withAttributes(RedisInstrumentation.errors, { ...attributes("INCR"), "error.type": "Reply" })
        )
        assert.strictEqual(failed.count, 1)
        const durations = yield* Metric.value(
          Metric.withAttributes(RedisInstrumentation.operationDuration, attributes("SET"))
        )
        assert.strictEqual(durations.count, 5)
        assert.isTrue(durations.min > 0 && durations.max < 10)
        const gauge = yield* Metric.value(
          Metric.withAttributes(RedisInstrumentation.inflight, { "redis.strategy": "single" })
        )
        assert.strictEqual(gauge.value, 0)
        // No metric series carries an argument or a value.
        const snapshot = JSON.stringify(yield* Metric.snapshot)
        assert.notInclude(snapshot, "secret-value")
        assert.notInclude(snapshot, "k1")
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
    )
  )

  it.live("spans carry server, operation, summary, fingerprint and batch size, never an argument", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const spans: Array<Tracer.NativeSpan> = []
        const tracer = Tracer.make({
          span(options) {
            const span = new Tracer.NativeSpan(options)
            spans.push(span)
            return span
          }
        })
        const redis = yield* client(server.url, { metrics: false, spans: true, queryText: true })
        yield* Effect.gen(function* () {
          yield* redis.execute(["SET", "user:42", "top-secret"])
          yield* redis.pipeline([
            ["GET", "user:42"],
            ["INCR", "counter:9"]
          ])
          yield* redis.executeAll([
            ["GET", "user:42"],
            ["INCR", "counter:9"],
            ["GET", "user:42"]
          ])
        }).pipe(Effect.provideService(Tracer.Tracer, tracer))
        const [set, pipeline, all] = spans
        assert.strictEqual(all?.name, "EXECUTE_ALL")
        assert.strictEqual(all?.attributes.get("db.operation.batch.size"), 3)
        assert.strictEqual(all?.attributes.get("db.query.text"), "GET ?; INCR ?; GET ?")
        assert.strictEqual(set?.name, "SET")
        assert.strictEqual(set?.kind, "client")
        assert.deepStrictEqual(Object.fromEntries(set!.attributes), {
          "db.system.name": "redis",
          "db.operation.name": "SET",
          "db.query.summary": "SET",
          "db.namespace": "0",
          "server.address": server.host,
          "server.port": server.port,
          "db.query.text": "SET ? ?"
        })
        assert.strictEqual(pipeline?.name, "PIPELINE")
        assert.strictEqual(pipeline?.attributes.get("db.operation.batch.size"), 2)
        assert.strictEqual(pipeline?.attributes.get("db.query.text"), "GET ?; INCR ?")
        const everything = JSON.stringify(spans.map((span) => [span.name, [...span.attributes]]))
        for (const secret of ["top-secret", "user:42", "counter:9"]) assert.notInclude(everything, secret)
      })
    )
  )
})
