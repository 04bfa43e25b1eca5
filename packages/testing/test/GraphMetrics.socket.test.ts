// Graph metrics (`metrics: true`) after a known workload against the RESP test server replaying
// the FalkorDB 4.18.11 `nodes` recordings over a real socket: operations by command and
// method, failures by reason, rows returned, schema refreshes, durations — and the connection's
// engine metrics turned on by the same option. Off, nothing is recorded.
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphMetrics from "@effect-falkordb/graph/GraphMetrics"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"

const isolated = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Metric.MetricRegistry, new Map())

/** A client over a single connection to the server replaying the `nodes` recordings, for the scope. */
const replayedClient = (metrics: boolean) =>
  Effect.gen(function* () {
    const fixture = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "nodes")
    const server = yield* FixtureReplay.serve(fixture)
    const context = yield* Layer.build(FalkorDB.layer({ url: server.url, strategy: "single", metrics }))
    return Context.get(context, FalkorDB.FalkorDB)
  })

const ALL = "MATCH (n) RETURN n ORDER BY id(n)"
const COUNT = "MATCH (n) RETURN count(n) AS nodes"

const attributes = (command: string, operation: string) => ({
  "db.operation.name": command,
  "falkordb.operation": operation
})

describe("graph metrics", { timeout: 30_000 }, () => {
  it.live("count operations, failures by reason, rows and schema refreshes after a replayed workload", () =>
    isolated(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* replayedClient(true)
          const graph = db.graph("nodes")
          const all = yield* graph.query(ALL)
          const count = yield* graph.query(COUNT)
          assert.isAbove(all.rows.length, 1)
          assert.strictEqual(count.rows.length, 1)
          const streamed = yield* Stream.runCount(graph.stream(ALL))
          const failed = yield* Effect.flip(graph.query("MATCH (n) RETURN n.unrecorded"))
          const read = (metric: Metric.Metric<number, Metric.CounterState<number>>) =>
            Effect.map(Metric.value(metric), (s) => s.count)

          assert.strictEqual(
            yield* read(Metric.withAttributes(GraphMetrics.operations, attributes("GRAPH.QUERY", "query"))),
            3
          )
          assert.strictEqual(
            yield* read(Metric.withAttributes(GraphMetrics.operations, attributes("GRAPH.QUERY", "stream"))),
            1
          )
          assert.strictEqual(
            yield* read(
              Metric.withAttributes(GraphMetrics.errors, {
                ...attributes("GRAPH.QUERY", "query"),
                "error.type": failed.reason._tag
              })
            ),
            1
          )
          const rows = yield* Metric.value(
            Metric.withAttributes(GraphMetrics.returnedRows, {
              "db.system.name": "falkordb",
              ...attributes("GRAPH.QUERY", "query")
            })
          )
          // Rows of the two successful queries; the failed one returned none.
          assert.strictEqual(rows.count, 2)
          assert.strictEqual(rows.sum, all.rows.length + 1)
          const streamRows = yield* Metric.value(
            Metric.withAttributes(GraphMetrics.returnedRows, {
              "db.system.name": "falkordb",
              ...attributes("GRAPH.QUERY", "stream")
            })
          )
          assert.strictEqual(streamRows.sum, streamed)
          const durations = yield* Metric.value(
            Metric.withAttributes(GraphMetrics.operationDuration, {
              "db.system.name": "falkordb",
              ...attributes("GRAPH.QUERY", "query")
            })
          )
          assert.strictEqual(durations.count, 3)
          // The first query met unknown labels and property keys: one refresh of each, then cached.
          const refreshes = (kind: string) =>
            read(Metric.withAttributes(GraphMetrics.schemaRefreshes, { "falkordb.schema.kind": kind }))
          assert.strictEqual(yield* refreshes("labels"), graph.schema.refreshes.labels)
          assert.strictEqual(yield* refreshes("propertyKeys"), graph.schema.refreshes.propertyKeys)
          assert.isAtLeast(yield* refreshes("labels"), 1)
          // The same option turned on the connection's engine metrics.
          const engine = (yield* Metric.snapshot).filter((s) => s.id === "redis.client.request.duration")
          assert.strictEqual(engine.length, 1)
          // No graph name, query text or value in any series.
          const text = JSON.stringify(yield* Metric.snapshot)
          for (const leak of ["nodes", "MATCH", "unrecorded", "RETURN"]) assert.notInclude(text, leak)
        })
      )
    )
  )

  it.live("off by default: no graph metric is recorded", () =>
    isolated(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* replayedClient(false)
          yield* db.graph("nodes").query(ALL)
          assert.deepStrictEqual(yield* Metric.snapshot, [])
        })
      )
    )
  )
})
