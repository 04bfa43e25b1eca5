// The GRAPH.BULK byte format and the loader's type inference, byte for byte (the live tests
// check that the server reads the same bytes back as the same graph).
import { assert, describe, it } from "@effect/vitest"
import { command, header, ValueProblem, Writer } from "../src/internal/BulkEncoder.ts"
import { writeText, writeValue } from "../src/internal/BulkValues.ts"

const text = (cell: string, type: Parameters<typeof writeText>[2] = "infer") => {
  const w = new Writer(4)
  writeText(w, cell, type)
  return Array.from(w.contents())
}
const le64 = (n: bigint) => Array.from(new Uint8Array(new BigInt64Array([n]).buffer))
const f64 = (n: number) => Array.from(new Uint8Array(new Float64Array([n]).buffer))
const cstr = (s: string) => [...new TextEncoder().encode(s), 0]

describe("GRAPH.BULK encoding", () => {
  it("infers like falkordb-bulk-loader: empty, integer, double, boolean, array, string", () => {
    assert.deepStrictEqual(text("  "), [0])
    assert.deepStrictEqual(text(" 42 "), [4, ...le64(42n)])
    assert.deepStrictEqual(text("-9223372036854775808"), [4, ...le64(-(2n ** 63n))])
    // Past int64: a double, as the Python loader's int() then float() gives.
    assert.deepStrictEqual(text("9223372036854775808"), [2, ...f64(2 ** 63)])
    assert.deepStrictEqual(text("1.5e3"), [2, ...f64(1500)])
    assert.deepStrictEqual(text("TRUE"), [1, 1])
    assert.deepStrictEqual(text("false"), [1, 0])
    assert.deepStrictEqual(text('[1, "a", [true]]'), [
      5,
      ...le64(3n),
      4,
      ...le64(1n),
      3,
      ...cstr("a"),
      5,
      ...le64(1n),
      1,
      1
    ])
    assert.deepStrictEqual(text("[not json"), [3, ...cstr("[not json")])
    assert.deepStrictEqual(text("inf"), [3, ...cstr("inf")])
    assert.deepStrictEqual(text("héllo"), [3, ...cstr("héllo")])
  })

  it("declared types parse or refuse", () => {
    assert.deepStrictEqual(text("007", "string"), [3, ...cstr("007")])
    assert.deepStrictEqual(text("3", "double"), [2, ...f64(3)])
    assert.throws(() => text("3.5", "integer"), ValueProblem)
    assert.throws(() => text("yes", "boolean"), ValueProblem)
    assert.throws(() => text("x", "array"), ValueProblem)
    assert.throws(() => text("a\u0000b"), ValueProblem)
  })

  it("JavaScript values by type; objects refused", () => {
    const value = (v: unknown, type: Parameters<typeof writeValue>[2] = "infer") => {
      const w = new Writer(4)
      writeValue(w, v, type)
      return Array.from(w.contents())
    }
    assert.deepStrictEqual(value(7), [4, ...le64(7n)])
    assert.deepStrictEqual(value(0.25), [2, ...f64(0.25)])
    assert.deepStrictEqual(value(2n ** 60n), [4, ...le64(2n ** 60n)])
    assert.deepStrictEqual(value(null), [0])
    assert.deepStrictEqual(value(7, "string"), [3, ...cstr("7")])
    assert.deepStrictEqual(value("8", "integer"), [4, ...le64(8n)])
    assert.throws(() => value({ a: 1 }), ValueProblem)
    assert.throws(() => value(Number.NaN), ValueProblem)
  })

  it("a header is the label, a u32 count and NUL-terminated keys; a command counts its tokens", () => {
    assert.deepStrictEqual(Array.from(header("A:B", ["x", "y"])), [
      ...cstr("A:B"),
      2,
      0,
      0,
      0,
      ...cstr("x"),
      ...cstr("y")
    ])
    const token = new Uint8Array([1])
    assert.deepStrictEqual(command("g", true, 3, 1, [token, token], [token]), [
      "GRAPH.BULK",
      "g",
      "BEGIN",
      "3",
      "1",
      "2",
      "1",
      token,
      token,
      token
    ])
    assert.deepStrictEqual(command("g", false, 0, 0, [], []).slice(0, 3), ["GRAPH.BULK", "g", "0"])
  })
})
