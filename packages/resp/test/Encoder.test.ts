import { assert, describe, it } from "@effect/vitest"
import { Buffer } from "node:buffer"
import { EncodeError } from "../src/EncodeError.ts"
import { encodeCommand, encodeCommands } from "../src/Encoder.ts"

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1")

describe("Encoder", () => {
  it("encodes text, numbers and bigints with UTF-8 byte lengths", () => {
    assert.strictEqual(
      text(encodeCommand(["SET", "é", 12, 1.5, 9007199254740993n])),
      "*5\r\n$3\r\nSET\r\n$2\r\n\xc3\xa9\r\n$2\r\n12\r\n$3\r\n1.5\r\n$16\r\n9007199254740993\r\n"
    )
  })
  it("copies binary arguments through and batches in one buffer", () => {
    const out = encodeCommands([["SET", new Uint8Array([0, 13, 10, 255])], ["PING"]])
    assert.strictEqual(text(out), "*2\r\n$3\r\nSET\r\n$4\r\n\x00\r\n\xff\r\n*1\r\n$4\r\nPING\r\n")
  })
  it("rejects empty commands, non-finite numbers and foreign values", () => {
    const reason = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return e instanceof EncodeError ? e.reason : "other"
      }
      return "none"
    }
    assert.strictEqual(
      reason(() => encodeCommand([])),
      "EmptyCommand"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", Number.NaN])),
      "NonFiniteNumber"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", Infinity])),
      "NonFiniteNumber"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", {} as never])),
      "InvalidArgument"
    )
  })
})
