/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cypher from "./Cypher.ts"
