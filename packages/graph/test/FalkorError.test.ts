import { ErrorReply } from "@effect-falkordb/resp/Reply"
import { RedisReplyError, RedisTimeout } from "@effect-falkordb/redis/RedisError"
import { assert, describe, it } from "@effect/vitest"
import { classify, fromRedis, type Reason } from "../src/FalkorError.ts"
import { decodeReply, loadScenarios, versions } from "./fixtures.ts"

// Exact server texts: the C recordings, and the Rust server's forms from the protocol reference.
const expected: ReadonlyArray<readonly [string, Reason]> = [
  [
    "errMsg: Invalid input 'R': expected a label, '{', a parameter or ')' line: 1, column: 10, offset: 9 errCtx: MATCH (n RETURN n errCtxOffset: 9",
    "Syntax"
  ],
  ["Invalid input 'x': expected a clause, errCtx: x MATCH (n) RETURN, pos 0", "Syntax"],
  ["graph.RO_QUERY is to be executed only on read-only queries", "ReadOnlyQuery"],
  ["Query timed out", "Timeout"],
  ["UDF Exception: Query timed out", "Timeout"],
  ["ERR Invalid graph operation on empty key", "EmptyKey"],
  ["WRONGTYPE Operation against a key holding the wrong kind of value", "WrongType"],
  ["Existing key has wrong Redis type", "WrongType"],
  ["Unknown function 'nosuch'", "UnknownFunction"],
  ["Unknown function 'f', errCtx: RETURN f(), pos 7", "UnknownFunction"],
  ["Procedure `db.nosuch` is not registered", "UnknownProcedure"],
  ["ERR unknown command 'GRAPH.QUERY', with args beginning with: 'g' 'RETURN 1' ", "ModuleMissing"],
  ["ERR unknown command 'GRAPH.MEMORY', with args beginning with: 'USAGE' 'g' ", "Unsupported"],
  ["Failed to parse query parameter 's' value", "InvalidParameter"],
  ["Failed to parse the value of parameter 'x'", "InvalidParameter"],
  ["Missing parameters", "InvalidParameter"],
  ["Parameter x not found", "InvalidParameter"],
  ["Failed to parse query timeout value", "InvalidArgument"],
  ["The query TIMEOUT parameter value cannot exceed the TIMEOUT_MAX configuration parameter value", "InvalidArgument"],
  ["ERR wrong number of arguments for 'graph.QUERY' command", "InvalidArgument"],
  ["Max pending queries exceeded", "Backpressure"],
  ["Write queue is full: cannot accept additional write queries at this time. Please retry later.", "Backpressure"],
  ["ERR another write is in progress, retry the query", "Backpressure"],
  ["unique constraint violation on node of type P", "ConstraintViolation"],
  ["Division by zero", "Query"],
  ["Type mismatch: expected Integer, Float, or Null but was String", "Query"]
]

describe("FalkorError", () => {
  it("classifies the exact server texts", () => {
    for (const [text, reason] of expected) assert.strictEqual(classify(text), reason, text)
  })

  it("every recorded error classifies, and its hint is non-empty", () => {
    let count = 0
    for (const version of versions) {
      for (const s of loadScenarios(version)) {
        for (const e of s.exchanges) {
          const r = decodeReply(e.reply_base64)
          if (!(r instanceof ErrorReply) || !e.request[0]!.startsWith("GRAPH.")) continue
          const error = fromRedis(
            new RedisReplyError({ code: r.code, message: r.message, command: e.request[0]! }),
            s.graph,
            e.request[0]!
          )
          assert.strictEqual(error.serverMessage, r.message)
          assert.isAbove(error.hint.length, 10)
          count++
        }
      }
    }
    assert.isAbove(count, 100)
  })

  it("the recorded errors scenario maps to the expected reasons", () => {
    const s = loadScenarios("falkordb-4.4.0").find((x) => x.scenario === "errors")!
    const reasons = new Set<Reason>()
    for (const e of s.exchanges) {
      const r = decodeReply(e.reply_base64)
      if (r instanceof ErrorReply) reasons.add(classify(r.message))
    }
    for (const reason of [
      "Syntax",
      "ReadOnlyQuery",
      "Timeout",
      "EmptyKey",
      "WrongType",
      "UnknownFunction",
      "UnknownProcedure",
      "InvalidArgument",
      "Query"
    ] as const) {
      assert.isTrue(reasons.has(reason), reason)
    }
  })

  it("wraps engine errors as Connection with the engine's hint and retryability", () => {
    const e = fromRedis(new RedisTimeout({ written: false, timeout: 10, message: "timed out" }), "g", "GRAPH.RO_QUERY")
    assert.strictEqual(e.reason, "Connection")
    assert.isTrue(e.isRetryable)
    assert.include(e.hint, "never sent")
    assert.isFalse(
      fromRedis(new RedisTimeout({ written: true, timeout: 10, message: "t" }), "g", "GRAPH.QUERY").isRetryable
    )
  })
})
