/**
 * The query path of one graph: parameters resolved into the `CYPHER …` prefix (`resolve`),
 * the `TIMEOUT` argument and the client's waiting rule (`timeoutArgs`), one send with the
 * optional schema-version check (`sendOnce`, retried by `send` when a policy allows), and the
 * rows decoded a range at a time, a schema miss answered by one shared refresh
 * (`decodeRange`). `Graph.ts` composes these into the public handle; batches reuse them.
 *
 * The waiting rule: a graph command never inherits the connection's `commandTimeout` (a
 * default meant for plain Redis commands). It waits `clientTimeout` when given, the server
 * `TIMEOUT` + 5 s when only that is given, else without limit.
 *
 * @internal
 */
import {
  executeFolded,
  executeStreamed,
  type ReadPreference,
  type RedisConnection,
  type ReplyPart
} from "@effect-falkordb/redis/RedisConnection"
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Cypher from "../Cypher.ts"
import {
  decodeError,
  FalkorError,
  fromRedis,
  InvalidArgument,
  InvalidParameter,
  UnknownSchemaId
} from "../FalkorError.ts"
import type { GraphOptions, QueryOptions, QueryResult } from "../Graph.ts"
import { Header, Row } from "../Row.ts"
import { decodeRow, type Envelope, isSchemaMiss, parseEnvelope } from "./CompactReply.ts"
import { type FoldedRows, FoldFailure, ResultFold } from "./ResultFold.ts"
import type { GraphSchema } from "./SchemaCache.ts"

/** The margin the client waits beyond a server `TIMEOUT` before it gives up itself. */
const SERVER_TIMEOUT_MARGIN_MS = 5000

/** A graph command's wait when no client timeout is given: a number, so no duration is parsed per query. */
const NO_CLIENT_LIMIT = Number.POSITIVE_INFINITY

/** The query commands. */
export type QueryCommand = "GRAPH.QUERY" | "GRAPH.RO_QUERY"

/** The `TIMEOUT` arguments and how long the client waits. */
export interface TimeoutArgs {
  readonly args: ReadonlyArray<string>
  /** How long the client waits; `undefined`: no limit. */
  readonly client: Duration.Input | undefined
  /** The server `TIMEOUT` sent, in milliseconds. */
  readonly server: number | undefined
}

/** The `TIMEOUT` of `options` and the client's wait; a `FalkorError` for a timeout below 1 ms. */
export const timeoutArgs = (
  options: QueryOptions | undefined,
  graph: string,
  command: string
): TimeoutArgs | FalkorError => {
  if (options?.timeout === undefined) return { args: [], client: options?.clientTimeout, server: undefined }
  const ms = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
  if (!Number.isFinite(ms) || ms < 1) {
    return new FalkorError({
      reason: new InvalidArgument({
        graph,
        command,
        argument: "timeout",
        detail: "the query timeout must be at least 1 millisecond",
        serverMessage: undefined
      })
    })
  }
  const server = Math.ceil(ms)
  return {
    args: ["TIMEOUT", String(server)],
    client: options.clientTimeout ?? Duration.millis(server + SERVER_TIMEOUT_MARGIN_MS),
    server
  }
}

/** The query text with its parameters in the `CYPHER …` prefix. */
export const resolve = (
  graph: string,
  command: string | undefined,
  query: string | Cypher.Query,
  parameters: object | undefined
): Effect.Effect<string, FalkorError> => {
  const isQuery = Cypher.isQuery(query)
  const textOf = isQuery ? query.text : query
  const invalid = (path: string | undefined, detail: string, cause?: unknown) =>
    new FalkorError({ reason: new InvalidParameter({ graph, command, path, detail, serverMessage: undefined, cause }) })
  if (isQuery && parameters !== undefined) {
    const clash = Object.keys(parameters).find((key) => Object.hasOwn(query.parameters, key))
    if (clash !== undefined) return Effect.fail(invalid(clash, "bound both by the cypher template and explicitly"))
  }
  const params = isQuery ? { ...query.parameters, ...parameters } : parameters
  return Cypher.withParameters(textOf, params).pipe(
    Effect.mapError((cause) => invalid(cause.path, `${cause.message} (${cause.hint})`, cause))
  )
}

/** What a decoder threw, as a `FalkorError` placed on the graph and command (the decoder knows neither). */
export const placed = (e: unknown, graph: string | undefined, command: string): FalkorError => {
  if (!(e instanceof FalkorError)) return decodeError(`decoding failed: ${String(e)}`, { graph, command, cause: e })
  const reason = e.reason
  if (reason._tag !== "Decode" || reason.graph !== undefined) return e
  return decodeError(reason.detail, { graph, command, row: reason.row, column: reason.column })
}

/** Parses a query reply's envelope; the error placed on the graph and command. */
const parseOrError = (reply: Reply, graph: string, command: string): Envelope | FalkorError => {
  try {
    return parseEnvelope(reply, graph, command)
  } catch (e) {
    return placed(e, graph, command)
  }
}

/** Parses a query reply's envelope. */
export const parse = (reply: Reply, graph: string, command: string): Effect.Effect<Envelope, FalkorError> => {
  const envelope = parseOrError(reply, graph, command)
  return envelope instanceof FalkorError ? Effect.fail(envelope) : Effect.succeed(envelope)
}

/**
 * Decodes rows [from, to) synchronously; a row that names an unknown id waits for one
 * refresh of that kind (shared with every other decoder that missed) and is decoded again.
 */
export const decodeRange = (
  schema: GraphSchema,
  envelope: Envelope,
  header: Header,
  from: number,
  to: number,
  command: string,
  base = 0
): Effect.Effect<Array<Row>, FalkorError> => {
  const sent = namesAtSend.get(envelope)
  const out: Array<Row> = []
  const loop = (start: number): Effect.Effect<Array<Row>, FalkorError> =>
    Effect.suspend(() => {
      // Replaced since the query was sent (checked again after every refresh): the reply's ids
      // mean the names of then, and the new graph cannot be asked about them.
      const stale = sent !== undefined && sent.generation !== schema.generation
      const names = stale ? sent.lookup : schema.lookup
      const missSeq = schema.now
      try {
        for (let i = start; i < to; i++) {
          const values = decodeRow(envelope.rows[i]!, base + i, header.columns, names)
          if (isSchemaMiss(values)) {
            if (stale) {
              return Effect.fail(
                new FalkorError({
                  reason: new UnknownSchemaId({ graph: schema.graph, kind: values.kind, id: values.id })
                })
              )
            }
            return Effect.flatMap(schema.ensure(values.kind, values.id, missSeq), () => loop(i))
          }
          out.push(new Row(header, values))
        }
        return Effect.succeed(out)
      } catch (e) {
        return Effect.fail(placed(e, schema.graph, command))
      }
    })
  return loop(from)
}

/**
 * Under the version check, the names the cache held when each reply's query was sent. The
 * server ran the query at that schema version, so if the cache was replaced meanwhile (another
 * client deleted and re-created the graph, and a concurrent query re-read it) the reply is
 * decoded with these, never with the new graph's names.
 */
const namesAtSend = new WeakMap<Envelope, ReturnType<GraphSchema["snapshot"]>>()

/**
 * The whole result of a query reply: every row decoded. The rows are first decoded at once
 * (every name known, the common case: no effect per step); a row that names an unknown id
 * continues on `decodeRange`, which waits for the refresh. A reply sent under the version
 * check goes to `decodeRange` whole (its names may be those of when it was sent).
 */
export const decodeResult = (
  schema: GraphSchema,
  envelope: Envelope,
  command: string
): Effect.Effect<QueryResult, FalkorError> => {
  const header = new Header(envelope.columns)
  // Statistics as a plain property: an own getter (to read them lazily) costs more per
  // object than reading them.
  const result = (rows: Array<Row>): QueryResult => ({
    header,
    columns: header.columns,
    rows,
    statistics: envelope.statistics
  })
  const total = envelope.rows.length
  if (namesAtSend.has(envelope)) return Effect.map(decodeRange(schema, envelope, header, 0, total, command), result)
  const rows: Array<Row> = new Array(total)
  try {
    for (let i = 0; i < total; i++) {
      const values = decodeRow(envelope.rows[i]!, i, header.columns, schema.lookup)
      if (isSchemaMiss(values)) {
        rows.length = i
        return Effect.map(decodeRange(schema, envelope, header, i, total, command), (rest) => {
          for (const row of rest) rows.push(row)
          return result(rows)
        })
      }
      rows[i] = new Row(header, values)
    }
    return Effect.succeed(result(rows))
  } catch (e) {
    return Effect.fail(placed(e, schema.graph, command))
  }
}

/**
 * The whole result of a folded reply (`ResultFold`): its rows were decoded as they arrived;
 * those after a row naming an unknown id continue on `decodeRange`, which waits for the refresh.
 */
const foldedResult = (
  schema: GraphSchema,
  folded: FoldedRows | FoldFailure,
  command: string
): Effect.Effect<QueryResult, FalkorError> => {
  if (folded instanceof FoldFailure) return Effect.fail(placed(folded.cause, schema.graph, command))
  const { header, pending, rows, statistics } = folded
  const result = { header, columns: header.columns, rows, statistics }
  if (pending.length === 0) return Effect.succeed(result)
  const envelope: Envelope = { columns: header.columns, rows: pending, statistics }
  return Effect.map(decodeRange(schema, envelope, header, 0, pending.length, command, rows.length), (rest) => {
    for (const row of rest) rows.push(row)
    return result
  })
}

const isMismatch = (reply: Reply): reply is readonly [ErrorReply, number | bigint] =>
  Array.isArray(reply) &&
  reply.length === 2 &&
  reply[0] instanceof ErrorReply &&
  (typeof reply[1] === "number" || typeof reply[1] === "bigint")

/** The sending half of a graph's query path. */
export interface Sender {
  /** Sends one graph command, waiting by the graph's rule (see the module header). */
  readonly exec: (
    command: Command,
    readOnly: boolean,
    clientTimeout: Duration.Input | undefined,
    serverTimeout?: number,
    readPreference?: ReadPreference
  ) => Effect.Effect<Reply, FalkorError>
  /** Sends a query once; with the version check on, answers mismatches by revalidating. */
  readonly sendOnce: (
    command: QueryCommand,
    query: string | Cypher.Query,
    parameters: object | undefined,
    options: QueryOptions | undefined
  ) => Effect.Effect<Envelope, FalkorError>
  /** `sendOnce`, retried for read-only queries when a retry policy is set. */
  readonly send: Sender["sendOnce"]
  /**
   * `send`, then `then` on the envelope. Without a retry policy or the version check (the
   * common case) the reply is parsed and handed to `then` in the one step that receives it.
   */
  readonly sendThen: <A>(
    command: QueryCommand,
    query: string | Cypher.Query,
    parameters: object | undefined,
    options: QueryOptions | undefined,
    then: (envelope: Envelope) => Effect.Effect<A, FalkorError>
  ) => Effect.Effect<A, FalkorError>
  /**
   * Sends a query and decodes its whole result. Its rows are decoded as the reply is read
   * (`executeFolded`) unless the graph's options need the whole reply first (the
   * schema-version check, or `streamRows: false`).
   */
  readonly sendResult: (
    command: QueryCommand,
    query: string | Cypher.Query,
    parameters: object | undefined,
    options: QueryOptions | undefined
  ) => Effect.Effect<QueryResult, FalkorError>
  /**
   * Sends a query whose reply is streamed (`executeStreamed`, depth 2: the header, each row
   * and the statistics as they arrive); `undefined` when the graph's options need the whole
   * reply first (the schema-version check, which may send the query again, or a retry policy).
   */
  readonly sendStreamed:
    | ((
        command: QueryCommand,
        query: string | Cypher.Query,
        parameters: object | undefined,
        options: QueryOptions | undefined
      ) => Stream.Stream<ReplyPart, FalkorError>)
    | undefined
}

/**
 * The sender of graph `name`. `refused` fails every command before anything is sent (an
 * invalid graph name).
 */
export const makeSender = (
  connection: RedisConnection["Service"],
  schema: GraphSchema,
  name: string,
  options: GraphOptions,
  refused: FalkorError | undefined
): Sender => {
  // Sentinel and cluster connections say when the graph's primary changed: the schema cache is
  // re-validated before a reply from the new primary is decoded.
  const primaryEpoch = connection.info.primaryEpoch
  const followPrimary =
    primaryEpoch === undefined ? undefined : Effect.suspend(() => schema.followPrimary(primaryEpoch(name)))
  const exec: Sender["exec"] = (command, readOnly, clientTimeout, serverTimeout, readPreference) => {
    if (refused !== undefined) return Effect.fail(refused)
    const sent = connection
      .execute(command, { readOnly, timeout: clientTimeout ?? NO_CLIENT_LIMIT, readPreference })
      .pipe(Effect.mapError((error) => fromRedis(error, { graph: name, command: String(command[0]), serverTimeout })))
    return followPrimary === undefined ? sent : Effect.tap(sent, () => followPrimary)
  }

  /** The words of a query command: the graph, the text, `--compact` and the `TIMEOUT` arguments. */
  const queryWords = (command: QueryCommand, text: string, timeout: TimeoutArgs): Array<string> =>
    timeout.args.length === 0 ? [command, name, text, "--compact"] : [command, name, text, "--compact", ...timeout.args]

  /** `send` on the query's resolved text; a plain text without parameters has nothing to resolve. */
  const withText = <A>(
    command: QueryCommand,
    query: string | Cypher.Query,
    parameters: object | undefined,
    send: (text: string) => Effect.Effect<A, FalkorError>
  ): Effect.Effect<A, FalkorError> =>
    typeof query === "string" && parameters === undefined
      ? Effect.suspend(() => send(query))
      : Effect.flatMap(resolve(name, command, query, parameters), send)

  /** Sends a resolved query text and continues with `then` on the envelope (see `sendThen`). */
  const sendText = <A>(
    command: QueryCommand,
    text: string,
    queryOptions: QueryOptions | undefined,
    then: (envelope: Envelope) => Effect.Effect<A, FalkorError>
  ): Effect.Effect<A, FalkorError> => {
    const timeout = timeoutArgs(queryOptions, name, command)
    if (timeout instanceof FalkorError) return Effect.fail(timeout)
    const readOnly = command === "GRAPH.RO_QUERY"
    const base = queryWords(command, text, timeout)
    if (options.schemaVersionCheck !== true) {
      // The common path, kept free of generator machinery: it runs once per query.
      return Effect.flatMap(
        exec(base, readOnly, timeout.client, timeout.server, queryOptions?.readPreference),
        (reply) => {
          const envelope = parseOrError(reply, name, command)
          return envelope instanceof FalkorError ? Effect.fail(envelope) : then(envelope)
        }
      )
    }
    return Effect.flatMap(sendChecked(command, base, readOnly, timeout, queryOptions), then)
  }

  /** Sends with the schema-version check: a mismatch revalidates the schema and sends again. */
  const sendChecked = (
    command: QueryCommand,
    base: ReadonlyArray<string>,
    readOnly: boolean,
    timeout: TimeoutArgs,
    queryOptions: QueryOptions | undefined
  ): Effect.Effect<Envelope, FalkorError> =>
    Effect.gen(function* () {
      for (let attempt = 0; ; attempt++) {
        const version = schema.version ?? 0
        const sent = schema.snapshot()
        const reply = yield* exec(
          [...base, "version", String(version)],
          readOnly,
          timeout.client,
          timeout.server,
          queryOptions?.readPreference
        )
        if (!isMismatch(reply) || attempt >= 3) {
          const envelope = yield* parse(reply, name, command)
          namesAtSend.set(envelope, sent)
          return envelope
        }
        // Nothing ran: re-read the schema, note the server's version and send again.
        yield* schema.revalidate(reply[1])
      }
    })

  const sendOnce: Sender["sendOnce"] = (command, query, parameters, queryOptions) =>
    withText(command, query, parameters, (text) => sendText(command, text, queryOptions, Effect.succeed))

  const retry = options.retry
  const policy =
    retry === undefined
      ? undefined
      : {
          times: retry.times ?? 3,
          // min = the shorter delay of the two, so the exponential delay is capped.
          schedule: Schedule.min([
            Schedule.exponential(retry.baseDelay ?? "50 millis"),
            Schedule.spaced(retry.maxDelay ?? "1 second")
          ]).pipe(Schedule.jittered),
          while: (error: FalkorError) => error.isRetryable
        }
  const send: Sender["send"] = (command, query, parameters, queryOptions) =>
    policy === undefined || command !== "GRAPH.RO_QUERY"
      ? sendOnce(command, query, parameters, queryOptions)
      : Effect.retry(sendOnce(command, query, parameters, queryOptions), policy)

  const sendThen: Sender["sendThen"] = (command, query, parameters, queryOptions, then) => {
    // A retry re-sends only the query, never what `then` does with its reply.
    if (policy !== undefined && command === "GRAPH.RO_QUERY") {
      return Effect.flatMap(send(command, query, parameters, queryOptions), then)
    }
    // A plain text without parameters has nothing to resolve; the caller runs this lazily.
    return typeof query === "string" && parameters === undefined
      ? sendText(command, query, queryOptions, then)
      : Effect.flatMap(resolve(name, command, query, parameters), (text) => sendText(command, text, queryOptions, then))
  }

  const sendStreamed: Sender["sendStreamed"] =
    options.streamRows === false || options.schemaVersionCheck === true || policy !== undefined
      ? undefined
      : (command, query, parameters, queryOptions) =>
          Stream.unwrap(
            Effect.gen(function* () {
              if (refused !== undefined) return yield* refused
              const text = yield* resolve(name, command, query, parameters)
              const timeout = timeoutArgs(queryOptions, name, command)
              if (timeout instanceof FalkorError) return yield* timeout
              return executeStreamed(connection, [command, name, text, "--compact", ...timeout.args], {
                readOnly: command === "GRAPH.RO_QUERY",
                timeout: timeout.client ?? NO_CLIENT_LIMIT,
                readPreference: queryOptions?.readPreference,
                depth: 2
              }).pipe(
                Stream.mapError((error) => fromRedis(error, { graph: name, command, serverTimeout: timeout.server }))
              )
            })
          )

  // Behind a followed primary, rows are decoded on arrival only while the cache matches it.
  const current = primaryEpoch === undefined ? undefined : () => schema.epoch === primaryEpoch(name)

  /** One folded send of a resolved text (see `sendResult`). */
  const sendFolded = (
    command: QueryCommand,
    text: string,
    queryOptions: QueryOptions | undefined
  ): Effect.Effect<FoldedRows | FoldFailure, FalkorError> => {
    if (refused !== undefined) return Effect.fail(refused)
    const timeout = timeoutArgs(queryOptions, name, command)
    if (timeout instanceof FalkorError) return Effect.fail(timeout)
    const sent = executeFolded(
      connection,
      queryWords(command, text, timeout),
      () => new ResultFold(schema, command, current),
      {
        readOnly: command === "GRAPH.RO_QUERY",
        timeout: timeout.client ?? NO_CLIENT_LIMIT,
        readPreference: queryOptions?.readPreference
      }
    ).pipe(Effect.mapError((error) => fromRedis(error, { graph: name, command, serverTimeout: timeout.server })))
    return followPrimary === undefined ? sent : Effect.tap(sent, () => followPrimary)
  }

  const sendResult: Sender["sendResult"] =
    options.streamRows === false || options.schemaVersionCheck === true
      ? (command, query, parameters, queryOptions) =>
          sendThen(command, query, parameters, queryOptions, (envelope) => decodeResult(schema, envelope, command))
      : (command, query, parameters, queryOptions) => {
          const once = withText(command, query, parameters, (text) => sendFolded(command, text, queryOptions))
          // A retry re-sends only the query, never the refresh a row may wait for.
          const sent = policy === undefined || command !== "GRAPH.RO_QUERY" ? once : Effect.retry(once, policy)
          return Effect.flatMap(sent, (folded) => foldedResult(schema, folded, command))
        }

  return { exec, sendOnce, send, sendThen, sendResult, sendStreamed }
}
