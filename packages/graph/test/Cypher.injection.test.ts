// Injection attempts stay inert: the generated prefix is read back with a parser written
// here from the openCypher grammar (StringLiteral, SymbolicName, list and map literals);
// every value must come back equal and the query after the prefix must be untouched.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Cypher from "../src/Cypher.ts"

type Value = null | boolean | number | bigint | string | Array<Value> | { [k: string]: Value }

class Reader {
  i = 0
  readonly s: string
  constructor(s: string) {
    this.s = s
  }
  peek() {
    return this.s[this.i]
  }
  expect(t: string) {
    if (!this.s.startsWith(t, this.i))
      throw new Error(`expected ${JSON.stringify(t)} at ${this.i}: ${this.s.slice(this.i, this.i + 20)}`)
    this.i += t.length
  }
  spaces() {
    while (this.peek() === " ") this.i++
  }
  name(): string {
    if (this.peek() === "`") {
      const end = this.s.indexOf("`", this.i + 1)
      if (end === -1) throw new Error("unterminated backtick name")
      const n = this.s.slice(this.i + 1, end)
      this.i = end + 1
      return n
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))
    if (m === null) throw new Error(`expected a name at ${this.i}`)
    this.i += m[0].length
    return m[0]
  }
  string(): string {
    const quote = this.peek()!
    this.i++
    let out = ""
    for (;;) {
      const c = this.s[this.i++]
      if (c === undefined) throw new Error("unterminated string")
      if (c === quote) return out
      if (c === "\\") {
        const e = this.s[this.i++]!
        const simple: Record<string, string> = {
          "\\": "\\",
          "'": "'",
          '"': '"',
          b: "\b",
          f: "\f",
          n: "\n",
          r: "\r",
          t: "\t"
        }
        if (e in simple) out += simple[e]
        else if (e === "u") {
          out += String.fromCharCode(Number.parseInt(this.s.slice(this.i, this.i + 4), 16))
          this.i += 4
        } else throw new Error(`escape \\${e} is not in the grammar`)
      } else out += c
    }
  }
  value(): Value {
    const c = this.peek()
    if (c === "'" || c === '"') return this.string()
    if (c === "[") {
      this.i++
      const out: Array<Value> = []
      this.spaces()
      if (this.peek() === "]") {
        this.i++
        return out
      }
      for (;;) {
        out.push(this.value())
        this.spaces()
        if (this.peek() === "]") {
          this.i++
          return out
        }
        this.expect(",")
        this.spaces()
      }
    }
    if (c === "{") {
      this.i++
      const out: { [k: string]: Value } = {}
      this.spaces()
      if (this.peek() === "}") {
        this.i++
        return out
      }
      for (;;) {
        const k = this.name()
        this.expect(":")
        this.spaces()
        Object.defineProperty(out, k, { value: this.value(), enumerable: true, writable: true, configurable: true })
        this.spaces()
        if (this.peek() === "}") {
          this.i++
          return out
        }
        this.expect(",")
        this.spaces()
      }
    }
    for (const [word, v] of [
      ["null", null],
      ["true", true],
      ["false", false]
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length
        return v
      }
    }
    const m = /^-?(?:\d+\.\d+(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)/.exec(this.s.slice(this.i))
    if (m === null) throw new Error(`no literal at ${this.i}: ${this.s.slice(this.i, this.i + 20)}`)
    this.i += m[0].length
    return /[.e]/.test(m[0]) ? Number(m[0]) : BigInt(m[0])
  }
}

const readPrefix = (text: string) => {
  const r = new Reader(text)
  r.expect("CYPHER ")
  const params: Record<string, Value> = {}
  while (r.peek() === "`") {
    const n = r.name()
    r.expect("=")
    Object.defineProperty(params, n, { value: r.value(), enumerable: true, writable: true, configurable: true })
    r.expect(" ")
  }
  return { params, rest: text.slice(r.i) }
}

// The reader gives integers as bigint; compare with the encoder's input.
const normalize = (v: unknown): unknown => {
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v)
  if (typeof v === "bigint") return v
  if (Array.isArray(v)) return v.map(normalize)
  if (v !== null && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x)]))
  return v
}

const attack = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.constantFrom(
    "' RETURN 1 AS pwned //",
    "\\' RETURN 1 //",
    "\\\\' MATCH (n) DETACH DELETE n //",
    '"}) RETURN 1 //',
    "`x`=1 RETURN 2",
    "\n RETURN 1",
    "'; CALL db.labels() //"
  ),
  fc
    .array(fc.constantFrom("'", "\\", '"', "`", "{", "}", "[", "]", ",", " ", "\n", "$", "x", "="))
    .map((a) => a.join(""))
)

const safeString = attack.filter(
  (s) => !s.includes("\u0000") && !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""))
)

describe("Cypher injection", () => {
  it.effect("hostile strings, keys and names stay inside their literals", () =>
    Effect.sync(() => {
      fc.assert(
        fc.property(safeString, safeString, fc.string({ minLength: 1 }), (value, key, name) => {
          fc.pre(key.length > 0 && !key.includes("`") && !key.includes("\u0000"))
          fc.pre(!name.includes("`") && !name.includes("\u0000"))
          const params = { [name]: value, other: { [key]: [value, 1, 2.5] } }
          const text = Effect.runSync(Cypher.withParameters("RETURN $x", params))
          const { params: read, rest } = readPrefix(text)
          assert.strictEqual(rest, "RETURN $x")
          assert.deepStrictEqual(normalize(read), normalize(params))
        }),
        { numRuns: 400 }
      )
    })
  )

  it.effect("the cypher template binds every interpolation as a parameter, never as text", () =>
    Effect.gen(function* () {
      const title = "x'}) MATCH (n) DETACH DELETE n //"
      const q = Cypher.cypher`MATCH (m:Movie {title: ${title}}) WHERE m.year > ${1999} RETURN m`
      assert.strictEqual(q.text, "MATCH (m:Movie {title: $p0}) WHERE m.year > $p1 RETURN m")
      assert.deepStrictEqual(q.parameters, { p0: title, p1: 1999 })
      const text = yield* Cypher.withParameters(q.text, q.parameters)
      const { params, rest } = readPrefix(text)
      assert.strictEqual(rest, q.text)
      assert.strictEqual(params.p0, title)
    })
  )

  it.effect("refuses subnormal doubles, which FalkorDB 4.4 rejects as Float overflow", () =>
    Effect.gen(function* () {
      for (const v of [1e-308, 5e-324, -1e-320]) {
        const e = yield* Effect.flip(Cypher.encodeLiteral(v))
        assert.strictEqual(e.reason, "Subnormal")
      }
      assert.strictEqual(yield* Cypher.encodeLiteral(2.2250738585072014e-308), "2.2250738585072014e-308")
      const nested = yield* Effect.flip(Cypher.withParameters("RETURN $l", { l: [1, { x: 1e-310 }] }))
      assert.strictEqual(nested.path, "l[1].x")
    })
  )
})
