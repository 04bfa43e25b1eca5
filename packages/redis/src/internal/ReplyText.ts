/**
 * A reply named in an error message by what it is on the wire (`the bulk string "abc"`, `a map
 * of 3 entries`), so a decoding failure speaks of the reply, not of the classes holding it.
 *
 * @internal
 */
import {
  AttributedReply,
  ErrorReply,
  MapReply,
  PushReply,
  type Reply,
  SetReply,
  VerbatimReply
} from "@effect-falkordb/resp/Reply"
import { decodeUtf8 } from "@effect-falkordb/resp/Text"

const MAX_SHOWN = 40

const quoted = (text: string): string => JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text)

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`

/** What `reply` is, for a message. */
export const describeReply = (reply: Reply): string => {
  if (reply === null) return "null (no value)"
  if (typeof reply === "string") return `the simple string ${quoted(reply)}`
  if (reply instanceof Uint8Array) return `the bulk string ${quoted(decodeUtf8(reply))}`
  if (typeof reply === "number") return Number.isInteger(reply) ? `the integer ${reply}` : `the double ${reply}`
  if (typeof reply === "bigint") return `the integer ${reply}`
  if (typeof reply === "boolean") return `the boolean ${reply}`
  if (reply instanceof ErrorReply) return `the error ${quoted(reply.message)}`
  if (reply instanceof MapReply) return `a map of ${plural(reply.flat.length / 2, "entry", "entries")}`
  if (reply instanceof SetReply) return `a set of ${plural(reply.items.length, "element", "elements")}`
  if (reply instanceof PushReply) return "a push message"
  if (reply instanceof VerbatimReply) return `the verbatim string ${quoted(decodeUtf8(reply.text))}`
  if (reply instanceof AttributedReply) return describeReply(reply.value)
  return `an array of ${plural(reply.length, "element", "elements")}`
}
