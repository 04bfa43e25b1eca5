/**
 * The connection engine: the `RedisConnection` service and its layers, options, errors and the
 * key-routing helpers. Each module is also its own entry point (`@effect-falkordb/redis/RedisConnection`, …).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as CommandKeys from "./CommandKeys.ts"
/** @since 0.1.0 */
export * as ConfigInput from "./ConfigInput.ts"
/** @since 0.1.0 */
export * as PersistenceRedis from "./PersistenceRedis.ts"
/** @since 0.1.0 */
export * as RedisClientCache from "./RedisClientCache.ts"
/** @since 0.1.0 */
export * as RedisConnection from "./RedisConnection.ts"
/** @since 0.1.0 */
export * as RedisPubSub from "./RedisPubSub.ts"
/** @since 0.1.0 */
export * as RedisError from "./RedisError.ts"
/** @since 0.1.0 */
export * as RedisInstrumentation from "./RedisInstrumentation.ts"
/** @since 0.1.0 */
export * as RedisOptions from "./RedisOptions.ts"
/** @since 0.1.0 */
export * as ReplySchema from "./ReplySchema.ts"
