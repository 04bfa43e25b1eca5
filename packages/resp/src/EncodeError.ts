/**
 * The error the encoder throws for a command it cannot put on the wire.
 *
 * @since 0.1.0
 */

/**
 * Why a command could not be encoded.
 *
 * @since 0.1.0
 * @category models
 */
export type EncodeErrorReason = "EmptyCommand" | "NonFiniteNumber" | "InvalidArgument"

/**
 * Thrown by the encoder; the engine converts it into a typed Effect error.
 *
 * @example
 * ```ts
 * import { EncodeError } from "@effect-falkordb/resp/EncodeError"
 * import { encodeCommand } from "@effect-falkordb/resp/Encoder"
 *
 * try {
 *   encodeCommand(["SET", "k", Number.NaN])
 * } catch (error) {
 *   if (error instanceof EncodeError) console.log(error.reason) // "NonFiniteNumber"
 * }
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class EncodeError extends Error {
  readonly reason: EncodeErrorReason
  constructor(reason: EncodeErrorReason, message: string) {
    super(message)
    this.name = "EncodeError"
    this.reason = reason
  }
}
