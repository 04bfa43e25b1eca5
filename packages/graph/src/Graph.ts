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
import type { ReadPreference } from "@effect-falkordb/redis/RedisConnection"
import type * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as Algorithms from "./Algorithms.ts"
import type * as Batch from "./Batch.ts"
import type * as Constraints from "./Constraints.ts"
import type * as Cypher from "./Cypher.ts"
import type { FalkorError } from "./FalkorError.ts"
import type * as InternalCompactReply from "./internal/CompactReply.ts"
import type * as Indexes from "./Indexes.ts"
import type * as Procedures from "./Procedures.ts"
import type { Header, Row } from "./Row.ts"
import type * as Search from "./Search.ts"

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
  /** `GRAPH.RO_QUERY`: read-only Cypher only. The same as `readOnlyQuery`. */
  readonly roQuery: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<QueryResult, FalkorError>
  /** `GRAPH.RO_QUERY`: read-only Cypher only (may be retried by the retry policy). */
  readonly readOnlyQuery: Graph["roQuery"]
  /** Rows of a `GRAPH.QUERY`, decoded one chunk at a time. */
  readonly stream: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<Row, FalkorError>
  /** Rows of a `GRAPH.RO_QUERY`, decoded one chunk at a time. The same as `readOnlyStream`. */
  readonly roStream: <P extends Cypher.ParametersOf<P>>(
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<Row, FalkorError>
  /** Rows of a `GRAPH.RO_QUERY`, decoded one chunk at a time. */
  readonly readOnlyStream: Graph["roStream"]
  /**
   * Rows of a `GRAPH.QUERY` decoded with `schema` from `row.toObject()`, as a stream; a row
   * that does not match fails with reason `RowDecode`, naming the row and the column.
   */
  readonly streamAs: <S extends Schema.Decoder<unknown>, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Stream.Stream<S["Type"], FalkorError, S["DecodingServices"]>
  /** `readOnlyStream` decoded with `schema` (as `streamAs`). */
  readonly readOnlyStreamAs: Graph["streamAs"]
  /**
   * The same as `streamAs`.
   *
   * @deprecated Use `streamAs` (the name says it streams); `queryAs` goes in the next release.
   */
  readonly queryAs: Graph["streamAs"]
  /**
   * The same as `readOnlyStreamAs`.
   *
   * @deprecated Use `readOnlyStreamAs`; `roQueryAs` goes in the next release.
   */
  readonly roQueryAs: Graph["streamAs"]
  /**
   * A read-only query (`GRAPH.RO_QUERY`) with every row decoded with `schema` by column alias
   * (an empty result is an empty array); a row that does not match fails with `RowDecode`,
   * naming the row and the column, as `GraphSchema.findAll` does.
   */
  readonly findAll: <S extends Schema.Top, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<Array<S["Type"]>, FalkorError, S["DecodingServices"]>
  /**
   * A read-only query's first row decoded with `schema`, or `NoSuchElementError` when there is
   * no row (later rows are not decoded).
   */
  readonly findOne: <S extends Schema.Top, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<S["Type"], FalkorError | Cause.NoSuchElementError, S["DecodingServices"]>
  /** A read-only query's first row decoded with `schema` as `Option.some`, `Option.none` when there is none. */
  readonly findOneOption: <S extends Schema.Top, P extends Cypher.ParametersOf<P>>(
    schema: S,
    query: string | Cypher.Query,
    parameters?: P,
    options?: QueryOptions
  ) => Effect.Effect<Option.Option<S["Type"]>, FalkorError, S["DecodingServices"]>
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
   * Rows are decoded off the wire as the reply arrives (default `true`). `stream` /
   * `roStream`: row 0 is handed out before the reply ends and the whole reply is never held
   * (see `RedisConnection.executeStreamed` for the buffering rules). `query` / `roQuery`:
   * each row is decoded as it is read (`RedisConnection.executeFolded`), so a large reply's
   * raw tree is never held beside its decoded rows (200,000 nodes: about a third of the
   * memory, and less CPU). `false` reads the whole reply first, then decodes it (`stream`:
   * `chunkSize` rows at a time). The schema-version check always reads the whole reply (it
   * may send the query again); a retry policy does for `stream`.
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
