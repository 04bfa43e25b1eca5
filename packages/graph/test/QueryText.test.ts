/**
 * The query fingerprint (`db.query.text`) and summary (`db.query.summary`): examples, and
 * properties over generated queries — every literal becomes `?` (strings with any content,
 * encoded by the client's own literal encoder, numbers of every form), identifiers,
 * backticked names and parameters stay, comments go, and the result is stable.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Cypher from "../src/Cypher.ts"
import { fingerprint, MAX_CLAUSES, summary } from "../src/internal/QueryText.ts"

describe("fingerprint", () => {
  it("replaces string and number literals, keeps identifiers, backticks and parameters", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["MATCH (p:Person {name: 'Ada'}) RETURN p", "MATCH (p:Person {name: ?}) RETURN p"],
      ['MATCH (p) WHERE p.name = "Ada \\"the\\" first" RETURN p', "MATCH (p) WHERE p.name = ? RETURN p"],
      ["RETURN 'it\\'s', 'a\\\\', 'b'", "RETURN ?, ?, ?"],
      [
        "MATCH (n1:L2 {x_3: 42}) RETURN n1.p4 + 1.5e-3, 0x1F, 0o17, -7",
        "MATCH (n1:L2 {x_3: ?}) RETURN n1.p4 + ?, ?, ?, -?"
      ],
      ["MATCH (a)-[*1..3]->(b) RETURN b LIMIT 10", "MATCH (a)-[*?..?]->(b) RETURN b LIMIT ?"],
      [
        "MATCH (n:`Weird 'name' 42`) SET n.`a``b` = $value RETURN $`odd param`",
        "MATCH (n:`Weird 'name' 42`) SET n.`a``b` = $value RETURN $`odd param`"
      ],
      ["MATCH (n) // owner is 'bob' 123\nRETURN /* secret 'x' */ n", "MATCH (n) RETURN n"],
      ["  RETURN\n\t[1, 2,3]  ", "RETURN [?, ?,?]"],
      ["RETURN true, false, null, $p1", "RETURN true, false, null, $p1"],
      ["RETURN 'unterminated secret", "RETURN ?"],
      ["MATCH (n:`unterminated secret 'x'", "MATCH (n:?"],
      ["RETURN $`unterminated secret", "RETURN ?"],
      ["RETURN 'ünïcödé 😀', n.änder", "RETURN ?, n.änder"]
    ]
    for (const [query, expected] of cases) assert.strictEqual(fingerprint(query), expected, query)
  })

  it("never keeps a string literal, whatever it holds (encoded by the client's encoder)", () =>
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.constantFrom("'", '"'), (content, quote) => {
        const secret = `SECRET${content}`
        const literal = Effect.runSync(Cypher.encodeLiteral(secret))
        const text = quote === "'" ? literal : `"${secret.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
        const result = fingerprint(`MATCH (n {k: ${text}}) WHERE n.v = ${text} RETURN n`)
        assert.strictEqual(result, "MATCH (n {k: ?}) WHERE n.v = ? RETURN n")
      })
    ))

  it("maps generated queries to the expected shape", () => {
    const word = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/).map((text) => ({ text, expected: text }))
    const backticked = fc
      .string({ maxLength: 12 })
      .map((name) => `\`${name.replace(/`/g, "``")}\``)
      .map((text) => ({ text, expected: text }))
    const parameter = fc.stringMatching(/^\$[A-Za-z_][A-Za-z0-9_]{0,6}$/).map((text) => ({ text, expected: text }))
    const number = fc
      .oneof(
        fc.nat().map(String),
        fc.double({ min: 0, max: 1e12, noNaN: true }).map((x) => String(x)),
        fc.nat().map((x) => `0x${x.toString(16)}`),
        fc.nat({ max: 999 }).map((x) => `${x}e-${x % 20}`)
      )
      .map((text) => ({ text, expected: "?" }))
    const string = fc.tuple(fc.string({ maxLength: 20 }), fc.constantFrom("'", '"')).map(([content, quote]) => {
      const escaped = content.replace(/\\/g, "\\\\").replace(quote === "'" ? /'/g : /"/g, `\\${quote}`)
      return { text: `${quote}${escaped}${quote}`, expected: "?" }
    })
    const punctuation = fc
      .constantFrom("(", ")", "[", "]", "{", "}", ",", ":", "=", "<>", "+", "-", "->", "<-", "*", ".")
      .map((text) => ({ text, expected: text }))
    const comment = fc
      .oneof(
        fc.string({ maxLength: 20 }).map((c) => `/*${c.replace(/\*\//g, "")}*/`),
        fc.string({ maxLength: 20 }).map((c) => `//${c.replace(/[\r\n]/g, "")}\n`)
      )
      .map((text) => ({ text, expected: "" }))
    const part = fc.oneof(word, backticked, parameter, number, string, punctuation, comment)
    fc.assert(
      fc.property(fc.array(part, { maxLength: 30 }), (parts) => {
        const query = parts.map((p) => p.text).join(" ")
        const expected = parts
          .map((p) => p.expected)
          .filter((e) => e !== "")
          .join(" ")
        assert.strictEqual(fingerprint(query), expected, query)
      })
    )
  })

  it("is total and stable on any input: never throws, fingerprint(fingerprint(q)) = fingerprint(q), no quote survives outside backticks", () =>
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), (query) => {
        const once = fingerprint(query)
        assert.strictEqual(fingerprint(once), once)
        const outside = once.replace(/`(?:[^`]|``)*`/g, "")
        assert.notMatch(outside, /['"]/)
      })
    ))
})

describe("summary", () => {
  it("lists the clause keywords, bounded", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["MATCH (p:Person {name: 'Ada'}) RETURN p", "MATCH RETURN"],
      ["optional match (a) where a.name starts with 'x' with a return a", "OPTIONAL MATCH WITH RETURN"],
      ["MATCH (a) MATCH (b) DETACH DELETE a, b", "MATCH DETACH DELETE"],
      ["MERGE (n:L {id: 1}) ON CREATE SET n.created = 1 ON MATCH SET n.seen = 2 RETURN n", "MERGE SET RETURN"],
      [
        "CALL db.idx.vector.queryNodes('L', 'p', 2, vecf32([1.0])) YIELD node RETURN node",
        "CALL db.idx.vector.queryNodes RETURN"
      ],
      ["CALL { MATCH (n) RETURN n } RETURN 1", "CALL MATCH RETURN"],
      ["CREATE INDEX FOR (p:Person) ON (p.name)", "CREATE INDEX"],
      ["CREATE VECTOR INDEX FOR (p:P) ON (p.v) OPTIONS {dimension: 2}", "CREATE INDEX"],
      ["DROP INDEX ON :Person(name)", "DROP INDEX"],
      ["MATCH (n) SET n.set = {create: 1, match: 2}, n:Return RETURN n.delete", "MATCH SET RETURN"],
      ["UNWIND $rows AS row CREATE (:N {v: row}) UNION ALL RETURN 1", "UNWIND CREATE UNION RETURN"],
      ["LOAD CSV FROM 'file://x.csv' AS row CREATE (:R)", "LOAD CSV CREATE"],
      ["RETURN 'MATCH (n) DELETE n' // CREATE", "RETURN"],
      ["FOREACH (x IN [1] | CREATE (:N))", "FOREACH CREATE"],
      ["", undefined],
      ["hello world", undefined]
    ]
    for (const [query, expected] of cases) assert.strictEqual(summary(query), expected, query)
    const long = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? "MATCH (n)" : "SET n.x = 1")).join(" ")
    const cut = summary(long)!
    assert.strictEqual(cut.split(" ").filter((w) => w !== "…").length, MAX_CLAUSES)
    assert.isTrue(cut.endsWith("…"))
  })

  it("never carries a literal or a parameter name", () =>
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (content) => {
        const literal = Effect.runSync(Cypher.encodeLiteral(`SECRET${content}`))
        const text = summary(`MATCH (n {k: ${literal}}) WHERE n.v = $param RETURN n`)
        assert.strictEqual(text, "MATCH RETURN")
      })
    ))
})
