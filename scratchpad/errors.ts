/**
 * Catching graph errors by reason: the examples of the graph README's "Errors" section,
 * here so that CI type-checks them (`pnpm check` covers every scratchpad file).
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as Effect from "effect/Effect"

// README: catchReason
/** The titles in the graph, or none when the graph does not exist yet. */
export const titles = Effect.gen(function* () {
  const db = yield* FalkorDB.FalkorDB
  const result = yield* db.graph("movies").roQuery("MATCH (m:Movie) RETURN m.title AS title")
  return result.rows.map((row) => String(row.get("title")))
}).pipe(Effect.catchReason("FalkorError", "UnknownGraph", () => Effect.succeed<ReadonlyArray<string>>([])))

// README: catchReasons
/** A count that gives up politely: who timed out, and whether the query may still be running. */
export const countAll = Effect.gen(function* () {
  const db = yield* FalkorDB.FalkorDB
  const result = yield* db.graph("movies").roQuery("MATCH (n) RETURN count(n) AS n", undefined, { timeout: 500 })
  return `${result.rows[0]?.get("n")} nodes`
}).pipe(
  Effect.catchReasons("FalkorError", {
    Timeout: (reason) =>
      Effect.succeed(
        reason.origin === "server"
          ? `the server stopped the count after ${reason.timeout} ms`
          : `no answer within ${reason.timeout} ms${reason.stillRunning ? "; the count may still be running" : ""}`
      ),
    Backpressure: (reason) => Effect.succeed(`the server is busy: ${reason.serverMessage}`)
  })
)
