import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Cypher from "../src/Cypher.ts"

// A reader of single-quoted Cypher string literals following the escapes both servers decode.
const readLiteral = (text: string): string => {
  assert.strictEqual(text[0], "'")
  let out = ""
  let i = 1
  for (; i < text.length; i++) {
    const c = text[i]!
    if (c === "'") break
    if (c === "\\") {
      const n = text[++i]!
      const map: Record<string, string> = {
        n: "\n",
        t: "\t",
        r: "\r",
        b: "\b",
        f: "\f",
        "\\": "\\",
        "'": "'",
        '"': '"'
      }
      out += map[n] ?? `\\${n}`
    } else out += c
  }
  assert.strictEqual(i, text.length - 1, "literal must end at its closing quote")
  return out
}

describe("Cypher", () => {
  it.effect("encodes scalars, lists and maps", () =>
    Effect.gen(function* () {
      const q = yield* Cypher.withParameters("RETURN $a", {
        a: 1,
        b: "it's",
        c: [1.5, true, null],
        d: { x: 1n, "my key": 2 }
      })
      assert.strictEqual(q, "CYPHER `a`=1 `b`='it\\'s' `c`=[1.5, true, null] `d`={x: 1, `my key`: 2} RETURN $a")
      assert.strictEqual(yield* Cypher.encodeLiteral(1e21), "1e+21")
      assert.strictEqual(yield* Cypher.encodeLiteral(2 ** 60), "1152921504606847000.0")
    })
  )

  it.effect("refuses NaN, NUL, unsafe names and big integers", () =>
    Effect.gen(function* () {
      const reasons = yield* Effect.forEach([NaN, "a\u0000", 2n ** 63n, "\uD800"], (v) =>
        Cypher.encodeLiteral(v).pipe(
          Effect.flip,
          Effect.map((e) => e.reason)
        )
      )
      assert.deepStrictEqual(reasons, ["NonFinite", "NulCharacter", "OutOfRange", "LoneSurrogate"])
      const e = yield* Effect.flip(Cypher.withParameters("RETURN 1", { "a`b": 1 }))
      assert.strictEqual(e.reason, "UnsafeName")
    })
  )

  it.effect("any string without NUL or lone surrogates survives encoding", () =>
    Effect.sync(() => {
      fc.assert(
        fc.property(fc.string({ unit: "grapheme" }), (s) => {
          fc.pre(!s.includes("\u0000"))
          assert.strictEqual(readLiteral(Effect.runSync(Cypher.encodeLiteral(s))), s)
        }),
        { numRuns: 500 }
      )
    })
  )
})
