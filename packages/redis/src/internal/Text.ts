/**
 * The one bytes-to-text conversion of the engine (command names and keys in messages, text
 * replies in `ReplySchema`). UTF-8 with `ignoreBOM`: a leading U+FEFF is part of the text,
 * not a marker to drop.
 *
 * @internal
 */

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

/** UTF-8 bytes as text, every code point kept. */
export const decodeUtf8 = (bytes: Uint8Array): string => utf8.decode(bytes)

/** A command argument (or any value) as text for messages. */
export const argumentText = (value: unknown): string =>
  typeof value === "string" ? value : value instanceof Uint8Array ? utf8.decode(value) : String(value)
