/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cypher from "./Cypher.ts"
/** @since 0.1.0 */
export * as FalkorDB from "./FalkorDB.ts"
/** @since 0.1.0 */
export * as FalkorError from "./FalkorError.ts"
/** @since 0.1.0 */
export * as Graph from "./Graph.ts"
/** @since 0.1.0 */
export * as Row from "./Row.ts"
/** @since 0.1.0 */
export * as Temporal from "./Temporal.ts"
/** @since 0.1.0 */
export * as Value from "./Value.ts"
