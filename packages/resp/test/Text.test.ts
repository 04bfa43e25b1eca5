import { assert, describe, it } from "@effect/vitest"
import { Decoder } from "../src/Decoder.ts"
import { ErrorReply, type Reply, replyToString } from "../src/Reply.ts"
import { decodeUtf8 } from "../src/Text.ts"

const BOM = [0xef, 0xbb, 0xbf]
const bytes = (text: string) => new TextEncoder().encode(text)
const decodeAll = (wire: Uint8Array): Array<Reply> => {
  const replies: Array<Reply> = []
  const error = new Decoder((reply) => replies.push(reply)).feed(wire)
  assert.isUndefined(error)
  return replies
}

describe("Text", () => {
  it("decodeUtf8 keeps a leading U+FEFF and every other code point", () => {
    assert.strictEqual(decodeUtf8(new Uint8Array([...BOM, 0x61])), "\uFEFFa")
    assert.strictEqual(decodeUtf8(bytes("héllo ☃ 𝄞")), "héllo ☃ 𝄞")
    // An invalid sequence becomes U+FFFD rather than throwing.
    assert.strictEqual(decodeUtf8(new Uint8Array([0x61, 0xff])), "a\uFFFD")
  })

  it("the decoder and replyToString read a leading U+FEFF as part of the value", () => {
    const wire = new Uint8Array([
      ...bytes("+"),
      ...BOM,
      ...bytes("simple é\r\n-"),
      ...BOM,
      ...bytes("ERR é\r\n$4\r\n"),
      ...BOM,
      ...bytes("b\r\n")
    ])
    const [simple, error, bulk] = decodeAll(wire)
    assert.strictEqual(simple, "\uFEFFsimple é")
    assert.instanceOf(error, ErrorReply)
    assert.strictEqual((error as ErrorReply).message, "\uFEFFERR é")
    assert.strictEqual(replyToString(bulk!), "\uFEFFb")
  })
})
