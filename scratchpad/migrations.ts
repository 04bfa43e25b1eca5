/**
 * Migrations and the start-up schema: the examples of the graph README's "Migrations and
 * start-up schema" section, here so that CI type-checks them (`pnpm check` covers every
 * scratchpad file).
 */
import { cypher } from "@effect-falkordb/graph/Cypher"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// README: migrations
const migrations = GraphMigrator.fromRecord({
  // Cypher text: one statement.
  "1_people_index": "CREATE INDEX FOR (p:Person) ON (p.name)",
  // Statements run one by one; values as parameters through the cypher template.
  "2_seed": [cypher`MERGE (:Person {name: ${"Ada"}})`, cypher`MERGE (:Person {name: ${"Alan"}})`],
  // A function of the target graph, for anything else.
  "3_backfill": (graph) => graph.query("MATCH (p:Person) WHERE p.visits IS NULL SET p.visits = 0")
})

/** Applies what is new at start-up; concurrent instances wait for the one holding the lock. */
export const Migrated = GraphMigrator.layer({ graph: "social", loader: migrations }).pipe(
  Layer.provideMerge(FalkorDB.layer({ url: "redis://127.0.0.1:6379" }))
)

/** A failed migration, reported by id. */
export const reportFailure = GraphMigrator.run({ graph: "social", loader: migrations }).pipe(
  Effect.catchReason("MigrationError", "Failed", (failed) =>
    Effect.logError(`migration ${failed.id}_${failed.name} failed: ${failed.message}`).pipe(Effect.as([]))
  )
)

// README: ensure
/** The schema the service needs, created if missing, awaited until operational. */
export const ensureSchema = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("social")
  yield* GraphMigrator.ensureIndexes(graph, [
    { type: "RANGE", label: "Person", properties: ["name"] },
    { type: "VECTOR", label: "Person", property: "embedding", dimension: 384, similarityFunction: "cosine" }
  ])
  yield* GraphMigrator.ensureConstraints(graph, [{ kind: "UNIQUE", label: "Person", properties: ["email"] }])
})
