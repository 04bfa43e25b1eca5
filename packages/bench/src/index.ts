/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Engines from "./engines.ts"
/** @since 0.1.0 */
export * as Harness from "./harness.ts"
/** @since 0.1.0 */
export * as Peers from "./peers.ts"
/** @since 0.1.0 */
export * as Raw from "./raw.ts"
/** @since 0.1.0 */
export * as RedisBenchmark from "./redisBenchmark.ts"
/** @since 0.1.0 */
export * as Strategies from "./strategies.ts"
