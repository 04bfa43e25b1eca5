// What the FALKORDB_URL suites share: the server's url, a fresh client per test, a fresh graph.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FalkorDB from "../src/FalkorDB.ts"

export const url = process.env.FALKORDB_URL

/** Runs `effect` on a fresh client (4 connections, 30 s command timeout unless overridden). */
export const run = <A, E>(effect: Effect.Effect<A, E, FalkorDB.FalkorDB>, options: FalkorDB.Options = {}) =>
  effect.pipe(
    Effect.provide(Layer.fresh(FalkorDB.layer({ url: url!, connections: 4, commandTimeout: "30 seconds", ...options })))
  )

/** Deletes the graph first, ignoring a missing one. */
export const fresh = (db: FalkorDB.FalkorDB["Service"], name: string) =>
  db
    .graph(name)
    .delete()
    .pipe(
      Effect.catchReason("FalkorError", "UnknownGraph", () => Effect.void),
      Effect.as(db.graph(name))
    )
