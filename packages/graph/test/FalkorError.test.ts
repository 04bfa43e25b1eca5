import { ErrorReply } from "@effect-falkordb/resp/Reply"
import { ConnectionLost, fromErrorReply, InvalidArgument, RedisError, Timeout } from "@effect-falkordb/redis/RedisError"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FalkorError from "../src/FalkorError.ts"
import { classify, fromRedis, type ServerReasonTag } from "../src/FalkorError.ts"
import { decodeReply, loadScenarios, versions } from "./fixtures.ts"
import { serverMessageOf } from "./helpers.ts"

// Exact server texts: the C recordings, and the Rust server's forms from the protocol reference.
const expected: ReadonlyArray<readonly [string, ServerReasonTag]> = [
  [
    "errMsg: Invalid input 'R': expected a label, '{', a parameter or ')' line: 1, column: 10, offset: 9 errCtx: MATCH (n RETURN n errCtxOffset: 9",
    "Syntax"
  ],
  ["Invalid input 'x': expected a clause, errCtx: x MATCH (n) RETURN, pos 0", "Syntax"],
  ["graph.RO_QUERY is to be executed only on read-only queries", "ReadOnlyQuery"],
  ["Query timed out", "Timeout"],
  ["UDF Exception: Query timed out", "Timeout"],
  ["ERR Invalid graph operation on empty key", "UnknownGraph"],
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
  ["Unknown configuration field", "InvalidArgument"],
  ["This configuration parameter cannot be set at run-time", "InvalidArgument"],
  ["TIMEOUT_DEFAULT configuration parameter cannot be set to a value higher than TIMEOUT_MAX", "InvalidArgument"],
  ["Failed to set config value TIMEOUT_DEFAULT to abc", "InvalidArgument"],
  ["Max pending queries exceeded", "Backpressure"],
  ["Write queue is full: cannot accept additional write queries at this time. Please retry later.", "Backpressure"],
  ["ERR another write is in progress, retry the query", "Backpressure"],
  ["unique constraint violation on node of type P", "ConstraintViolation"],
  ["Division by zero", "Runtime"],
  ["Type mismatch: expected Integer, Float, or Null but was String", "Runtime"]
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
          const error = fromRedis(fromErrorReply(r, e.request[0]!), {
            graph: s.graph,
            command: e.request[0]!
          })
          assert.strictEqual(serverMessageOf(error), r.message)
          assert.include(error.message, r.message)
          assert.isAbove(error.hint.length, 10)
          count++
        }
      }
    }
    assert.isAbove(count, 100)
  })

  it("the recorded errors scenario maps to the expected reasons", () => {
    const s = loadScenarios("falkordb-4.4.0").find((x) => x.scenario === "errors")!
    const reasons = new Set<ServerReasonTag>()
    for (const e of s.exchanges) {
      const r = decodeReply(e.reply_base64)
      if (r instanceof ErrorReply) reasons.add(classify(r.message))
    }
    for (const reason of [
      "Syntax",
      "ReadOnlyQuery",
      "Timeout",
      "UnknownGraph",
      "WrongType",
      "UnknownFunction",
      "UnknownProcedure",
      "InvalidArgument",
      "Runtime"
    ] as const) {
      assert.isTrue(reasons.has(reason), reason)
    }
  })

  it("a client timeout is a Timeout from the client, saying whether the query may still run", () => {
    const unsent = fromRedis(
      new RedisError({ reason: new Timeout({ written: false, timeout: 10, message: "timed out" }) }),
      {
        graph: "g",
        command: "GRAPH.RO_QUERY"
      }
    )
    assert.strictEqual(unsent.reason._tag, "Timeout")
    assert.deepInclude(unsent.reason, { origin: "client", timeout: 10, stillRunning: false, graph: "g" })
    assert.isTrue(unsent.isRetryable)
    assert.include(unsent.message, "never sent")
    const sent = fromRedis(new RedisError({ reason: new Timeout({ written: true, timeout: 10, message: "t" }) }), {
      command: "GRAPH.QUERY"
    })
    assert.deepInclude(sent.reason, { origin: "client", stillRunning: true })
    assert.isFalse(sent.isRetryable)
    assert.include(sent.message, "may still be running on the server, holding its connection")
    const server = FalkorError.fromServer("Query timed out", {
      graph: "g",
      command: "GRAPH.RO_QUERY",
      serverTimeout: 1
    })
    assert.deepInclude(server.reason, {
      origin: "server",
      timeout: 1,
      stillRunning: false,
      serverMessage: "Query timed out"
    })
    assert.include(server.message, "the server stopped the query")
  })

  it("wraps other engine errors as Connection with the engine's hint and retryability", () => {
    const lost = fromRedis(new RedisError({ reason: new ConnectionLost({ written: false, message: "gone" }) }), {
      graph: "g"
    })
    assert.strictEqual(lost.reason._tag, "Connection")
    assert.isTrue(lost.isRetryable)
    assert.include(lost.hint, "never sent")
    assert.isFalse(
      fromRedis(new RedisError({ reason: new ConnectionLost({ written: true, message: "gone" }) }), {}).isRetryable
    )
  })

  it("written says whether the call reached the server, for every kind of reason", () => {
    const engine = (written: boolean) =>
      fromRedis(new RedisError({ reason: new ConnectionLost({ written, message: "gone" }) }), { graph: "g" })
    const clientTimeout = (written: boolean) =>
      fromRedis(new RedisError({ reason: new Timeout({ written, timeout: 10, message: "t" }) }), { graph: "g" })
    const cases: ReadonlyArray<readonly [FalkorError.FalkorError, boolean]> = [
      [FalkorError.fromServer("errMsg: Invalid input line: 1, column: 1", { graph: "g" }), true],
      [FalkorError.fromServer("Query timed out", { graph: "g" }), true],
      [FalkorError.fromServer("Failed to parse query parameter 's' value", {}), true],
      [engine(false), false],
      [engine(true), true],
      [clientTimeout(false), false],
      [clientTimeout(true), true],
      [fromRedis(new RedisError({ reason: new InvalidArgument({ message: "bad" }) }), {}), false],
      [
        new FalkorError.FalkorError({
          reason: new FalkorError.InvalidIdentifier({ name: "a`b", what: "label", detail: "a backtick" })
        }),
        false
      ],
      [FalkorError.decodeError("unknown type code 99", { graph: "g", row: 0 }), true]
    ]
    for (const [error, written] of cases) {
      assert.strictEqual(error.written, written, `${error.reason._tag}: ${error.message}`)
      assert.strictEqual(error.reason.written, written)
      // Nothing that may have run is retryable.
      if (written) assert.isFalse(error.isRetryable, error.message)
    }
  })

  it("names the parameter of a server's parameter error", () => {
    const named = FalkorError.fromServer("Failed to parse query parameter 's' value", {})
    assert.deepInclude(named.reason, { _tag: "InvalidParameter", path: "s" })
    assert.deepInclude(FalkorError.fromServer("Parameter x not found", {}).reason, { path: "x" })
    assert.deepInclude(FalkorError.fromServer("Missing parameters", {}).reason, { path: undefined })
  })

  it.effect("is caught by reason with Effect.catchReason and Effect.catchReasons", () =>
    Effect.gen(function* () {
      const missing = Effect.fail(
        FalkorError.fromServer("ERR unknown command 'GRAPH.QUERY', with args beginning with: ", {
          command: "GRAPH.QUERY"
        })
      )
      const caught = yield* missing.pipe(
        Effect.catchReason("FalkorError", "ModuleMissing", (reason) => Effect.succeed(reason.serverMessage))
      )
      assert.include(caught, "unknown command")
      // Another reason passes through untouched.
      const other = yield* Effect.flip(
        Effect.fail(FalkorError.fromServer("Division by zero", {})).pipe(
          Effect.catchReason("FalkorError", "ModuleMissing", () => Effect.succeed("no"))
        )
      )
      assert.strictEqual(other.reason._tag, "Runtime")
      const timeout = Effect.fail(FalkorError.fromServer("Query timed out", { serverTimeout: 5 }))
      const handled = yield* timeout.pipe(
        Effect.catchReasons("FalkorError", {
          Timeout: (reason) => Effect.succeed(`timeout by ${reason.origin} after ${reason.timeout} ms`),
          Backpressure: () => Effect.succeed("busy")
        })
      )
      assert.strictEqual(handled, "timeout by server after 5 ms")
    })
  )

  it("message, hint and isRetryable come from the reason; the stack shows the hint", () => {
    const e = FalkorError.fromServer("Max pending queries exceeded", { graph: "g", command: "GRAPH.QUERY" })
    assert.isTrue(FalkorError.isFalkorError(e))
    assert.isTrue(FalkorError.isFalkorErrorReason(e.reason))
    assert.strictEqual(e.message, e.reason.message)
    assert.strictEqual(e.hint, e.reason.hint)
    assert.isTrue(e.isRetryable)
    assert.strictEqual(e.cause, e.reason)
    assert.include(e.message, 'GRAPH.QUERY on graph "g" failed: Max pending queries exceeded')
    assert.include(e.stack ?? "", `hint: ${e.hint}`)
  })
})
