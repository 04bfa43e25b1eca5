/**
 * The construction of a `Graph` handle: the query path (`QueryPath`), row streams, typed rows,
 * plans, the admin calls and the helper groups composed over one connection and the client's
 * schema cache entry of the graph. `FalkorDB.graph(name)` calls it; users never do (the cache
 * is the client's), so it is internal.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { serverAttributes } from "@effect-falkordb/redis/RedisInstrumentation"
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Algorithms from "../Algorithms.ts"
import * as Batch from "../Batch.ts"
import * as Constraints from "../Constraints.ts"
import { isQuery } from "../Cypher.ts"
import type * as Cypher from "../Cypher.ts"
import { FalkorError, InvalidArgument, RowDecode } from "../FalkorError.ts"
import { malformed as decodeError } from "./errors.ts"
import * as Find from "./Find.ts"
import * as Measure from "./Measure.ts"
import * as QueryPath from "./QueryPath.ts"
import * as QueryText from "./QueryText.ts"
import * as RowStream from "./RowStream.ts"
import { firstPathKey } from "./SchemaIssue.ts"
import * as Spans from "./Spans.ts"
import type { QueryCommand } from "./QueryPath.ts"
import { isOk, parseMemoryUsage, parsePlan, parseSlowlog } from "./Replies.ts"
import type { GraphSchema, SchemaCache } from "./SchemaCache.ts"
import * as Indexes from "../Indexes.ts"
import * as Procedures from "../Procedures.ts"
import { Header, type Row } from "../Row.ts"
import * as Search from "../Search.ts"
import type { Graph, GraphOptions, QueryOptions } from "../Graph.ts"

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
      // Run inside the span's thunk, so built per run: the rows are decoded as the reply is read.
      () => context.sender.sendResult(command, query, parameters, options),
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
 * `QueryPath` composed into the handle. `FalkorDB.graph(name)` is how users get one (every
 * handle of one name shares the client's cache entry).
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
  const readOnlyQuery = wholeResult(context, "GRAPH.RO_QUERY", "Graph.roQuery")
  const streamAs = typedRows(stream, name, "GRAPH.QUERY")
  const readOnlyStreamAs = typedRows(roStream, name, "GRAPH.RO_QUERY")
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
    roQuery: readOnlyQuery,
    readOnlyQuery,
    stream,
    roStream,
    readOnlyStream: roStream,
    streamAs,
    readOnlyStreamAs,
    queryAs: streamAs,
    roQueryAs: readOnlyStreamAs,
    ...Find.make(readOnlyQuery),
    explain: (query, parameters) => planCall(context, "GRAPH.EXPLAIN")(query, parameters),
    profile: planCall(context, "GRAPH.PROFILE"),
    ...adminCalls(
      context,
      (graph) => cache.clear(graph),
      (destination) => make(connection, cache, destination, options)
    ),
    clearSchema: () => Effect.sync(() => schema.clear())
  }
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
    const rowDecode = (at: number) => (cause: Schema.SchemaError) =>
      new FalkorError({ reason: new RowDecode({ graph, command, row: at, column: firstPathKey(cause), cause }) })
    // The row counter belongs to one run: running the same stream again counts from 0.
    return Stream.suspend(() => {
      let index = 0
      // A row that failed after others of its chunk were decoded: those are emitted first, then this.
      let failed: Effect.Effect<never, FalkorError, S["DecodingServices"]> | undefined
      // The effectful path: rows from `from` on, one at a time; a failure after decoded rows is
      // kept for the next step, so those rows are emitted first.
      const decodeEach = (
        chunk: ReadonlyArray<Row>,
        from: number,
        at: number,
        decoded: Array<S["Type"]>,
        first: Effect.Effect<S["Type"], Schema.SchemaError, S["DecodingServices"]>
      ): Effect.Effect<Arr.NonEmptyReadonlyArray<S["Type"]>, FalkorError, S["DecodingServices"]> =>
        Effect.suspend(() => {
          let i = from
          let rowAt = at
          const step = (
            current: Effect.Effect<S["Type"], Schema.SchemaError, S["DecodingServices"]>
          ): Effect.Effect<Arr.NonEmptyReadonlyArray<S["Type"]>, FalkorError, S["DecodingServices"]> =>
            Effect.flatMap(Effect.exit(Effect.mapError(current, rowDecode(rowAt))), (exit) => {
              if (Exit.isFailure(exit)) {
                const failure = Effect.failCause(exit.cause)
                if (decoded.length === 0) return failure
                failed = failure
                return Effect.succeed(decoded as unknown as Arr.NonEmptyReadonlyArray<S["Type"]>)
              }
              decoded.push(exit.value)
              if (++i === chunk.length) {
                return Effect.succeed(decoded as unknown as Arr.NonEmptyReadonlyArray<S["Type"]>)
              }
              rowAt = index++
              return step(decode(chunk[i]!.toObject()))
            })
          return step(first)
        })
      return rows(query, parameters, options).pipe(
        // A whole chunk per step: a schema without effects decodes to an `Exit` at once, so the rows
        // of a chunk are decoded in one loop rather than one stream step and fiber turn per row.
        Stream.mapArrayEffect(
          (chunk): Effect.Effect<Arr.NonEmptyReadonlyArray<S["Type"]>, FalkorError, S["DecodingServices"]> => {
            if (failed !== undefined) return failed
            const decoded: Array<S["Type"]> = []
            for (let i = 0; i < chunk.length; i++) {
              const at = index++
              const result = decode(chunk[i]!.toObject())
              if (!Exit.isExit(result)) {
                // Decoding needs effects (asynchrony): this row and the rest of the chunk one by one.
                return decodeEach(chunk, i, at, decoded, result)
              }
              if (Exit.isFailure(result)) {
                const failure = Effect.mapError(result, rowDecode(at)) as Effect.Effect<never, FalkorError>
                if (decoded.length === 0) return failure
                failed = failure
                break
              }
              decoded.push(result.value)
            }
            return Effect.succeed(decoded as unknown as Arr.NonEmptyReadonlyArray<S["Type"]>)
          }
        ),
        Stream.concat(Stream.suspend(() => (failed === undefined ? Stream.empty : Stream.fromEffect(failed))))
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
