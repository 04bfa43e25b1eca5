/**
 * The one reply-to-text conversion of the graph client. Every string the client reads from
 * a reply (values, names, header, statistics, plans, lists) goes through `text`, which keeps
 * every code point the server sent: a `TextDecoder` drops a leading U+FEFF unless told
 * `ignoreBOM`, which would silently change a string that begins with one.
 *
 * @internal
 */
import type { Reply } from "@effect-falkordb/resp/Reply"

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

/** UTF-8 bytes as text, every code point kept (a leading U+FEFF included). */
export const decodeUtf8 = (bytes: Uint8Array): string => utf8.decode(bytes)

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
        if (byte >= 0x80) return utf8.decode(reply)
        out += String.fromCharCode(byte)
      }
      return out
    }
    return utf8.decode(reply)
  }
  if (typeof reply === "string") return reply
  return undefined
}
