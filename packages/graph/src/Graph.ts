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
import { ErrorReply, MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { decodeRow, type Envelope, parseEnvelope, parseNameList, SchemaMiss, type Statistics } from "./CompactReply.ts"
import * as Cypher from "./Cypher.ts"
import {
  decodeError as decodeFailure,
  FalkorError,
  fromRedis,
  InvalidArgument,
  InvalidParameter,
  RowDecode
} from "./FalkorError.ts"
import { text } from "./internal/Text.ts"
import { Header, Row } from "./Row.ts"
import { type Fetch, type GraphSchema, procedureText, type SchemaCache } from "./SchemaCache.ts"

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
}

/**
 * Parameters of a query.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = { readonly [name: string]: Cypher.ParameterValue }

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
  /** This graph's schema cache entry. */
  readonly schema: GraphSchema
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
}

const isOk = (reply: Reply): boolean => text(reply) === "OK"

const decodeError = (detail: string, graph: string, command: string) => decodeFailure(detail, { graph, command })

/**
 * A `Graph` over a connection and a schema registry.
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
  const schema = cache.get(connection.info.target, name)
  const chunkSize = options.chunkSize ?? 1024
  const versionCheck = options.schemaVersionCheck === true
  const baseAttributes = {
    "db.system.name": "falkordb",
    "db.namespace": name,
    "db.client.strategy": connection.info.strategy
  }

  const invalidName = nameProblem(name, "graph name")
  /**
   * Sends one graph command. It waits by the graph client's own rule, never the connection's
   * `commandTimeout` (a long query is not abandoned by a default meant for plain Redis
   * commands): `clientTimeout` when given (a server `TIMEOUT` implies one), else no limit.
   */
  const exec = (
    command: Command,
    readOnly: boolean,
    clientTimeout: Duration.Input | undefined,
    serverTimeout?: number
  ) =>
    invalidName !== undefined
      ? Effect.fail(invalidName)
      : connection
          .execute(command, { readOnly, timeout: clientTimeout ?? "Infinity" })
          .pipe(
            Effect.mapError((error) => fromRedis(error, { graph: name, command: String(command[0]), serverTimeout }))
          )

  const fetch: Fetch = (kind, skip) => {
    const command = ["GRAPH.RO_QUERY", name, procedureText(kind, skip)]
    return exec(command, true, undefined).pipe(
      Effect.flatMap((reply) =>
        Effect.try({
          try: () => parseNameList(reply, name, "GRAPH.RO_QUERY"),
          catch: (e) => e as FalkorError
        })
      )
    )
  }

  const resolve = (query: string | Cypher.Query, parameters: object | undefined) => {
    const isQuery = Cypher.isQuery(query)
    const textOf = isQuery ? query.text : query
    if (isQuery && parameters !== undefined) {
      const clash = Object.keys(parameters).find((key) => Object.hasOwn(query.parameters, key))
      if (clash !== undefined) {
        return Effect.fail(
          new FalkorError({
            reason: new InvalidParameter({
              graph: name,
              path: clash,
              detail: "bound both by the cypher template and explicitly",
              serverMessage: undefined
            })
          })
        )
      }
    }
    const params = isQuery ? { ...query.parameters, ...parameters } : parameters
    return Cypher.withParameters(textOf, params).pipe(
      Effect.mapError(
        (cause) =>
          new FalkorError({
            reason: new InvalidParameter({
              graph: name,
              path: cause.path,
              detail: `${cause.message} (${cause.hint})`,
              serverMessage: undefined,
              cause
            })
          })
      )
    )
  }

  const timeoutArgs = (options: QueryOptions | undefined) => {
    if (options?.timeout === undefined) {
      return { args: [] as Array<string>, client: options?.clientTimeout, server: undefined }
    }
    const ms = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
    if (!Number.isFinite(ms) || ms < 1) {
      return undefined
    }
    const rounded = Math.ceil(ms)
    return {
      args: ["TIMEOUT", String(rounded)],
      client: options.clientTimeout ?? Duration.millis(rounded + 5000),
      server: rounded
    }
  }

  const retryPolicy =
    options.retry === undefined
      ? undefined
      : {
          times: options.retry.times ?? 3,
          // min = the shorter delay of the two, so the exponential delay is capped.
          schedule: Schedule.min([
            Schedule.exponential(options.retry.baseDelay ?? "50 millis"),
            Schedule.spaced(options.retry.maxDelay ?? "1 second")
          ]).pipe(Schedule.jittered),
          while: (error: FalkorError) => error.isRetryable
        }

  const isMismatch = (reply: Reply): reply is readonly [ErrorReply, number | bigint] =>
    Array.isArray(reply) &&
    reply.length === 2 &&
    reply[0] instanceof ErrorReply &&
    (typeof reply[1] === "number" || typeof reply[1] === "bigint")

  /** Sends a query command; read-only ones are retried when a retry policy is set. */
  const send = (
    command: "GRAPH.QUERY" | "GRAPH.RO_QUERY",
    query: string | Cypher.Query,
    parameters: object | undefined,
    options: QueryOptions | undefined
  ): Effect.Effect<Envelope, FalkorError> =>
    retryPolicy === undefined || command !== "GRAPH.RO_QUERY"
      ? sendOnce(command, query, parameters, options)
      : Effect.retry(sendOnce(command, query, parameters, options), retryPolicy)

  /** Sends a query command once; with the version check on, handles mismatches by revalidating. */
  const sendOnce = (
    command: "GRAPH.QUERY" | "GRAPH.RO_QUERY",
    query: string | Cypher.Query,
    parameters: object | undefined,
    options: QueryOptions | undefined
  ): Effect.Effect<Envelope, FalkorError> =>
    Effect.gen(function* () {
      const textWithParams = yield* resolve(query, parameters)
      const timeout = timeoutArgs(options)
      if (timeout === undefined) {
        return yield* new FalkorError({
          reason: new InvalidArgument({
            graph: name,
            command,
            argument: "timeout",
            detail: "the query timeout must be at least 1 millisecond",
            serverMessage: undefined
          })
        })
      }
      const readOnly = command === "GRAPH.RO_QUERY"
      const base: Array<string> = [command, name, textWithParams, "--compact", ...timeout.args]
      if (!versionCheck) {
        const reply = yield* exec(base, readOnly, timeout.client, timeout.server)
        return yield* parse(reply, command)
      }
      for (let attempt = 0; ; attempt++) {
        const version = schema.version ?? 0
        const reply = yield* exec([...base, "version", String(version)], readOnly, timeout.client, timeout.server)
        if (!isMismatch(reply)) return yield* parse(reply, command)
        if (attempt >= 3) return yield* parse(reply, command)
        // Nothing ran: re-read the schema, note the server's version and send again.
        yield* schema.revalidate(reply[1], fetch)
      }
    })

  const parse = (reply: Reply, command: string) =>
    Effect.try({ try: () => parseEnvelope(reply, name, command), catch: (e) => asFalkorError(e, command) })

  /** A decoder's failure, placed: the decoder does not know the graph or the command. */
  const asFalkorError = (e: unknown, command: string): FalkorError => {
    if (!(e instanceof FalkorError)) {
      return decodeFailure(`decoding failed: ${String(e)}`, { graph: name, command, cause: e })
    }
    const reason = e.reason
    if (reason._tag !== "Decode" || reason.graph !== undefined) return e
    return decodeFailure(reason.detail, { graph: name, command, row: reason.row, column: reason.column })
  }

  /** Decodes rows [from, to) synchronously; a schema miss suspends for one refresh and resumes. */
  const decodeRange = (
    envelope: Envelope,
    header: Header,
    from: number,
    to: number,
    command: string
  ): Effect.Effect<Array<Row>, FalkorError> => {
    const out: Array<Row> = []
    const loop = (start: number): Effect.Effect<Array<Row>, FalkorError> =>
      Effect.suspend(() => {
        const missSeq = schema.now
        let i = start
        try {
          for (; i < to; i++) out.push(new Row(header, decodeRow(envelope.rows[i]!, i, header.columns, schema.lookup)))
          return Effect.succeed(out)
        } catch (e) {
          if (e instanceof SchemaMiss) {
            return Effect.flatMap(schema.ensure(e.kind, e.id, missSeq, fetch), () => loop(i))
          }
          return Effect.fail(asFalkorError(e, command))
        }
      })
    return loop(from)
  }

  const runQuery = (command: "GRAPH.QUERY" | "GRAPH.RO_QUERY", spanName: string) =>
    Effect.fn(spanName, {
      attributes: { ...baseAttributes, "db.operation.name": command, "db.read_only": command === "GRAPH.RO_QUERY" }
    })(function* (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) {
      const envelope = yield* send(command, query, parameters, options)
      const header = new Header(envelope.columns)
      const rows = yield* decodeRange(envelope, header, 0, envelope.rows.length, command)
      yield* Effect.annotateCurrentSpan({
        "db.response.returned_rows": rows.length,
        "falkordb.execution_time_ms": envelope.statistics.executionTimeMs ?? -1
      })
      return { header, columns: header.columns, rows, statistics: envelope.statistics } satisfies QueryResult
    })

  const runStream =
    (command: "GRAPH.QUERY" | "GRAPH.RO_QUERY", spanName: string) =>
    (query: string | Cypher.Query, parameters?: object, options?: QueryOptions): Stream.Stream<Row, FalkorError> =>
      Stream.unwrap(
        send(command, query, parameters, options).pipe(
          Effect.withSpan(spanName, {
            attributes: {
              ...baseAttributes,
              "db.operation.name": command,
              "db.read_only": command === "GRAPH.RO_QUERY"
            }
          }),
          Effect.map((envelope) => {
            const header = new Header(envelope.columns)
            const total = envelope.rows.length
            return Stream.paginate(0, (from: number) => {
              const to = Math.min(from + chunkSize, total)
              return Effect.map(
                decodeRange(envelope, header, from, to, command),
                (rows) => [rows, to < total ? Option.some(to) : Option.none()] as const
              )
            })
          })
        )
      )

  const typed =
    (
      rows: (q: string | Cypher.Query, p?: object, o?: QueryOptions) => Stream.Stream<Row, FalkorError>,
      command: "GRAPH.QUERY" | "GRAPH.RO_QUERY"
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
              Effect.mapError((cause) => {
                const path = firstPathKey(cause)
                return new FalkorError({
                  reason: new RowDecode({ graph: name, command, row: at, column: path, cause })
                })
              })
            )
          })
        )
      })
    }

  const stream = runStream("GRAPH.QUERY", "Graph.stream")
  const roStream = runStream("GRAPH.RO_QUERY", "Graph.roStream")

  const plan = (command: "GRAPH.EXPLAIN" | "GRAPH.PROFILE") =>
    Effect.fn(command === "GRAPH.EXPLAIN" ? "Graph.explain" : "Graph.profile", { attributes: baseAttributes })(
      function* (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) {
        const textWithParams = yield* resolve(query, parameters)
        const timeout = timeoutArgs(options)
        const args = timeout === undefined ? [] : timeout.args
        const reply = yield* exec([command, name, textWithParams, ...args], false, timeout?.client)
        return yield* Effect.try({
          try: () => parsePlan(reply, name, command),
          catch: (e) => asFalkorError(e, command)
        })
      }
    )

  const graph: Graph = {
    name,
    schema,
    query: runQuery("GRAPH.QUERY", "Graph.query"),
    roQuery: runQuery("GRAPH.RO_QUERY", "Graph.roQuery"),
    stream,
    roStream,
    queryAs: typed(stream, "GRAPH.QUERY"),
    roQueryAs: typed(roStream, "GRAPH.RO_QUERY"),
    delete: () =>
      exec(["GRAPH.DELETE", name], false, undefined).pipe(
        Effect.flatMap((reply) =>
          isOk(reply) ? Effect.void : Effect.fail(decodeError("GRAPH.DELETE did not reply OK", name, "GRAPH.DELETE"))
        ),
        // Cleared whatever the outcome: after a failed delete the key may still have changed.
        Effect.ensuring(Effect.sync(() => schema.clear())),
        Effect.withSpan("Graph.delete", { attributes: baseAttributes })
      ),
    copy: (destination) => {
      const invalidDestination = nameProblem(destination, "destination graph name")
      if (invalidDestination !== undefined) return Effect.fail(invalidDestination)
      return exec(["GRAPH.COPY", name, destination], false, undefined).pipe(
        Effect.flatMap((reply) =>
          isOk(reply)
            ? Effect.succeed(make(connection, cache, destination, options))
            : Effect.fail(decodeError("GRAPH.COPY did not reply OK", name, "GRAPH.COPY"))
        ),
        Effect.ensuring(Effect.sync(() => cache.clear(connection.info.target, destination))),
        Effect.withSpan("Graph.copy", { attributes: baseAttributes })
      )
    },
    explain: (query, parameters) => plan("GRAPH.EXPLAIN")(query, parameters),
    profile: plan("GRAPH.PROFILE"),
    slowlog: () =>
      exec(["GRAPH.SLOWLOG", name], true, undefined).pipe(
        Effect.flatMap((reply) =>
          Effect.try({ try: () => parseSlowlog(reply, name), catch: (e) => asFalkorError(e, "GRAPH.SLOWLOG") })
        ),
        Effect.withSpan("Graph.slowlog", { attributes: baseAttributes })
      ),
    memoryUsage: (memoryOptions) =>
      exec(
        [
          "GRAPH.MEMORY",
          "USAGE",
          name,
          ...(memoryOptions?.samples === undefined ? [] : ["SAMPLES", String(memoryOptions.samples)])
        ],
        true,
        undefined
      ).pipe(
        Effect.flatMap((reply) =>
          Effect.try({ try: () => parseMemoryUsage(reply, name), catch: (e) => asFalkorError(e, "GRAPH.MEMORY") })
        ),
        Effect.withSpan("Graph.memoryUsage", { attributes: baseAttributes })
      ),
    slowlogReset: () =>
      exec(["GRAPH.SLOWLOG", name, "RESET"], false, undefined).pipe(
        Effect.flatMap((reply) =>
          isOk(reply)
            ? Effect.void
            : Effect.fail(decodeError("GRAPH.SLOWLOG RESET did not reply OK", name, "GRAPH.SLOWLOG"))
        )
      )
  }
  return graph
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

const firstPathKey = (error: Schema.SchemaError): string | undefined => {
  // Walk the issue tree to the first Pointer: its first path segment is the column alias.
  const visit = (issue: unknown): string | undefined => {
    if (typeof issue !== "object" || issue === null) return undefined
    const node = issue as {
      _tag?: string
      path?: ReadonlyArray<PropertyKey>
      issue?: unknown
      issues?: ReadonlyArray<unknown>
    }
    if (node._tag === "Pointer" && node.path !== undefined && node.path.length > 0) return String(node.path[0])
    if (node.issue !== undefined) return visit(node.issue)
    if (node.issues !== undefined) {
      for (const inner of node.issues) {
        const found = visit(inner)
        if (found !== undefined) return found
      }
    }
    return undefined
  }
  return visit(error.issue)
}

/**
 * Parses an EXPLAIN/PROFILE reply: lines indented 4 spaces per level, `Name | details`,
 * PROFILE lines suffixed `| Records produced: N, Execution time: X ms`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parsePlan = (reply: Reply, graph: string, command: string): Plan => {
  if (!Array.isArray(reply)) throw decodeError(`${command} did not reply an array of lines`, graph, command)
  const lines = (reply as ReadonlyArray<Reply>).map((line) => {
    const s = text(line)
    if (s === undefined) throw decodeError(`${command} replied a non-string line`, graph, command)
    return s
  })
  interface Mutable {
    name: string
    details: string | undefined
    recordsProduced: number | undefined
    executionTimeMs: number | undefined
    children: Array<Mutable>
  }
  const roots: Array<Mutable> = []
  const stack: Array<{ depth: number; op: Mutable }> = []
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    const depth = Math.floor(indent / 4)
    const segments = line
      .trim()
      .split("|")
      .map((s) => s.trim())
    let recordsProduced: number | undefined
    let executionTimeMs: number | undefined
    const lastSegment = segments[segments.length - 1]!
    if (segments.length > 1 && lastSegment.includes("Records produced")) {
      segments.pop()
      recordsProduced = Number(/Records produced: (\d+)/.exec(lastSegment)?.[1])
      executionTimeMs = Number(/Execution time: ([0-9.]+) ms/.exec(lastSegment)?.[1])
    }
    const op: Mutable = {
      name: segments[0]!,
      details: segments.length > 1 ? segments.slice(1).join(" | ") : undefined,
      recordsProduced,
      executionTimeMs,
      children: []
    }
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) stack.pop()
    if (stack.length === 0) roots.push(op)
    else stack[stack.length - 1]!.op.children.push(op)
    stack.push({ depth, op })
  }
  return { lines, roots }
}

/**
 * Parses a `GRAPH.SLOWLOG` reply (4- or 5-field entries; RESP2 bulk or RESP3 double
 * timestamps).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseSlowlog = (reply: Reply, graph: string): ReadonlyArray<SlowlogEntry> => {
  if (!Array.isArray(reply)) throw decodeError("GRAPH.SLOWLOG did not reply an array", graph, "GRAPH.SLOWLOG")
  return (reply as ReadonlyArray<Reply>).map((entry, i) => {
    if (!Array.isArray(entry) || (entry.length !== 4 && entry.length !== 5)) {
      throw decodeError(`slowlog entry ${i} does not have 4 or 5 fields`, graph, "GRAPH.SLOWLOG")
    }
    const fields = entry as ReadonlyArray<Reply>
    const num = (r: Reply) => (typeof r === "number" ? r : Number(text(r)))
    const command = text(fields[1]!)
    const query = text(fields[2]!)
    const timestamp = num(fields[0]!)
    const latencyMs = num(fields[3]!)
    const parameters = fields.length === 5 && fields[4] !== null ? text(fields[4]!) : undefined
    if (command === undefined || query === undefined || Number.isNaN(timestamp) || Number.isNaN(latencyMs)) {
      throw decodeError(`slowlog entry ${i} is malformed`, graph, "GRAPH.SLOWLOG")
    }
    return { timestamp, command, query, latencyMs, parameters }
  })
}

/** A RESP3 map or a flat RESP2 `[key, value, …]` array as pairs. */
const flatPairs = (reply: Reply): ReadonlyArray<Reply> | undefined =>
  reply instanceof MapReply ? reply.flat : Array.isArray(reply) ? (reply as ReadonlyArray<Reply>) : undefined

/**
 * Parses a `GRAPH.MEMORY USAGE` reply (flat array in RESP2, map in RESP3 on the C server).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseMemoryUsage = (reply: Reply, graph: string): MemoryUsage => {
  const flat = flatPairs(reply)
  if (flat === undefined || flat.length % 2 !== 0) {
    throw decodeError("GRAPH.MEMORY did not reply name/value pairs", graph, "GRAPH.MEMORY")
  }
  const out: Record<string, number | Record<string, number>> = {}
  for (let i = 0; i < flat.length; i += 2) {
    const key = text(flat[i]!)
    const value = flat[i + 1]!
    if (key === undefined) throw decodeError("GRAPH.MEMORY replied a non-string name", graph, "GRAPH.MEMORY")
    if (typeof value === "number") {
      out[key] = value
      continue
    }
    const inner = flatPairs(value)
    if (inner === undefined || inner.length % 2 !== 0) {
      throw decodeError(`GRAPH.MEMORY ${key} is neither a number nor pairs`, graph, "GRAPH.MEMORY")
    }
    const breakdown: Record<string, number> = {}
    for (let j = 0; j < inner.length; j += 2) {
      const k = text(inner[j]!)
      const v = inner[j + 1]
      if (k === undefined || typeof v !== "number") {
        throw decodeError(`GRAPH.MEMORY ${key} has a malformed entry`, graph, "GRAPH.MEMORY")
      }
      Object.defineProperty(breakdown, k, { value: v, enumerable: true, writable: true, configurable: true })
    }
    out[key] = breakdown
  }
  return out
}
