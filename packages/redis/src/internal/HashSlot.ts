/**
 * Redis Cluster hash slots: CRC16/XMODEM of the key (or of its `{hashtag}`) modulo 16384.
 *
 * @internal
 */

// Table-driven CRC16/XMODEM (poly 0x1021, init 0): one lookup per byte on the routing hot path.
const table: Uint16Array = (() => {
  const t = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let j = 0; j < 8; j++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
    t[i] = crc
  }
  return t
})()

const encoder = new TextEncoder()

/**
 * The number of hash slots in a Redis Cluster.
 *
 * @since 0.1.0
 * @category constants
 */
export const SLOTS = 16384

/**
 * CRC16/XMODEM of `bytes[start, end)`.
 *
 * @since 0.1.0
 * @category hashing
 */
export const crc16 = (bytes: Uint8Array, start = 0, end = bytes.length): number => {
  let crc = 0
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ bytes[i]!) & 0xff]!
  }
  return crc
}

/** The slot of an ASCII key straight from its char codes (no encoding on the routing hot path); -1 otherwise. */
const asciiSlot = (key: string): number => {
  let start = 0
  let end = key.length
  const open = key.indexOf("{")
  if (open !== -1) {
    const close = key.indexOf("}", open + 1)
    if (close > open + 1) {
      start = open + 1
      end = close
    }
  }
  let crc = 0
  for (let i = start; i < end; i++) {
    const code = key.charCodeAt(i)
    if (code >= 0x80) return -1
    crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ code) & 0xff]!
  }
  // "{" and "}" never occur inside a UTF-8 sequence: only the hashed part must be ASCII.
  return crc & (SLOTS - 1)
}

/**
 * The hash slot of a key, with the Redis Cluster hashtag rule: if the key has a `{` followed later by a `}`
 * with at least one byte between them, only those bytes are hashed; otherwise the whole key is.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashSlot = (key: string | Uint8Array): number => {
  if (typeof key === "string") {
    const ascii = asciiSlot(key)
    if (ascii >= 0) return ascii
  }
  const bytes = typeof key === "string" ? encoder.encode(key) : key
  const open = bytes.indexOf(0x7b)
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1)
    if (close > open + 1) return crc16(bytes, open + 1, close) & (SLOTS - 1)
  }
  return crc16(bytes) & (SLOTS - 1)
}
