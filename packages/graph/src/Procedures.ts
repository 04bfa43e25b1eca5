/**
 * Procedure calls: `CALL name(args) YIELD columns RETURN columns`, every argument sent as a
 * parameter (typed values rebuilt in the query: `vecf32($a0)`, `point($a1)`, nodes bound by
 * id through a `MATCH`), the procedure name checked and the `YIELD` columns quoted as
 * identifiers. Results are a `QueryResult`, a `Stream` of rows or of `Schema`-decoded
 * values.
 *
 * Server errors keep their classification: `Procedure \`x\` is not registered`
 * (`UnknownProcedure`), `requires N arguments, got M` and `does not yield output` (`Query`,
 * the server message kept whole).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as Procedures from "@effect-falkordb/graph/Procedures"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const procedures = Procedures.make(db.graph("roads"))
 *   const result = yield* procedures.call("algo.pageRank", ["City", "ROAD"], { yield: ["node", "score"] })
 *   return result.rows.map((row) => row.toObject())
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Cypher from "./Cypher.ts"
import type { FalkorError } from "./FalkorError.ts"
import type { Graph, QueryResult } from "./Graph.ts"
import { quoteOrThrow } from "./Identifier.ts"
import * as Arguments from "./internal/arguments.ts"
import { invalidArgument, invalidIdentifier } from "./internal/errors.ts"
import type { Row } from "./Row.ts"

/**
 * An argument: plain data (sent as a parameter), a `Node` or {@link nodeId} (bound by id),
 * a `Point`, a `Float32Array` or a temporal value (sent in plain form and rebuilt), or
 * lists and maps of these.
 *
 * @since 0.1.0
 * @category models
 */
export type Argument = Arguments.Argument

/**
 * A node given by its id, as a procedure argument.
 *
 * @since 0.1.0
 * @category models
 */
export type NodeId = Arguments.NodeId

/**
 * A node argument from its id: `algo.BFS(nodeId(0), 10, "ROAD")`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nodeId = (id: number | bigint): NodeId => new Arguments.NodeId(id)

/**
 * Options of a call.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /**
   * The output columns to `YIELD` (and return, in this order), each a name or
   * `[name, alias]` (`YIELD label AS l`). Default: the procedure's own outputs.
   */
  readonly yield?: ReadonlyArray<string | readonly [name: string, alias: string]> | undefined
  /**
   * A `WHERE` over the yielded columns, as Cypher text (`l STARTS WITH 'C'`). Written into
   * the query as given: put values in arguments, never in this text.
   */
  readonly where?: string | undefined
  /**
   * What to return instead of the yielded columns, as Cypher text over them (`node.name AS
   * name, score ORDER BY name`). It is written into the query as given: never put values in
   * it, pass them as arguments.
   */
  readonly returns?: string | undefined
  /** Send through `GRAPH.RO_QUERY`. Default `true`; procedures that write (index creation) need `false`. */
  readonly readOnly?: boolean | undefined
  /** The server's `TIMEOUT`. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * The procedure calls of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface Procedures {
  /** Runs the call and returns every row. */
  readonly call: (
    procedure: string,
    args?: ReadonlyArray<Argument>,
    options?: CallOptions
  ) => Effect.Effect<QueryResult, FalkorError>
  /** The rows of the call, decoded a chunk at a time. */
  readonly stream: (
    procedure: string,
    args?: ReadonlyArray<Argument>,
    options?: CallOptions
  ) => Stream.Stream<Row, FalkorError>
  /** The rows decoded with `schema` by column name. */
  readonly callAs: <S extends Schema.Decoder<unknown>>(
    schema: S,
    procedure: string,
    args?: ReadonlyArray<Argument>,
    options?: CallOptions
  ) => Stream.Stream<S["Type"], FalkorError, S["DecodingServices"]>
}

const procedureName = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/

/**
 * The query of a call: its text and parameters (`a0`, `a1`, … for values, `n0id`, … for
 * node ids). Throws a `FalkorError` for a name that is not a procedure name, a column that
 * cannot be quoted, or node arguments without `yield`.
 *
 * @since 0.1.0
 * @category query text
 */
export const callQuery = (
  procedure: string,
  args: ReadonlyArray<Argument>,
  options: CallOptions = {}
): Cypher.Query => {
  if (!procedureName.test(procedure)) {
    throw invalidIdentifier(procedure, "procedure name", "it is not a dotted name of letters, digits and _")
  }
  const enc = Arguments.encoder("a")
  const argumentText = args.map((arg, i) => Arguments.encode(enc, arg, `argument ${i}`)).join(", ")
  const columns = options.yield ?? []
  const yieldText = columns
    .map((c) =>
      typeof c === "string"
        ? quoteOrThrow(c, "output name")
        : `${quoteOrThrow(c[0], "output name")} AS ${quoteOrThrow(c[1], "alias")}`
    )
    .join(", ")
  const returnText = columns.map((c) => quoteOrThrow(typeof c === "string" ? c : c[1], "alias")).join(", ")
  const match = Arguments.matchNodes(enc)
  if (match !== "" && columns.length === 0) {
    throw invalidArgument("yield", `name the YIELD columns of ${procedure}: a call after MATCH must return them`)
  }
  if ((options.returns !== undefined || options.where !== undefined) && columns.length === 0) {
    throw invalidArgument("yield", `returns and where need the YIELD columns of ${procedure}`)
  }
  let text = `${match}CALL ${procedure}(${argumentText})`
  if (columns.length > 0) {
    text += ` YIELD ${yieldText}${options.where === undefined ? "" : ` WHERE ${options.where}`} RETURN ${options.returns ?? returnText}`
  }
  return { _tag: "CypherQuery", text, parameters: enc.parameters }
}

/**
 * The procedure calls of `graph`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (graph: Graph): Procedures => {
  const build = (procedure: string, args: ReadonlyArray<Argument>, options: CallOptions) =>
    Effect.try({ try: () => callQuery(procedure, args, options), catch: (e) => e as FalkorError })
  const queryOptions = (options: CallOptions) =>
    options.timeout === undefined ? undefined : { timeout: options.timeout }
  return {
    call: (procedure, args = [], options = {}) =>
      build(procedure, args, options).pipe(
        Effect.flatMap((query) =>
          options.readOnly === false
            ? graph.query(query, undefined, queryOptions(options))
            : graph.roQuery(query, undefined, queryOptions(options))
        ),
        Effect.withSpan("Procedures.call", {
          attributes: { "db.namespace": graph.name, "db.operation.name": procedure }
        })
      ),
    stream: (procedure, args = [], options = {}) =>
      Stream.unwrap(
        Effect.map(build(procedure, args, options), (query) =>
          options.readOnly === false
            ? graph.stream(query, undefined, queryOptions(options))
            : graph.roStream(query, undefined, queryOptions(options))
        )
      ),
    callAs: (schema, procedure, args = [], options = {}) =>
      Stream.unwrap(
        Effect.map(build(procedure, args, options), (query) =>
          options.readOnly === false
            ? graph.queryAs(schema, query, undefined, queryOptions(options))
            : graph.roQueryAs(schema, query, undefined, queryOptions(options))
        )
      )
  }
}
