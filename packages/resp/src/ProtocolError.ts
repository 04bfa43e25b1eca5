/**
 * The error a decoder reports for bytes that are not valid RESP.
 *
 * @since 0.1.0
 */

/**
 * What was wrong with the input.
 *
 * @since 0.1.0
 * @category models
 */
export type ProtocolErrorReason =
  | "UnexpectedType"
  | "InvalidLength"
  | "InvalidInteger"
  | "InvalidDouble"
  | "InvalidBoolean"
  | "MissingCRLF"
  | "BulkTooLong"
  | "LineTooLong"
  | "AggregateTooLong"
  | "TooDeep"

/**
 * Malformed RESP input: says what and at which absolute byte offset of the stream.
 * Fatal for the stream it came from; no partial value is ever delivered.
 *
 * @example
 * ```ts
 * import { Decoder } from "@effect-falkordb/resp/Decoder"
 *
 * const decoder = new Decoder(() => {})
 * const error = decoder.feed(new TextEncoder().encode(":12x\r\n"))
 * // error?.reason === "InvalidInteger"; the stream is over: reset() before feeding another one
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ProtocolError extends Error {
  readonly reason: ProtocolErrorReason
  readonly offset: number
  constructor(reason: ProtocolErrorReason, detail: string, offset: number) {
    super(`${detail} at offset ${offset}`)
    this.name = "ProtocolError"
    this.reason = reason
    this.offset = offset
  }
}
