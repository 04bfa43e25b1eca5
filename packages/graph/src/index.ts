/**
 * The FalkorDB client: `FalkorDB` and `Graph`, `Cypher` parameters, values, rows, errors and the
 * schema helpers. Each module is also its own entry point (`@effect-falkordb/graph/FalkorDB`, …).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Algorithms from "./Algorithms.ts"
/** @since 0.1.0 */
export * as Batch from "./Batch.ts"
/** @since 0.1.0 */
export * as Constraints from "./Constraints.ts"
/** @since 0.1.0 */
export * as BulkLoader from "./BulkLoader.ts"
/** @since 0.1.0 */
export * as Cypher from "./Cypher.ts"
/** @since 0.1.0 */
export * as FalkorDB from "./FalkorDB.ts"
/** @since 0.1.0 */
export * as FalkorError from "./FalkorError.ts"
/** @since 0.1.0 */
export * as Graph from "./Graph.ts"
/** @since 0.1.0 */
export * as GraphInfo from "./GraphInfo.ts"
/** @since 0.1.0 */
export * as GraphModel from "./GraphModel.ts"
/** @since 0.1.0 */
export * as GraphMetrics from "./GraphMetrics.ts"
/** @since 0.1.0 */
export * as GraphMigrator from "./GraphMigrator.ts"
/** @since 0.1.0 */
export * as GraphReactivity from "./GraphReactivity.ts"
/** @since 0.1.0 */
export * as GraphResolver from "./GraphResolver.ts"
/** @since 0.1.0 */
export * as GraphSchema from "./GraphSchema.ts"
/** @since 0.1.0 */
export * as Identifier from "./Identifier.ts"
/** @since 0.1.0 */
export * as Indexes from "./Indexes.ts"
/** @since 0.1.0 */
export * as Ingest from "./Ingest.ts"
/** @since 0.1.0 */
export * as IngestFiles from "./IngestFiles.ts"
/** @since 0.1.0 */
export * as LoadError from "./LoadError.ts"
/** @since 0.1.0 */
export * as MigrationError from "./MigrationError.ts"
/** @since 0.1.0 */
export * as Procedures from "./Procedures.ts"
/** @since 0.1.0 */
export * as Row from "./Row.ts"
/** @since 0.1.0 */
export * as Search from "./Search.ts"
/** @since 0.1.0 */
export * as Temporal from "./Temporal.ts"
/** @since 0.1.0 */
export * as Udf from "./Udf.ts"
/** @since 0.1.0 */
export * as Value from "./Value.ts"
