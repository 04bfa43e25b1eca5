/**
 * Typed helpers for FalkorDB's built-in procedures: `algo.BFS`, `algo.SPpaths`,
 * `algo.SSpaths`, `algo.pageRank`, `algo.WCC`, `algo.betweenness`,
 * `algo.labelPropagation`, `db.meta.stats`, `dbms.procedures` and `dbms.functions`. Each
 * is a {@link Procedures} call (arguments as parameters, nodes bound by id) whose rows are
 * decoded with an `effect/Schema`; a row that does not match fails with `RowDecode`.
 *
 * Optional settings left `undefined` are not sent, so the server's defaults apply.
 *
 * @example
 * ```ts
 * import * as Algorithms from "@effect-falkordb/graph/Algorithms"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const algorithms = Algorithms.make(db.graph("roads"))
 *   const ranks = yield* Stream.runCollect(algorithms.pageRank({ label: "City", relationshipType: "ROAD" }))
 *   const reach = yield* algorithms.bfs({ source: 0, maxLevel: 3, relationshipType: "ROAD" })
 *   return { ranks, reach }
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
import { malformed } from "./internal/errors.ts"
import * as Procedures from "./Procedures.ts"
import { EdgeSchema, type FalkorMap, IntegerSchema, Node, NodeSchema, PathSchema } from "./Value.ts"

/**
 * A node argument: a `Node` from an earlier result or a node id.
 *
 * @since 0.1.0
 * @category models
 */
export type NodeInput = Node | number | bigint

/**
 * Traversal direction of the path algorithms.
 *
 * @since 0.1.0
 * @category models
 */
export type Direction = "outgoing" | "incoming" | "both"

/**
 * Settings shared by `shortestPaths` and `singleSourcePaths`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathSettings {
  readonly relationshipTypes?: ReadonlyArray<string> | undefined
  readonly direction?: Direction | undefined
  /** Longest path, in relationships. */
  readonly maxLength?: number | undefined
  /** The relationship property summed into `pathWeight` (default: each relationship weighs 1). */
  readonly weightProperty?: string | undefined
  /** The relationship property summed into `pathCost`. */
  readonly costProperty?: string | undefined
  /** Paths costing more are skipped. */
  readonly maxCost?: number | undefined
  /** How many paths to return. */
  readonly pathCount?: number | undefined
}

/**
 * Which part of the graph a community or centrality algorithm runs on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Subgraph {
  readonly nodeLabels?: ReadonlyArray<string> | undefined
  readonly relationshipTypes?: ReadonlyArray<string> | undefined
}

/**
 * `algo.BFS` output.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BfsResult = Schema.Struct({ nodes: Schema.Array(NodeSchema), edges: Schema.Array(EdgeSchema) })

/**
 * `algo.SPpaths` / `algo.SSpaths` output rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WeightedPath = Schema.Struct({ path: PathSchema, pathWeight: Schema.Number })

/**
 * `algo.pageRank` / `algo.betweenness` output rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NodeScore = Schema.Struct({ node: NodeSchema, score: Schema.Number })

/**
 * `algo.WCC` output rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NodeComponent = Schema.Struct({ node: NodeSchema, componentId: IntegerSchema })

/**
 * `algo.labelPropagation` output rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NodeCommunity = Schema.Struct({ node: NodeSchema, communityId: IntegerSchema })

/**
 * `db.meta.stats` output.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MetaStats = Schema.Struct({
  labels: Schema.Record(Schema.String, IntegerSchema),
  relTypes: Schema.Record(Schema.String, IntegerSchema),
  relCount: IntegerSchema,
  nodeCount: IntegerSchema,
  labelCount: IntegerSchema,
  relTypeCount: IntegerSchema,
  propertyKeyCount: IntegerSchema
})

/**
 * `dbms.procedures` output rows.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProcedureInfo = Schema.Struct({ name: Schema.String, mode: Schema.String })

/**
 * The typed algorithm and catalogue calls of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface Algorithms {
  /** `algo.BFS(source, maxLevel, relationshipType)`: the nodes reached and the edges used. */
  readonly bfs: (options: {
    readonly source: NodeInput
    /** Deepest level to visit (0: no limit). */
    readonly maxLevel: number
    readonly relationshipType?: string | undefined
  }) => Effect.Effect<typeof BfsResult.Type, FalkorError>
  /** `algo.SPpaths`: shortest (by weight) paths between two nodes. */
  readonly shortestPaths: (
    options: { readonly source: NodeInput; readonly target: NodeInput } & PathSettings
  ) => Stream.Stream<typeof WeightedPath.Type, FalkorError>
  /** `algo.SSpaths`: shortest paths from one node to every node it reaches. */
  readonly singleSourcePaths: (
    options: { readonly source: NodeInput } & PathSettings
  ) => Stream.Stream<typeof WeightedPath.Type, FalkorError>
  /** `algo.pageRank(label, relationshipType)`: each node's rank (`null` for all labels/types). */
  readonly pageRank: (options?: {
    readonly label?: string | undefined
    readonly relationshipType?: string | undefined
  }) => Stream.Stream<typeof NodeScore.Type, FalkorError>
  /** `algo.WCC`: weakly connected components. */
  readonly wcc: (options?: Subgraph) => Stream.Stream<typeof NodeComponent.Type, FalkorError>
  /** `algo.betweenness`: betweenness centrality (optionally sampled). */
  readonly betweenness: (
    options?: Subgraph & { readonly samplingSize?: number | undefined; readonly samplingSeed?: number | undefined }
  ) => Stream.Stream<typeof NodeScore.Type, FalkorError>
  /** `algo.labelPropagation`: communities. */
  readonly labelPropagation: (
    options?: Subgraph & { readonly maxIterations?: number | undefined }
  ) => Stream.Stream<typeof NodeCommunity.Type, FalkorError>
  /** `db.meta.stats()`: counts by label and type. */
  readonly metaStats: () => Effect.Effect<typeof MetaStats.Type, FalkorError>
  /** `dbms.procedures()`: the registered procedures. */
  readonly procedures: () => Effect.Effect<ReadonlyArray<typeof ProcedureInfo.Type>, FalkorError>
  /** `dbms.functions()`: the registered functions, every column the server sends (`name` at least). */
  readonly functions: () => Effect.Effect<ReadonlyArray<{ readonly name: string } & FalkorMap>, FalkorError>
}

const node = (input: NodeInput): Procedures.Argument => (input instanceof Node ? input : Procedures.nodeId(input))

/**
 * A config map without the settings left undefined (the server's defaults apply to those);
 * `null` when nothing is set, as the server's own examples call `algo.WCC(NULL)`.
 */
const config = (
  entries: Record<string, Procedures.Argument | undefined>
): Record<string, Procedures.Argument> | null => {
  const out: Record<string, Procedures.Argument> = {}
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) out[key] = value
  return Object.keys(out).length === 0 ? null : out
}

const subgraph = (options: Subgraph, extra: Record<string, Procedures.Argument | undefined> = {}) =>
  config({ nodeLabels: options.nodeLabels, relationshipTypes: options.relationshipTypes, ...extra })

const pathConfig = (options: PathSettings) => ({
  relTypes: options.relationshipTypes,
  relDirection: options.direction,
  maxLen: options.maxLength,
  weightProp: options.weightProperty,
  costProp: options.costProperty,
  maxCost: options.maxCost,
  pathCount: options.pathCount
})

const single = <A, E, R>(stream: Stream.Stream<A, E, R>, what: string, graph: string) =>
  Effect.flatMap(Stream.runCollect(stream), (rows) =>
    rows.length === 1
      ? Effect.succeed(rows[0]!)
      : Effect.fail(malformed(`${what} replied ${rows.length} rows`, graph, "GRAPH.RO_QUERY"))
  )

/**
 * The typed algorithm and catalogue calls of `graph`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (graph: Graph): Algorithms => {
  const procedures = Procedures.make(graph)
  return {
    bfs: (options) =>
      single(
        procedures.callAs(
          BfsResult,
          "algo.BFS",
          [node(options.source), options.maxLevel, options.relationshipType ?? null],
          {
            yield: ["nodes", "edges"]
          }
        ),
        "algo.BFS",
        graph.name
      ),
    shortestPaths: (options) =>
      procedures.callAs(
        WeightedPath,
        "algo.SPpaths",
        [config({ sourceNode: node(options.source), targetNode: node(options.target), ...pathConfig(options) })],
        { yield: ["path", "pathWeight"] }
      ),
    singleSourcePaths: (options) =>
      procedures.callAs(
        WeightedPath,
        "algo.SSpaths",
        [config({ sourceNode: node(options.source), ...pathConfig(options) })],
        {
          yield: ["path", "pathWeight"]
        }
      ),
    pageRank: (options = {}) =>
      procedures.callAs(NodeScore, "algo.pageRank", [options.label ?? null, options.relationshipType ?? null], {
        yield: ["node", "score"]
      }),
    wcc: (options = {}) =>
      procedures.callAs(NodeComponent, "algo.WCC", [subgraph(options)], { yield: ["node", "componentId"] }),
    betweenness: (options = {}) =>
      procedures.callAs(
        NodeScore,
        "algo.betweenness",
        [subgraph(options, { samplingSize: options.samplingSize, samplingSeed: options.samplingSeed })],
        { yield: ["node", "score"] }
      ),
    labelPropagation: (options = {}) =>
      procedures.callAs(
        NodeCommunity,
        "algo.labelPropagation",
        [subgraph(options, { maxIterations: options.maxIterations })],
        { yield: ["node", "communityId"] }
      ),
    metaStats: () => single(procedures.callAs(MetaStats, "db.meta.stats"), "db.meta.stats", graph.name),
    procedures: () =>
      Stream.runCollect(procedures.callAs(ProcedureInfo, "dbms.procedures", [], { yield: ["name", "mode"] })),
    functions: () =>
      Effect.flatMap(procedures.call("dbms.functions"), (result) =>
        Effect.forEach(result.rows, (row) => {
          const value = row.toObject()
          return typeof value.name === "string"
            ? Effect.succeed(value as { readonly name: string } & FalkorMap)
            : Effect.fail(malformed("dbms.functions() replied a row without a name", graph.name, "GRAPH.RO_QUERY"))
        })
      )
  }
}
