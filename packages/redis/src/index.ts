/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as CommandKeys from "./CommandKeys.ts"
/** @since 0.1.0 */
export * as RedisConnection from "./RedisConnection.ts"
/** @since 0.1.0 */
export * as RedisError from "./RedisError.ts"
/** @since 0.1.0 */
export * as RedisOptions from "./RedisOptions.ts"
/** @since 0.1.0 */
export * as ReplySchema from "./ReplySchema.ts"
