// Batches end to end over real sockets against the FalkorDB 4.18.11 recording
// `pipelined-batch`: six queries written back to back on one connection, each with its own
// result or error.
import { assert, describe, it } from "@effect/vitest"
import { serverMessageOf } from "./helpers.ts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import * as FalkorDB from "../src/FalkorDB.ts"
import * as Batch from "../src/Batch.ts"
import { type Command, withReplay } from "./support/replay.ts"

const g = "pipelined-batch"
const ro = (text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]
const q = (text: string): Command => ["GRAPH.QUERY", g, text, "--compact"]

const queries: ReadonlyArray<Batch.BatchQuery> = [
  { query: "CREATE (:B {i: 1})" },
  { query: "MATCH (b:B) RETURN count(b) AS n", readOnly: true },
  { query: "RETURN 1/0 AS boom", readOnly: true },
  // Refused by the client (no Cypher literal for NaN): not sent, the others still run.
  { query: "RETURN $x AS x", parameters: { x: Number.NaN }, readOnly: true },
  { query: "CREATE (:B {i: 2})" },
  { query: "CREATE (:B {i: 3})", readOnly: true },
  { query: "MATCH (b:B) RETURN b.i AS i ORDER BY i", readOnly: true }
]

describe("Batch over recorded replies (pipelined-batch)", () => {
  for (const strategy of ["single", "multiplexed"] as const) {
    it.live(`each query its own result or error, in order, on one connection (${strategy})`, () =>
      Effect.gen(function* () {
        // The module function and the graph's method are the same call.
        const run = yield* withReplay(
          g,
          (db) => (strategy === "single" ? Batch.run(db.graph(g), db.connection, queries) : db.graph(g).batch(queries)),
          { strategy }
        )
        assert.deepStrictEqual(run.unrecorded, [])
        assert.deepStrictEqual(run.sent, [
          q("CREATE (:B {i: 1})"),
          ro("MATCH (b:B) RETURN count(b) AS n"),
          ro("RETURN 1/0 AS boom"),
          q("CREATE (:B {i: 2})"),
          ro("CREATE (:B {i: 3})"),
          ro("MATCH (b:B) RETURN b.i AS i ORDER BY i")
        ])
        assert.strictEqual(new Set(run.connections).size, 1)
        const [created, count, boom, nan, created2, refused, final] = run.value
        assert.strictEqual(run.value.length, 7)
        assert.isTrue(Result.isSuccess(created!) && created.success.statistics.nodesCreated === 1)
        assert.isTrue(Result.isSuccess(count!) && count.success.rows[0]!.get("n") === 1)
        assert.isTrue(Result.isFailure(boom!) && serverMessageOf(boom.failure) === "Division by zero")
        assert.isTrue(Result.isFailure(nan!) && nan.failure.reason._tag === "InvalidParameter")
        assert.isTrue(Result.isSuccess(created2!) && created2.success.statistics.nodesCreated === 1)
        assert.isTrue(Result.isFailure(refused!) && refused.failure.reason._tag === "ReadOnlyQuery")
        assert.isTrue(Result.isSuccess(final!))
        if (Result.isSuccess(final!)) {
          assert.deepStrictEqual(
            final.success.rows.map((r) => r.get("i")),
            [1, 2]
          )
        }
      })
    )
  }

  it.live("a connection lost mid-batch fails the whole batch with Connection (the writes may have run)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // The server reads the batch and drops the socket instead of answering.
        const server = yield* RespTestServer.make({
          handler: (request) => (request.name === "GRAPH.QUERY" ? RespTestServer.steps({ drop: true }) : undefined)
        })
        const error = yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          return yield* Effect.flip(Batch.run(db.graph(g), db.connection, queries))
        }).pipe(
          Effect.provide(FalkorDB.layerFromRedis.pipe(Layer.provide(RedisConnection.layerSingle({ url: server.url }))))
        )
        assert.strictEqual(error.reason._tag, "Connection")
        assert.isFalse(error.isRetryable)
      })
    )
  )
})
