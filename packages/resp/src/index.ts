/**
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Decoder from "./Decoder.ts"
/** @since 0.1.0 */
export * as EncodeError from "./EncodeError.ts"
/** @since 0.1.0 */
export * as Encoder from "./Encoder.ts"
/** @since 0.1.0 */
export * as ProtocolError from "./ProtocolError.ts"
/** @since 0.1.0 */
export * as Reply from "./Reply.ts"
