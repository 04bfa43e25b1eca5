/**
 * A `Graph` is a cheap value naming one graph on a client: there is no mutable "current
 * graph". Every call sends one command through the `RedisConnection` service.
 *
 * - `query` (`GRAPH.QUERY`, write-capable, never retried) and `roQuery`
 *   (`GRAPH.RO_QUERY`) always send `--compact` right after the query text, then
 *   `TIMEOUT <ms>` when asked.
 * - `stream` / `roStream` decode the rows lazily, a chunk at a time.
 * - `queryAs` / `roQueryAs` decode each row with an `effect/Schema` by column alias.
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { ReadPreference, RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { serverAttributes } from "@effect-falkordb/redis/RedisInstrumentation"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Algorithms from "./Algorithms.ts"
import * as Batch from "./Batch.ts"
import * as Constraints from "./Constraints.ts"
import { isQuery } from "./Cypher.ts"
import type * as Cypher from "./Cypher.ts"
import { FalkorError, InvalidArgument, RowDecode } from "./FalkorError.ts"
import type * as InternalCompactReply from "./internal/CompactReply.ts"
import { malformed as decodeError } from "./internal/errors.ts"
import * as Measure from "./internal/Measure.ts"
import * as QueryPath from "./internal/QueryPath.ts"
import * as QueryText from "./internal/QueryText.ts"
import * as RowStream from "./internal/RowStream.ts"
import { firstPathKey } from "./internal/SchemaIssue.ts"
import * as Spans from "./internal/Spans.ts"
import type { QueryCommand } from "./internal/QueryPath.ts"
import { isOk, parseMemoryUsage, parsePlan, parseSlowlog } from "./internal/Replies.ts"
import type { GraphSchema, SchemaCache } from "./internal/SchemaCache.ts"
import * as Indexes from "./Indexes.ts"
import * as Procedures from "./Procedures.ts"
import { Header, type Row } from "./Row.ts"
import * as Search from "./Search.ts"

/**
 * Per-query options.
 *
 * @since 0.1.0
 * @category models
 */
export interface QueryOptions {
  /**
   * The server's per-query `TIMEOUT` (sent in milliseconds). The C server applies it to
   * reads, and to writes only when `TIMEOUT_DEFAULT`/`TIMEOUT_MAX` is configured.
   */
  readonly timeout?: Duration.Input | undefined
  /**
   * How long the client waits for the reply. Default: the server `timeout` plus 5 seconds
   * when one is given, else no limit — never the connection's `commandTimeout`, which is meant
   * for plain Redis commands. Giving up never cancels a query the server is already running:
   * it fails with a `Timeout` whose `origin` is `"client"`.
   */
  readonly clientTimeout?: Duration.Input | undefined
  /**
   * Where a read-only query (`roQuery`, `roStream`, `roQueryAs`) goes, overriding the client's
   * `readPreference` (clients with replicas: Sentinel, or `replicas` configured). Writes
   * (`query`) always go to the primary. A replica may lag behind the primary.
   */
  readonly readPreference?: ReadPreference | undefined
}

/**
 * Parameters of a query.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = { readonly [name: string]: Cypher.ParameterValue }

/**
 * Query statistics. Counters absent from the reply are 0; `entries` keeps every statistic
 * in server order, unknown names included.
 *
 * @since 0.1.0
 * @category models
 */
export interface Statistics {
  readonly labelsAdded: number
  readonly labelsRemoved: number
  readonly nodesCreated: number
  readonly nodesDeleted: number
  readonly propertiesSet: number
  readonly propertiesRemoved: number
  readonly relationshipsCreated: number
  readonly relationshipsDeleted: number
  readonly indicesCreated: number
  readonly indicesDeleted: number
  readonly constraintsCreated: number
  readonly constraintsDeleted: number
  /** The plan came from the server's plan cache. */
  readonly cachedExecution: boolean
  /** `Query internal execution time`, in milliseconds. */
  readonly executionTimeMs: number | undefined
  /** `Graph version` (the Rust server's MVCC counter, not the schema version). */
  readonly graphVersion: number | undefined
  /** Every statistic as `[name, value]`, value being the first token after `": "`. */
  readonly entries: ReadonlyArray<readonly [string, string]>
}

/**
 * A fully decoded result.
 *
 * @since 0.1.0
 * @category models
 */
export interface QueryResult {
  readonly header: Header
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Row>
  readonly statistics: Statistics
}

/**
 * One operation of an execution plan.
 *
 * @since 0.1.0
 * @category models
 */
export interface PlanOperation {
  /** The operation name (`Node By Label Scan`). */
  readonly name: string
  /** What follows the first `|`, trimmed (`(a:actor)`), if anything. */
  readonly details: string | undefined
  /** From PROFILE: `Records produced`. */
  readonly recordsProduced: number | undefined
  /** From PROFILE: `Execution time`, milliseconds. */
  readonly executionTimeMs: number | undefined
  readonly children: ReadonlyArray<PlanOperation>
}

/**
 * An execution plan: the lines as sent and the operation tree (the C server roots plans
 * of queries with `RETURN` in `Results`; the Rust port omits that root; both parse).
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly lines: ReadonlyArray<string>
  readonly roots: ReadonlyArray<PlanOperation>
}

/**
 * One `GRAPH.SLOWLOG` entry. Servers up to 4.14 send 4 fields (the query keeps its
 * `CYPHER …` prefix); from 4.16 a fifth field carries the prefix separately (or null).
 *
 * @since 0.1.0
 * @category models
 */
export interface SlowlogEntry {
  /** Unix seconds. */
  readonly timestamp: number
  readonly command: string
  readonly query: string
  readonly latencyMs: number
  readonly parameters: string | undefined
}

/**
 * `GRAPH.MEMORY USAGE` figures by server name (`total_graph_sz_mb`, …); the
 * `amortized_*_by_label_sz_mb` / `_by_type_sz_mb` entries are records by label or type.
 *
 * @since 0.1.0
 * @category models
 */
export type MemoryUsage = { readonly [name: string]: number | { readonly [labelOrType: string]: number } }

/**
 * The graph handle.
 *
 * @example
 * ```ts
 * import { cypher } from "@effect-falkordb/graph/Cypher"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { IntegerSchema } from "@effect-falkordb/graph/Value"
 * import { Effect, Schema, Stream } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   // A write: statistics and the rows it returns.
 *   const created = yield* graph.query(cypher`CREATE (:Person {name: ${"Ada"}, born: ${1815}})`)
 *   console.log(created.statistics.nodesCreated) // 1
 *   // A read, decoded row by row with a Schema, as a Stream.
 *   const people = yield* graph
 *     .roQueryAs(
 *       Schema.Struct({ name: Schema.String, born: IntegerSchema }),
 *       cypher`MATCH (p:Person) WHERE p.born < ${1900} RETURN p.name AS name, p.born AS born`
 *     )
 *     .pipe(Stream.runCollect)
 *   return people
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Graph {
  readonly name: string
  /** `GRAPH.QUERY`: may write; never retried. */
  readonly query: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<QueryResult, FalkorError>
  /** `GRAPH.RO_QUERY`: read-only Cypher only. */
  readonly roQuery: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<QueryResult, FalkorError>
  /** Rows of a `GRAPH.QUERY`, decoded one chunk at a time. */
  readonly stream: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<Row, FalkorError>
  /** Rows of a `GRAPH.RO_QUERY`, decoded one chunk at a time. */
  readonly roStream: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<Row, FalkorError>
  /**
   * Rows of a `GRAPH.QUERY` decoded with `schema` from `row.toObject()`; a row that does
   * not match fails with reason `RowDecode`, naming the row and the column.
   */
  readonly queryAs: <S extends Schema.Decoder<unknown>, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<S["Type"], FalkorError, S["DecodingServices"]>
  /** `roStream` decoded with `schema`. */
  readonly roQueryAs: <S extends Schema.Decoder<unknown>, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<S["Type"], FalkorError, S["DecodingServices"]>
  /** `GRAPH.DELETE`; clears this graph's schema cache. */
  readonly delete: () => Effect.Effect<void, FalkorError>
  /** `GRAPH.COPY this destination`; clears the destination's schema cache. */
  readonly copy: (destination: string) => Effect.Effect<Graph, FalkorError>
  /** `GRAPH.EXPLAIN`: the plan without running the query. */
  readonly explain: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P
  ) => Effect.Effect<Plan, FalkorError>
  /** `GRAPH.PROFILE`: runs the query (writes are committed) and returns the plan with counts and times. */
  readonly profile: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<Plan, FalkorError>
  /** `GRAPH.SLOWLOG`. */
  readonly slowlog: () => Effect.Effect<ReadonlyArray<SlowlogEntry>, FalkorError>
  /** `GRAPH.SLOWLOG <g> RESET`. */
  readonly slowlogReset: () => Effect.Effect<void, FalkorError>
  /**
   * `GRAPH.MEMORY USAGE <g> [SAMPLES n]` (FalkorDB ≥ 4.8; older servers fail with
   * `Unsupported`): the server's figures in whole megabytes, per-label and per-type
   * breakdowns as records.
   */
  readonly memoryUsage: (options?: { readonly samples?: number | undefined }) => Effect.Effect<MemoryUsage, FalkorError>
  /** This graph's schema cache entry, read-only. */
  readonly schema: SchemaView
  /**
   * Forgets the cached schema, for when you know someone else replaced the graph (the client
   * clears it itself on its own `delete` and `copy`; see `schemaVersionCheck`).
   */
  readonly clearSchema: () => Effect.Effect<void>
  /** Range, full-text and vector indexes: create, drop, list, await operational. */
  readonly indexes: Indexes.Indexes
  /** Unique and mandatory constraints: create, drop, list, await operational. */
  readonly constraints: Constraints.Constraints
  /** Procedure calls with arguments as parameters: `call`, `stream`, `callAs`. */
  readonly procedures: Procedures.Procedures
  /** `CALL procedure(args) [YIELD …]`: the same as `procedures.call`. */
  readonly call: Procedures.Procedures["call"]
  /** Typed built-in algorithms (BFS, shortest paths, PageRank, WCC, …) and catalogues. */
  readonly algorithms: Algorithms.Algorithms
  /** Vector and full-text search. */
  readonly search: Search.Search
  /**
   * Several queries written back to back on one connection, each with its own result or
   * error (`Result`); only a connection failure fails the whole batch.
   */
  readonly batch: (
    queries: ReadonlyArray<Batch.BatchQuery>,
    options?: Batch.BatchOptions
  ) => Effect.Effect<ReadonlyArray<Result.Result<QueryResult, FalkorError>>, FalkorError>
}

/**
 * The id spaces of a graph's schema.
 *
 * @since 0.1.0
 * @category models
 */
export type SchemaKind = InternalCompactReply.SchemaKind

/**
 * What the client knows of a graph's schema: a read-only view of its cache.
 *
 * @since 0.1.0
 * @category models
 */
export interface SchemaView {
  readonly graph: string
  /** The known names of `kind`, in id order. */
  readonly get: (kind: SchemaKind) => ReadonlyArray<string>
  /** The server's schema version the cache is known to match (with `schemaVersionCheck`). */
  readonly version: number | bigint | undefined
  /** Refreshes sent, per kind. */
  readonly refreshes: Readonly<Record<SchemaKind, number>>
  /** Times the graph was found replaced by another with other names. */
  readonly replacements: number
}

/**
 * Options of the graph client.
 *
 * @since 0.1.0
 * @category models
 */
export interface GraphOptions {
  /**
   * Send the server's `version <n>` schema check with every query, so a graph deleted
   * and re-created by someone else is detected before its reply is decoded (a mismatch
   * runs nothing; the client re-reads the schema and sends the query again, at most 3
   * times). Costs one extra round trip plus one re-read of the cached kinds after each
   * schema change (shared by every query in flight that hit the mismatch). Default `false`,
   * because on FalkorDB 4.x a query with a non-zero `version` against a missing key
   * replies a mismatch *and creates the key*, so even a read-only query would re-create a
   * graph someone deleted as an empty one. Without it, only the client's own
   * `delete`/`copy`, and full refreshes whose names disagree with the cache, invalidate it;
   * turn it on where other processes delete and re-create graphs.
   */
  readonly schemaVersionCheck?: boolean | undefined
  /**
   * `stream` / `roStream` decode rows off the wire as the reply arrives (default `true`):
   * row 0 is handed out before the reply ends and the whole reply is never held (see
   * `RedisConnection.executeStreamed` for the buffering rules). `false` reads the whole
   * reply first, then decodes it `chunkSize` rows at a time. The schema-version check and
   * a retry policy always read the whole reply (either may send the query again).
   */
  readonly streamRows?: boolean | undefined
  /** Rows decoded per stream chunk. Default 1024. */
  readonly chunkSize?: number | undefined
  /**
   * Retry policy, off by default. When set, only read-only queries (`roQuery`, `roStream`,
   * `roQueryAs`) are retried, only on retryable errors (server backpressure, or a connection
   * error whose command was never written), with capped exponential backoff and jitter.
   * `query` (a possible write) is never retried.
   */
  readonly retry?:
    | {
        /** Retries after the first attempt. Default 3. */
        readonly times?: number | undefined
        /** First delay. Default 50 millis. */
        readonly baseDelay?: Duration.Input | undefined
        /** Largest delay. Default 1 second. */
        readonly maxDelay?: Duration.Input | undefined
      }
    | undefined
  /**
   * Record the graph metrics (`GraphMetrics`: operations, errors by reason, durations, rows,
   * schema refreshes). Default `false`: the handle is built without them. Given to
   * `FalkorDB.layer`, it also turns on the connection's engine metrics.
   */
  readonly metrics?: boolean | undefined
  /**
   * Put the query's fingerprint on its span as `db.query.text`: the query text with every
   * string and number literal replaced by `?` and comments removed; parameters stay as
   * `$name` and their values never appear. Default `false`. (`db.query.summary`, the
   * query's clause keywords, is always there.)
   */
  readonly queryText?: boolean | undefined
}

/** What the pieces of one graph handle share. */
interface Context {
  readonly name: string
  readonly schema: GraphSchema
  readonly sender: QueryPath.Sender
  /** Span attributes of every call on this graph. */
  readonly attributes: Readonly<Record<string, string | number>>
  /** `metrics: true`. */
  readonly metrics: boolean
  /** `queryText: true`. */
  readonly queryText: boolean
}

const queryAttributes = (context: Context, command: QueryCommand) => ({
  ...context.attributes,
  "db.operation.name": command,
  "db.read_only": command === "GRAPH.RO_QUERY"
})

/** The span attributes a query's text gives: its summary, and its fingerprint when asked. */
const textAttributes = (context: Context, query: string | Cypher.Query): Record<string, string> => {
  const text = typeof query === "string" ? query : isQuery(query) ? query.text : undefined
  if (typeof text !== "string") return {}
  const attributes: Record<string, string> = {}
  const summary = QueryText.cachedSummary(text)
  if (summary !== undefined) attributes["db.query.summary"] = summary
  if (context.queryText) attributes["db.query.text"] = QueryText.fingerprint(text)
  return attributes
}

/** `effect` measured as `operation` of `command` when the graph records metrics. */
const measure = <A, E, R>(
  context: Context,
  command: string,
  operation: string,
  effect: Effect.Effect<A, E, R>,
  rows?: (value: A) => number
): Effect.Effect<A, E, R> => (context.metrics ? Measure.measured(command, operation, effect, rows) : effect)

/**
 * `query` / `roQuery`: the whole result, every row decoded, in a span when a tracer is
 * installed (`internal/Spans`).
 */
const wholeResult = (context: Context, command: QueryCommand, spanName: string) => {
  const attributes = queryAttributes(context, command)
  const run = (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) =>
    Spans.traced(
      spanName,
      () => ({ ...attributes, ...textAttributes(context, query) }),
      () =>
        Effect.flatMap(context.sender.send(command, query, parameters, options), (envelope) =>
          QueryPath.decodeResult(context.schema, envelope, command)
        ),
      (result, span) => {
        span.attribute("db.response.returned_rows", result.rows.length)
        span.attribute("falkordb.execution_time_ms", result.statistics.executionTimeMs ?? -1)
      }
    )
  if (!context.metrics) return run
  const operation = command === "GRAPH.QUERY" ? "query" : "roQuery"
  return (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) =>
    Measure.measured(command, operation, run(query, parameters, options), (result) => result.rows.length)
}

/**
 * `stream` / `roStream`: rows decoded off the wire as the reply arrives (`RowStream`), or,
 * when the graph's options need the whole reply first (schema-version check, retry policy),
 * decoded `chunkSize` at a time from the whole reply.
 */
const rowStream =
  (context: Context, command: QueryCommand, spanName: string, chunkSize: number) =>
  (query: string | Cypher.Query, parameters?: object, options?: QueryOptions): Stream.Stream<Row, FalkorError> => {
    const operation = command === "GRAPH.QUERY" ? "stream" : "roStream"
    const attributes = { ...queryAttributes(context, command), ...textAttributes(context, query) }
    const streamed = context.sender.sendStreamed
    if (streamed !== undefined) {
      const rows = RowStream.rows(
        streamed(command, query, parameters, options),
        context.schema,
        command,
        chunkSize,
        (stats) =>
          Effect.annotateCurrentSpan({
            "db.response.returned_rows": stats.rows,
            "falkordb.execution_time_ms": stats.statistics?.executionTimeMs ?? -1
          })
      ).pipe(Stream.withSpan(spanName, { attributes }))
      return context.metrics ? Measure.measuredStream(command, operation, rows) : rows
    }
    return Stream.unwrap(
      measure(
        context,
        command,
        operation,
        context.sender.send(command, query, parameters, options),
        (envelope) => envelope.rows.length
      ).pipe(
        Effect.withSpan(spanName, { attributes }),
        Effect.map((envelope) => {
          const header = new Header(envelope.columns)
          const total = envelope.rows.length
          return Stream.paginate(0, (from: number) => {
            const to = Math.min(from + chunkSize, total)
            return Effect.map(
              QueryPath.decodeRange(context.schema, envelope, header, from, to, command),
              (rows) => [rows, to < total ? Option.some(to) : Option.none()] as const
            )
          })
        })
      )
    )
  }

/** `explain` / `profile`: the plan tree. */
const planCall = (context: Context, command: "GRAPH.EXPLAIN" | "GRAPH.PROFILE") =>
  Effect.fn(command === "GRAPH.EXPLAIN" ? "Graph.explain" : "Graph.profile", {
    attributes: { ...context.attributes, "db.operation.name": command }
  })(function* (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) {
    yield* Effect.annotateCurrentSpan(textAttributes(context, query))
    const { name, sender } = context
    const text = yield* QueryPath.resolve(name, command, query, parameters)
    const timeout = QueryPath.timeoutArgs(options, name, command)
    if (timeout instanceof FalkorError) return yield* timeout
    const reply = yield* measure(
      context,
      command,
      command === "GRAPH.EXPLAIN" ? "explain" : "profile",
      sender.exec([command, name, text, ...timeout.args], false, timeout.client, timeout.server)
    )
    return yield* Effect.try({
      try: () => parsePlan(reply, name, command),
      catch: (e) => QueryPath.placed(e, name, command)
    })
  })

/** The admin calls of a graph: delete, copy, slowlog, memory usage. */
const adminCalls = (
  context: Context,
  clearCache: (graph: string) => void,
  handle: (name: string) => Graph
): Pick<Graph, "delete" | "copy" | "slowlog" | "slowlogReset" | "memoryUsage"> => {
  const { name, sender, schema } = context
  /** Runs a command and reads its reply with `parseReply`, failures placed on this graph. */
  const admin = <A>(command: Command, readOnly: boolean, parseReply: (reply: Reply) => A, span: string) =>
    measure(context, String(command[0]), span.slice("Graph.".length), sender.exec(command, readOnly, undefined)).pipe(
      Effect.flatMap((reply) =>
        Effect.try({ try: () => parseReply(reply), catch: (e) => QueryPath.placed(e, name, String(command[0])) })
      ),
      Effect.withSpan(span, { attributes: { ...context.attributes, "db.operation.name": String(command[0]) } })
    )
  const expectOk = (what: string) => (reply: Reply) => {
    if (!isOk(reply)) throw decodeError(`${what} did not reply OK`, name, what.split(" ")[0]!)
  }
  return {
    // Cleared whatever the outcome: after a failed delete the key may still have changed.
    delete: () =>
      admin(["GRAPH.DELETE", name], false, expectOk("GRAPH.DELETE"), "Graph.delete").pipe(
        Effect.ensuring(Effect.sync(() => schema.clear()))
      ),
    copy: (destination) => {
      const invalidDestination = nameProblem(destination, "destination graph name")
      if (invalidDestination !== undefined) return Effect.fail(invalidDestination)
      return admin(["GRAPH.COPY", name, destination], false, expectOk("GRAPH.COPY"), "Graph.copy").pipe(
        Effect.as(handle(destination)),
        Effect.ensuring(Effect.sync(() => clearCache(destination)))
      )
    },
    slowlog: () => admin(["GRAPH.SLOWLOG", name], true, (reply) => parseSlowlog(reply, name), "Graph.slowlog"),
    slowlogReset: () =>
      admin(["GRAPH.SLOWLOG", name, "RESET"], false, expectOk("GRAPH.SLOWLOG RESET"), "Graph.slowlogReset"),
    memoryUsage: (options) => {
      const samples = options?.samples === undefined ? [] : ["SAMPLES", String(options.samples)]
      const command = ["GRAPH.MEMORY", "USAGE", name, ...samples]
      return admin(command, true, (reply) => parseMemoryUsage(reply, name), "Graph.memoryUsage")
    }
  }
}

/**
 * A `Graph` over a connection and the client's schema cache: the query path of
 * `internal/QueryPath` composed into the handle. Use `FalkorDB.graph(name)`; this is the
 * constructor the client uses.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  connection: RedisConnection["Service"],
  cache: SchemaCache,
  name: string,
  options: GraphOptions = {}
): Graph => {
  const schema = cache.get(name)
  const sender = QueryPath.makeSender(connection, schema, name, options, nameProblem(name, "graph name"))
  const context: Context = {
    name,
    schema,
    sender,
    attributes: {
      "db.system.name": "falkordb",
      "db.namespace": name,
      "db.client.strategy": connection.info.strategy,
      ...serverAttributes(connection.info)
    },
    metrics: options.metrics === true,
    queryText: options.queryText === true
  }
  const chunkSize = options.chunkSize ?? 1024
  const stream = rowStream(context, "GRAPH.QUERY", "Graph.stream", chunkSize)
  const roStream = rowStream(context, "GRAPH.RO_QUERY", "Graph.roStream", chunkSize)
  // The helper groups are made on first use: most graphs never touch them.
  let indexes: Indexes.Indexes | undefined
  let constraints: Constraints.Constraints | undefined
  let procedures: Procedures.Procedures | undefined
  let algorithms: Algorithms.Algorithms | undefined
  let search: Search.Search | undefined
  const graph: Graph = {
    name,
    schema,
    get indexes() {
      indexes ??= Indexes.make(graph)
      return indexes
    },
    get constraints() {
      constraints ??= Constraints.make(graph, connection)
      return constraints
    },
    get procedures() {
      procedures ??= Procedures.make(graph)
      return procedures
    },
    call: (procedure, args, callOptions) => graph.procedures.call(procedure, args, callOptions),
    get algorithms() {
      algorithms ??= Algorithms.make(graph)
      return algorithms
    },
    get search() {
      search ??= Search.make(graph)
      return search
    },
    batch: (queries, batchOptions) =>
      measure(context, "BATCH", "batch", Batch.run(graph, connection, queries, batchOptions, context.attributes)),
    query: wholeResult(context, "GRAPH.QUERY", "Graph.query"),
    roQuery: wholeResult(context, "GRAPH.RO_QUERY", "Graph.roQuery"),
    stream,
    roStream,
    queryAs: typedRows(stream, name, "GRAPH.QUERY"),
    roQueryAs: typedRows(roStream, name, "GRAPH.RO_QUERY"),
    explain: (query, parameters) => planCall(context, "GRAPH.EXPLAIN")(query, parameters),
    profile: planCall(context, "GRAPH.PROFILE"),
    ...adminCalls(
      context,
      (graph) => cache.clear(graph),
      (destination) => make(connection, cache, destination, options)
    ),
    clearSchema: () => Effect.sync(() => schema.clear())
  }
  QueryPath.register(graph, { connection, schema, sender })
  return graph
}

/**
 * Rows of `rows` decoded with a `Schema` by column alias; a row that does not match fails
 * with `RowDecode`, naming the row (counted per run of the stream) and the column.
 */
const typedRows =
  (
    rows: (q: string | Cypher.Query, p?: object, o?: QueryOptions) => Stream.Stream<Row, FalkorError>,
    graph: string,
    command: QueryCommand
  ) =>
  <S extends Schema.Decoder<unknown>>(
    schemaOfRow: S,
    query: string | Cypher.Query,
    parameters?: object,
    options?: QueryOptions
  ): Stream.Stream<S["Type"], FalkorError, S["DecodingServices"]> => {
    const decode = Schema.decodeUnknownEffect(schemaOfRow)
    // The row counter belongs to one run: running the same stream again counts from 0.
    return Stream.suspend(() => {
      let index = 0
      return rows(query, parameters, options).pipe(
        Stream.mapEffect((row) => {
          const at = index++
          return decode(row.toObject()).pipe(
            Effect.mapError(
              (cause) =>
                new FalkorError({
                  reason: new RowDecode({ graph, command, row: at, column: firstPathKey(cause), cause })
                })
            )
          )
        })
      )
    })
  }

/** A graph name is a non-empty string; anything else is the caller's mistake, not a connection problem. */
const nameProblem = (name: unknown, argument: string): FalkorError | undefined => {
  if (typeof name === "string" && name.length > 0) return undefined
  const got = typeof name === "string" ? "an empty string" : name === null ? "null" : typeof name
  return new FalkorError({
    reason: new InvalidArgument({
      argument,
      detail: `a graph name is a non-empty string (got ${got})`,
      serverMessage: undefined
    })
  })
}
