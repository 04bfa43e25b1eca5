/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as HashSlot from "./HashSlot.ts"
