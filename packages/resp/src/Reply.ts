/**
 * The values a RESP2/RESP3 decoder produces.
 *
 * The common types are plain JavaScript values so the hot path allocates nothing extra:
 * simple strings are `string`, bulk strings are `Uint8Array` (a zero-copy view into the
 * received bytes whenever the payload arrived in one chunk), integers are `number` (or
 * `bigint` outside the safe range), doubles are `number`, null is `null`. The rare RESP3
 * aggregates and error replies are small classes, so a consumer can tell them apart with
 * `instanceof` and an error nested inside an array survives decoding as a value.
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "./Text.ts"

/**
 * An error reply (`-ERR …` or the RESP3 bulk error `!`). It is a value, not a thrown
 * exception: it can appear at the top level or nested inside an aggregate.
 *
 * @since 0.1.0
 * @category models
 */
export class ErrorReply {
  /**
   * The whole error line, exactly as the server sent it (without the type byte and CRLF).
   */
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
  /**
   * The first word of the message when it is written in upper case (`ERR`, `WRONGTYPE`,
   * `MOVED`, `LOADING` …), otherwise `undefined`: many FalkorDB errors carry no prefix.
   */
  get code(): string | undefined {
    const space = this.message.indexOf(" ")
    const word = space === -1 ? this.message : this.message.slice(0, space)
    return word.length > 0 && /^[A-Z][A-Z_]*$/.test(word) ? word : undefined
  }
}

/**
 * A RESP3 map (`%`). Keys and values are kept in wire order as a flat array
 * `[key0, value0, key1, value1, …]`, because keys may be any reply (not only strings)
 * and duplicates must not be silently merged.
 *
 * @since 0.1.0
 * @category models
 */
export class MapReply {
  readonly flat: ReadonlyArray<Reply>
  constructor(flat: ReadonlyArray<Reply>) {
    this.flat = flat
  }
  /** Number of key/value pairs. */
  get size(): number {
    return this.flat.length >>> 1
  }
  /** The value of the first entry whose key, read as UTF-8 text, equals `key`. */
  get(key: string): Reply | undefined {
    for (let i = 0; i < this.flat.length; i += 2) {
      if (replyToString(this.flat[i]!) === key) return this.flat[i + 1]
    }
    return undefined
  }
  /** The entries as `[key, value]` pairs. */
  entries(): Array<readonly [Reply, Reply]> {
    const out: Array<readonly [Reply, Reply]> = []
    for (let i = 0; i < this.flat.length; i += 2) out.push([this.flat[i]!, this.flat[i + 1]!])
    return out
  }
}

/**
 * A RESP3 set (`~`), elements in wire order.
 *
 * @since 0.1.0
 * @category models
 */
export class SetReply {
  readonly items: ReadonlyArray<Reply>
  constructor(items: ReadonlyArray<Reply>) {
    this.items = items
  }
}

/**
 * A RESP3 push frame (`>`): out-of-band data (pub/sub messages, client-side caching
 * invalidations). It never answers a request, so a connection must not match it to one.
 *
 * @since 0.1.0
 * @category models
 */
export class PushReply {
  readonly items: ReadonlyArray<Reply>
  constructor(items: ReadonlyArray<Reply>) {
    this.items = items
  }
}

/**
 * A RESP3 verbatim string (`=`): a three-letter format (`txt`, `mkd`) and the text.
 *
 * @since 0.1.0
 * @category models
 */
export class VerbatimReply {
  readonly format: string
  readonly text: Uint8Array
  constructor(format: string, text: Uint8Array) {
    this.format = format
    this.text = text
  }
}

/**
 * A reply preceded by RESP3 attributes (`|`). The attributes describe the reply; the
 * reply itself is `value`.
 *
 * @since 0.1.0
 * @category models
 */
export class AttributedReply {
  readonly attributes: MapReply
  readonly value: Reply
  constructor(attributes: MapReply, value: Reply) {
    this.attributes = attributes
    this.value = value
  }
}

/**
 * Any decoded reply.
 *
 * | wire | value |
 * |---|---|
 * | `+` simple string | `string` |
 * | `$` bulk string | `Uint8Array` |
 * | `:` integer | `number`, or `bigint` outside ±(2^53 − 1) |
 * | `(` big number | `bigint` |
 * | `,` double | `number` (incl. `Infinity`, `-Infinity`, `NaN`) |
 * | `#` boolean | `boolean` |
 * | `_`, `$-1`, `*-1` null | `null` |
 * | `-`, `!` error | {@link ErrorReply} |
 * | `*` array | `ReadonlyArray<Reply>` |
 * | `%` map, `~` set, `>` push, `=` verbatim, `\|` attributes | the classes above |
 *
 * @since 0.1.0
 * @category models
 */
export type Reply =
  | string
  | Uint8Array
  | number
  | bigint
  | boolean
  | null
  | ErrorReply
  | ReadonlyArray<Reply>
  | MapReply
  | SetReply
  | PushReply
  | VerbatimReply
  | AttributedReply

/**
 * Reads a string-like reply (simple, bulk or verbatim string, or a number) as text;
 * `undefined` for anything else.
 *
 * @example
 * ```ts
 * import { ErrorReply, replyToString } from "@effect-falkordb/resp/Reply"
 *
 * replyToString(new TextEncoder().encode("hello")) // "hello"
 * replyToString(42) // "42"
 * replyToString(new ErrorReply("ERR no")) // undefined
 * new ErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value").code // "WRONGTYPE"
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const replyToString = (reply: Reply): string | undefined => {
  if (typeof reply === "string") return reply
  if (reply instanceof Uint8Array) return decodeUtf8(reply)
  if (typeof reply === "number" || typeof reply === "bigint") return String(reply)
  if (reply instanceof VerbatimReply) return decodeUtf8(reply.text)
  return undefined
}

/**
 * True for an {@link ErrorReply}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isErrorReply = (reply: Reply): reply is ErrorReply => reply instanceof ErrorReply
