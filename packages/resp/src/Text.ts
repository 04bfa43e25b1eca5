/**
 * Bytes as text, the one way every package of the client reads a RESP string (values, names,
 * keys, messages): UTF-8 with `ignoreBOM`, so a leading U+FEFF is part of the text. A plain
 * `TextDecoder` drops it, which would silently change a value that begins with one.
 *
 * @since 0.1.0
 */

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

/**
 * UTF-8 bytes as text, every code point kept (a leading U+FEFF included); an invalid
 * sequence becomes U+FFFD, as with any `TextDecoder`.
 *
 * @example
 * ```ts
 * import { decodeUtf8 } from "@effect-falkordb/resp/Text"
 *
 * decodeUtf8(new TextEncoder().encode("héllo")) // "héllo"
 * decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])) // "\uFEFFa": the byte-order mark is kept
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUtf8 = (bytes: Uint8Array): string => utf8.decode(bytes)
