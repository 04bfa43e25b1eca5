import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { crc16, hashSlot } from "../src/internal/HashSlot.ts"

describe("HashSlot", () => {
  it("crc16 check value of CRC16/XMODEM", () => {
    assert.strictEqual(crc16(new TextEncoder().encode("123456789")), 0x31c3)
  })

  it("documented Redis slots", () => {
    assert.strictEqual(hashSlot("foo"), 12182)
    assert.strictEqual(hashSlot("bar"), 5061)
    assert.strictEqual(hashSlot(""), 0)
    assert.strictEqual(hashSlot("{user1000}.following"), hashSlot("{user1000}.followers"))
    assert.strictEqual(hashSlot("{user1000}.following"), hashSlot("user1000"))
    // empty tag: the whole key is hashed
    assert.strictEqual(hashSlot("foo{}{bar}"), crc16(new TextEncoder().encode("foo{}{bar}")) % 16384)
    assert.strictEqual(hashSlot("foo{{bar}}zap"), hashSlot("{bar"))
    assert.strictEqual(hashSlot("foo{bar}{zap}"), hashSlot("bar"))
  })

  it("strings and their UTF-8 bytes agree", () => {
    fc.assert(fc.property(fc.string(), (s) => hashSlot(s) === hashSlot(new TextEncoder().encode(s))))
    // Non-ASCII around and inside tags (the ASCII fast path must step aside exactly when needed).
    const mixed = fc.string({ unit: fc.constantFrom("a", "{", "}", "é", "日", "😀", "Z") })
    fc.assert(fc.property(mixed, (s) => hashSlot(s) === hashSlot(new TextEncoder().encode(s))))
  })

  it("a non-empty tag decides the slot whatever surrounds it", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("{")),
        fc.string({ minLength: 1 }).filter((s) => !s.includes("}")),
        fc.string(),
        (prefix, tag, suffix) => {
          const slot = hashSlot(`${prefix}{${tag}}${suffix}`)
          return slot === hashSlot(tag) && slot >= 0 && slot < 16384
        }
      )
    )
  })
})
