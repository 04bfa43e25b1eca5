/**
 * The one reply-to-text conversion of the graph client. Every string the client reads from
 * a reply (values, names, header, statistics, plans, lists) goes through `text`, which keeps
 * every code point the server sent (`@effect-falkordb/resp/Text`'s `decodeUtf8`: a leading
 * U+FEFF stays).
 *
 * @internal
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import type { Reply } from "@effect-falkordb/resp/Reply"

/** A bulk or simple string reply as text; `undefined` for anything else. */
export const text = (reply: Reply): string | undefined => {
  if (reply instanceof Uint8Array) {
    // Very short ASCII payloads (many names and values) are built directly: a TextDecoder
    // call costs more than the copy for a few bytes. From ~10 bytes on the decoder wins (the
    // concatenated string must be flattened when first searched), so the cut is at 8.
    const length = reply.length
    if (length <= 8) {
      let out = ""
      for (let i = 0; i < length; i++) {
        const byte = reply[i]!
        if (byte >= 0x80) return decodeUtf8(reply)
        out += String.fromCharCode(byte)
      }
      return out
    }
    return decodeUtf8(reply)
  }
  if (typeof reply === "string") return reply
  return undefined
}
