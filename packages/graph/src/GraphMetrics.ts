/**
 * Metrics of the graph client (Effect `Metric`), recorded when the client is built with
 * `metrics: true` (`FalkorDB.layer({ metrics: true })`, which also turns on the connection's
 * engine metrics, or `FalkorDB.layerFromRedisWith({ metrics: true })`). Off, the graph handle
 * is built without them and pays nothing per call.
 *
 * | metric | kind | attributes |
 * |---|---|---|
 * | `db.client.operation.duration` | histogram, seconds | `db.system.name` (`falkordb`), `db.operation.name`, `falkordb.operation` |
 * | `falkordb.client.operations` | counter | `db.operation.name`, `falkordb.operation` |
 * | `falkordb.client.errors` | counter | `db.operation.name`, `falkordb.operation`, `error.type` (the `FalkorError` reason tag, or `interrupted`) |
 * | `db.client.response.returned_rows` | histogram | `db.system.name`, `db.operation.name`, `falkordb.operation` |
 * | `falkordb.client.schema.refreshes` | counter | `falkordb.schema.kind` (`labels`, `relationshipTypes`, `propertyKeys`) |
 *
 * `db.operation.name` is the command (`GRAPH.QUERY`, `GRAPH.RO_QUERY`, `GRAPH.EXPLAIN`, …,
 * `BATCH` for `Graph.batch`); `falkordb.operation` the method (`query`, `roQuery`, `stream`,
 * `roStream`, `explain`, `profile`, `batch`, `delete`, `copy`, `slowlog`, `slowlogReset`,
 * `memoryUsage`). Typed rows (`queryAs`), procedures, indexes and constraints run through
 * these methods and count under them. No graph name, query text or value is an attribute.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMetrics from "@effect-falkordb/graph/GraphMetrics"
 * import { Effect, Metric } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   yield* (yield* FalkorDB.FalkorDB).graph("g").roQuery("RETURN 1")
 *   const reads = Metric.withAttributes(GraphMetrics.operations, {
 *     "db.operation.name": "GRAPH.RO_QUERY",
 *     "falkordb.operation": "roQuery"
 *   })
 *   return (yield* Metric.value(reads)).count
 * }).pipe(Effect.provide(FalkorDB.layer({ metrics: true })))
 * ```
 *
 * @since 0.1.0
 */
import { databaseOperationDuration } from "@effect-falkordb/redis/RedisInstrumentation"
import * as Metric from "effect/Metric"

/**
 * The shared `db.client.operation.duration` histogram (the Redis decorator records into it
 * with `db.system.name: "redis"`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = databaseOperationDuration

/**
 * @since 0.1.0
 * @category metrics
 */
export const operations = Metric.counter("falkordb.client.operations", {
  description: "Graph client operations, by command and method",
  incremental: true
})

/**
 * @since 0.1.0
 * @category metrics
 */
export const errors = Metric.counter("falkordb.client.errors", {
  description: "Graph client operations that failed, by reason",
  incremental: true
})

/**
 * OpenTelemetry's recommended buckets for `db.client.response.returned_rows`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const returnedRows = Metric.histogram("db.client.response.returned_rows", {
  description: "Rows returned by graph queries",
  boundaries: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
})

/**
 * @since 0.1.0
 * @category metrics
 */
export const schemaRefreshes = Metric.counter("falkordb.client.schema.refreshes", {
  description: "Schema cache refreshes sent (db.labels(), db.relationshipTypes(), db.propertyKeys())",
  incremental: true
})
