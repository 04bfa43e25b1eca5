/**
 * A throw-away `redis-server` (with the FalkorDB module when asked) as a scoped Layer.
 * The module is also its own entry point (`@effect-falkordb/embedded/Embedded`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Embedded from "./Embedded.ts"

/** @since 0.1.0 */
export * as EmbeddedError from "./EmbeddedError.ts"
