// Identifier quoting: any name either becomes exactly one identifier that reads back as the
// same name, or is refused with a typed error (and then no query text is built from it).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Identifier from "../src/Identifier.ts"
import * as Indexes from "../src/Indexes.ts"
import * as Procedures from "../src/Procedures.ts"

const names = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: "binary-ascii", maxLength: 12 }),
  // UTF-16 units, lone surrogates included.
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 }).map((units) => String.fromCharCode(...units)),
  fc.constantFrom("Doc", "Odd Label", "match", "NULL", "a`b", "", "\u0000", "x\u0000", "_1", "1a", "é", "a.b", "a:b")
)

describe("Identifier", () => {
  it("every name round-trips as one identifier or is refused with a typed error", () => {
    fc.assert(
      fc.property(names, (name) => {
        const quoted = Effect.runSync(Effect.result(Identifier.quote(name, "label")))
        if (quoted._tag === "Failure") {
          assert.strictEqual(quoted.failure._tag, "FalkorError")
          assert.strictEqual(quoted.failure.reason._tag, "InvalidIdentifier")
          assert.isDefined(Identifier.problem(name))
          // A builder refuses it too: nothing is spliced.
          assert.throws(() => Indexes.rangeIndexText({ label: name, properties: ["p"] }))
          assert.throws(() => Indexes.rangeIndexText({ label: "L", properties: [name] }))
          assert.throws(() => Procedures.callQuery("db.labels", [], { yield: [name] }))
          return
        }
        assert.isUndefined(Identifier.problem(name))
        assert.strictEqual(Identifier.unquote(quoted.success), name)
        // One token: bare, or backticks around text without a backtick.
        assert.match(quoted.success, /^(?:[A-Za-z_][A-Za-z0-9_]*|`[^`\u0000]+`)$/)
        const v = Identifier.variableFor(name)
        assert.strictEqual(
          Indexes.rangeIndexText({ label: name, properties: [name] }),
          `CREATE INDEX FOR (${v}:${quoted.success}) ON (${v}.${quoted.success})`
        )
      }),
      { numRuns: 2000 }
    )
  })

  it("plain names stay bare; keywords, spaces and non-ASCII are backticked", () => {
    assert.strictEqual(Effect.runSync(Identifier.quote("Doc")), "Doc")
    assert.strictEqual(Effect.runSync(Identifier.quote("odd prop")), "`odd prop`")
    assert.strictEqual(Effect.runSync(Identifier.quote("MATCH")), "`MATCH`")
    assert.strictEqual(Effect.runSync(Identifier.quote("Città")), "`Città`")
    assert.strictEqual(Identifier.variableFor("Odd Label"), "o")
    assert.strictEqual(Identifier.variableFor("_x"), "e")
  })
})
