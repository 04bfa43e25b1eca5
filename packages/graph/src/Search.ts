/**
 * Vector and full-text search over the indexes of one graph:
 * `db.idx.vector.queryNodes` / `queryRelationships` (k nearest neighbours of a query
 * vector, with their scores) and `db.idx.fulltext.queryNodes` / `queryRelationships`
 * (RediSearch query syntax, with scores). Every argument is a parameter; the query vector
 * travels as a plain list and is rebuilt with `vecf32(…)` in the query.
 *
 * Recorded errors and their reasons: a query vector of the wrong length →
 * `VectorDimension`; `k = 0`, a label or property without a vector index, or an index still
 * building → `ProcedureArguments` (the server sends one line for all three; wait with
 * `Indexes.awaitOperational` after creating an index).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as Search from "@effect-falkordb/graph/Search"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const search = Search.make(db.graph("docs"))
 *   return yield* Stream.runCollect(
 *     search.vectorNodes({ label: "Doc", property: "embedding", k: 5, vector: new Float32Array([0.1, 0.2, 0.3]) })
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { FalkorError } from "./FalkorError.ts"
import type { Graph } from "./Graph.ts"
import { invalidArgument } from "./internal/errors.ts"
import * as Procedures from "./Procedures.ts"
import { EdgeSchema, NodeSchema } from "./Value.ts"

/**
 * A scored node.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScoredNode = Schema.Struct({ node: NodeSchema, score: Schema.Number })

/**
 * A scored relationship.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScoredRelationship = Schema.Struct({ relationship: EdgeSchema, score: Schema.Number })

/**
 * A k-nearest-neighbours query on a vector index.
 *
 * @since 0.1.0
 * @category models
 */
export interface VectorQuery {
  /** The label (nodes) or relationship type (relationships) of the index. */
  readonly label: string
  readonly property: string
  /** How many neighbours. */
  readonly k: number
  /** The query vector (a number list is converted to float32, as the server stores it). */
  readonly vector: Float32Array | ReadonlyArray<number>
}

/**
 * A full-text query.
 *
 * @since 0.1.0
 * @category models
 */
export interface FulltextQuery {
  /** The label (nodes) or relationship type (relationships) of the index. */
  readonly label: string
  /** RediSearch query text (`'fast'`, `'graph*'`, `'%databse%'`). */
  readonly query: string
}

/**
 * The searches of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface Search {
  /** `db.idx.vector.queryNodes`: the `k` nearest nodes and their distances. */
  readonly vectorNodes: (query: VectorQuery) => Stream.Stream<typeof ScoredNode.Type, FalkorError>
  /** `db.idx.vector.queryRelationships`: the `k` nearest relationships and their distances. */
  readonly vectorRelationships: (query: VectorQuery) => Stream.Stream<typeof ScoredRelationship.Type, FalkorError>
  /** `db.idx.fulltext.queryNodes`: matching nodes and their scores. */
  readonly fulltextNodes: (query: FulltextQuery) => Stream.Stream<typeof ScoredNode.Type, FalkorError>
  /** `db.idx.fulltext.queryRelationships`: matching relationships and their scores. */
  readonly fulltextRelationships: (query: FulltextQuery) => Stream.Stream<typeof ScoredRelationship.Type, FalkorError>
}

const vectorArguments = (query: VectorQuery, graph: string): Effect.Effect<Array<Procedures.Argument>, FalkorError> =>
  Number.isSafeInteger(query.k) && query.k >= 0
    ? Effect.succeed([
        query.label,
        query.property,
        query.k,
        query.vector instanceof Float32Array ? query.vector : Float32Array.from(query.vector)
      ])
    : Effect.fail(invalidArgument("k", `k must be a whole number, got ${query.k}`, graph))

/**
 * The searches of `graph`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (graph: Graph): Search => {
  const procedures = Procedures.make(graph)
  const vector =
    <S extends typeof ScoredNode | typeof ScoredRelationship>(procedure: string, schema: S, output: string) =>
    (query: VectorQuery) =>
      Stream.unwrap(
        Effect.map(vectorArguments(query, graph.name), (args) =>
          procedures.callAs(schema, procedure, args, { yield: [output, "score"] })
        )
      )
  const fulltext =
    <S extends typeof ScoredNode | typeof ScoredRelationship>(procedure: string, schema: S, output: string) =>
    (query: FulltextQuery) =>
      procedures.callAs(schema, procedure, [query.label, query.query], { yield: [output, "score"] })
  return {
    vectorNodes: vector("db.idx.vector.queryNodes", ScoredNode, "node"),
    vectorRelationships: vector("db.idx.vector.queryRelationships", ScoredRelationship, "relationship"),
    fulltextNodes: fulltext("db.idx.fulltext.queryNodes", ScoredNode, "node"),
    fulltextRelationships: fulltext("db.idx.fulltext.queryRelationships", ScoredRelationship, "relationship")
  }
}
