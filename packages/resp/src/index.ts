/**
 * @since 0.1.0
 */
export * as EncodeError from "./EncodeError.ts"
/**
 * @since 0.1.0
 */
export * as Encoder from "./Encoder.ts"
/**
 * @since 0.1.0
 */
export * as Reply from "./Reply.ts"
