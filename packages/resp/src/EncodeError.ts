/**
 * The error the encoder throws for an argument it cannot send.
 *
 * @since 0.1.0
 */

/**
 * An argument that cannot be encoded (NaN, Infinity, an object) or an empty command.
 *
 * @since 0.1.0
 * @category errors
 */
export class EncodeError extends Error {
  readonly reason: "InvalidArgument" | "EmptyCommand"
  constructor(reason: "InvalidArgument" | "EmptyCommand", message: string) {
    super(message)
    this.name = "EncodeError"
    this.reason = reason
  }
}
