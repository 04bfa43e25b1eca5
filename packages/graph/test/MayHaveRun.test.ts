/**
 * `FalkorError.mayHaveRun` for every way a graph call fails, through the real client over a
 * scripted connection: whether a failed `query` may have written is the one thing a caller
 * must know before running it again (WriteFaults.test.ts checks it against a killed server).
 */
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import { ConnectionLost, Offline, RedisError, Timeout } from "@effect-falkordb/redis/RedisError"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import * as FalkorDB from "../src/FalkorDB.ts"
import { resp, scripted } from "./helpers.ts"

const stats = "*2\n$19\nCached execution: 0\n$52\nQuery internal execution time: 0.067516 milliseconds\n"

/** How one failing `query` settles: its reason, `mayHaveRun` and `isRetryable`. */
const settle = (reply: Effect.Effect<Reply, RedisError>) =>
  Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    const error = yield* Effect.flip(db.graph("g").query("CREATE (:W {id: 1})"))
    return { tag: error.reason._tag, mayHaveRun: error.mayHaveRun, isRetryable: error.isRetryable, error }
  }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(scripted(() => reply).layer))

const lost = (written: boolean) =>
  Effect.fail(new RedisError({ reason: new ConnectionLost({ written, message: "x" }) }))

describe("FalkorError.mayHaveRun", () => {
  it.effect("engine failures: may have run exactly when the query was written and not refused", () =>
    Effect.gen(function* () {
      assert.deepInclude(yield* settle(lost(true)), { tag: "Connection", mayHaveRun: true, isRetryable: false })
      assert.deepInclude(yield* settle(lost(false)), { tag: "Connection", mayHaveRun: false, isRetryable: true })
      const offline = Effect.fail(new RedisError({ reason: new Offline({ message: "down" }) }))
      assert.deepInclude(yield* settle(offline), { tag: "Connection", mayHaveRun: false, isRetryable: true })
      const timedOut = (written: boolean) =>
        Effect.fail(new RedisError({ reason: new Timeout({ written, timeout: 300, message: "late" }) }))
      assert.deepInclude(yield* settle(timedOut(true)), { tag: "Timeout", mayHaveRun: true, isRetryable: false })
      assert.deepInclude(yield* settle(timedOut(false)), { tag: "Timeout", mayHaveRun: false, isRetryable: true })
    })
  )

  it.effect("a server refusing every command for a while (LOADING, BUSY, …): not run, retryable, not Runtime", () =>
    Effect.gen(function* () {
      for (const line of [
        "LOADING Redis is loading the dataset in memory",
        "BUSY Redis is busy running a script",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'",
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "CLUSTERDOWN The cluster is down"
      ]) {
        const settled = yield* settle(Effect.succeed(new ErrorReply(line)))
        assert.deepInclude(settled, { tag: "Connection", mayHaveRun: false, isRetryable: true }, line)
        assert.include(settled.error.message, line)
        assert.include(settled.error.hint, "did not run")
      }
    })
  )

  it.effect("the server answered: an error line means not applied; an undecodable result means it ran", () =>
    Effect.gen(function* () {
      const failed = (line: string) => settle(Effect.succeed(new ErrorReply(line)))
      assert.deepInclude(yield* failed("errMsg: Invalid input at end of input: expected MATCH line: 1, column: 1"), {
        tag: "Syntax",
        mayHaveRun: false
      })
      assert.deepInclude(yield* failed("Query timed out"), { tag: "Timeout", mayHaveRun: false })
      assert.deepInclude(yield* failed("unique constraint violation on node of type W"), {
        tag: "ConstraintViolation",
        mayHaveRun: false
      })
      assert.deepInclude(yield* failed("Division by zero"), { tag: "Runtime", mayHaveRun: false })
      // A result the client cannot read: the server ran the query (and applied its writes).
      assert.deepInclude(yield* settle(Effect.succeed(resp(`*3\n*1\n*2\n:1\n$1\nx\n*1\n*1\n*2\n:99\n:1\n${stats}`))), {
        tag: "Decode",
        mayHaveRun: true
      })
    })
  )

  it.effect("roQuery's retry policy retries a LOADING refusal (it ran nothing), query never retries", () => {
    let calls = 0
    const loading = new ErrorReply("LOADING Redis is loading the dataset in memory")
    // The read meets LOADING twice, then a result; the write meets LOADING.
    const conn = scripted((command) => {
      calls++
      return Effect.succeed(calls <= 2 || command[0] === "GRAPH.QUERY" ? loading : resp(`*1\n${stats}`))
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const fiber = yield* Effect.forkChild(db.graph("g").roQuery("RETURN 1"))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(calls, 3)
      const write = yield* Effect.flip(db.graph("g").query("CREATE ()"))
      assert.isFalse(write.mayHaveRun)
      assert.strictEqual(calls, 4)
    }).pipe(
      Effect.provide(FalkorDB.layerFromRedisWith({ retry: { times: 3, baseDelay: "100 millis" } })),
      Effect.provide(conn.layer)
    )
  })
})
