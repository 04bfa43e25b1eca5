/**
 * The RESP2/RESP3 wire format: `Encoder`, the resumable `Decoder`, the `Reply` values, the
 * two errors and `Text` (bytes as UTF-8 text, every code point kept). Each module is also its
 * own entry point (`@effect-falkordb/resp/Decoder`, …).
 *
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
/** @since 0.1.0 */
export * as Text from "./Text.ts"
