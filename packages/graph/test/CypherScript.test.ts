import { assert, describe, it } from "@effect/vitest"
import { ScriptError, splitStatements } from "../src/internal/CypherScript.ts"

describe("CypherScript.splitStatements", () => {
  it("splits at semicolons outside strings, names and comments", () => {
    const script = [
      "// header; not a statement",
      'CREATE (:A {s: \'x;y\', t: "it\\"s; fine"});',
      "/* a; comment */ MATCH (`odd;name`) RETURN 1 ;",
      "  ;  ",
      "RETURN 'last' // trailing; comment",
      ""
    ].join("\n")
    assert.deepStrictEqual(splitStatements(script), [
      '// header; not a statement\nCREATE (:A {s: \'x;y\', t: "it\\"s; fine"})',
      "/* a; comment */ MATCH (`odd;name`) RETURN 1",
      "RETURN 'last' // trailing; comment"
    ])
  })

  it("keeps an escaped quote inside a string and drops comment-only statements", () => {
    assert.deepStrictEqual(splitStatements("RETURN 'a\\';b';\n// only a comment;\n/* and; this */"), [
      "RETURN 'a\\';b'"
    ])
    assert.deepStrictEqual(splitStatements("  \n// nothing\n"), [])
    // "/*/" does not close the comment it opens.
    assert.deepStrictEqual(splitStatements("/*/ x; */ RETURN 1"), ["/*/ x; */ RETURN 1"])
  })

  it("reports an unterminated string, name or comment with its line", () => {
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      ["RETURN 1;\nRETURN 'open", "string", 2],
      ["MATCH (`open) RETURN 1", "backticked name", 1],
      ["RETURN 1;\n\n/* never closed", "comment", 3]
    ]
    for (const [text, what, line] of cases) {
      try {
        splitStatements(text)
        assert.fail(`no error for ${text}`)
      } catch (e) {
        assert.instanceOf(e, ScriptError)
        assert.strictEqual((e as ScriptError).what, what)
        assert.strictEqual((e as ScriptError).line, line)
      }
    }
  })
})
