/**
 * Batches: several queries of one graph written back to back on one connection in one
 * write (`RedisConnection.pipeline`), each with its own result or `FalkorError`. A query
 * that fails (a run-time error, a write sent read-only, a parameter that cannot be
 * encoded) does not fail the others; the server runs them in order, so a later read sees
 * an earlier write of the same batch. Only a connection failure fails the whole batch
 * (`Connection`: whatever was written may have run).
 *
 * On a multiplexed client the batch rides one engine (the pipeline is contiguous on one
 * socket), so the order of writes and reads inside it holds. Queries in a batch are sent
 * without the schema `version` check.
 *
 * @example
 * ```ts
 * import * as Batch from "@effect-falkordb/graph/Batch"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const [created, count] = yield* Batch.run(db.graph("g"), db.connection, [
 *     { query: "CREATE (:B {i: 1})" },
 *     { query: "MATCH (b:B) RETURN count(b) AS n", readOnly: true }
 *   ])
 *   // each is a Result: Result.isSuccess(count) && count.success.rows[0]!.get("n")
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { decodeRow, parseEnvelope, parseNameList, SchemaMiss } from "./CompactReply.ts"
import * as Cypher from "./Cypher.ts"
import { decodeError, FalkorError, fromRedis, fromServer, InvalidParameter } from "./FalkorError.ts"
import type { Graph, Parameters, QueryResult } from "./Graph.ts"
import { invalidArgument } from "./internal/errors.ts"
import { Header, Row } from "./Row.ts"
import { type Fetch, procedureText } from "./SchemaCache.ts"

/**
 * One query of a batch.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchQuery {
  readonly query: string | Cypher.Query
  readonly parameters?: Parameters | undefined
  /** Send through `GRAPH.RO_QUERY`. Default `false` (`GRAPH.QUERY`). */
  readonly readOnly?: boolean | undefined
  /** The server's per-query `TIMEOUT`. */
  readonly timeout?: Duration.Input | undefined
}

/**
 * Options of a batch.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchOptions {
  /** How long the client waits for the whole batch. Default: the connection's `commandTimeout`. */
  readonly clientTimeout?: Duration.Input | undefined
}

/**
 * The command of one batch entry, or the error that keeps it from being sent.
 *
 * @since 0.1.0
 * @category command
 */
export const commandOf = (graph: string, entry: BatchQuery): Result.Result<Command, FalkorError> => {
  const command = entry.readOnly === true ? "GRAPH.RO_QUERY" : "GRAPH.QUERY"
  const isQuery = Cypher.isQuery(entry.query)
  const text = isQuery ? (entry.query as Cypher.Query).text : (entry.query as string)
  const bound = isQuery ? (entry.query as Cypher.Query).parameters : {}
  const clash = Object.keys(entry.parameters ?? {}).find((key) => Object.hasOwn(bound, key))
  if (clash !== undefined) {
    return Result.fail(
      new FalkorError({
        reason: new InvalidParameter({
          graph,
          command,
          path: clash,
          detail: "bound both by the cypher template and explicitly",
          serverMessage: undefined
        })
      })
    )
  }
  const withParameters = Effect.runSync(Effect.result(Cypher.withParameters(text, { ...bound, ...entry.parameters })))
  if (Result.isFailure(withParameters)) {
    const cause = withParameters.failure
    return Result.fail(
      new FalkorError({
        reason: new InvalidParameter({
          graph,
          command,
          path: cause.path,
          detail: `${cause.message} (${cause.hint})`,
          serverMessage: undefined,
          cause
        })
      })
    )
  }
  const args: Array<string> = [command, graph, withParameters.success, "--compact"]
  if (entry.timeout !== undefined) {
    const ms = Duration.toMillis(Duration.fromInputUnsafe(entry.timeout))
    if (!Number.isFinite(ms) || ms < 1) {
      return Result.fail(invalidArgument("timeout", "the query timeout must be at least 1 millisecond", graph, command))
    }
    args.push("TIMEOUT", String(Math.ceil(ms)))
  }
  return Result.succeed(args)
}

/**
 * Runs `queries` on `graph` as one pipeline on `connection`; the results are in the
 * order of the queries.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  graph: Graph,
  connection: RedisConnection["Service"],
  queries: ReadonlyArray<BatchQuery>,
  options: BatchOptions = {}
): Effect.Effect<ReadonlyArray<Result.Result<QueryResult, FalkorError>>, FalkorError> => {
  const name = graph.name
  const schema = graph.schema
  const fetch: Fetch = (kind, skip) =>
    connection.execute(["GRAPH.RO_QUERY", name, procedureText(kind, skip)], { readOnly: true }).pipe(
      Effect.mapError((error) => fromRedis(error, { graph: name, command: "GRAPH.RO_QUERY" })),
      Effect.flatMap((reply) =>
        Effect.try({ try: () => parseNameList(reply, name, "GRAPH.RO_QUERY"), catch: (e) => e as FalkorError })
      )
    )

  const decode = (reply: Reply, command: string): Effect.Effect<QueryResult, FalkorError> =>
    Effect.suspend(() => {
      if (reply instanceof ErrorReply) return Effect.fail(fromServer(reply.message, { graph: name, command }))
      const envelope = parseEnvelope(reply, name, command)
      const header = new Header(envelope.columns)
      const rows: Array<Row> = []
      const loop = (start: number): Effect.Effect<QueryResult, FalkorError> =>
        Effect.suspend(() => {
          const missSeq = schema.now
          let i = start
          try {
            for (; i < envelope.rows.length; i++) {
              rows.push(new Row(header, decodeRow(envelope.rows[i]!, i, header.columns, schema.lookup)))
            }
          } catch (e) {
            if (e instanceof SchemaMiss)
              return Effect.flatMap(schema.ensure(e.kind, e.id, missSeq, fetch), () => loop(i))
            throw e
          }
          return Effect.succeed({ header, columns: header.columns, rows, statistics: envelope.statistics })
        })
      return loop(0)
    }).pipe(
      Effect.catchDefect((defect) =>
        Effect.fail(
          defect instanceof FalkorError
            ? defect
            : decodeError(`decoding failed: ${String(defect)}`, { graph: name, command, cause: defect })
        )
      )
    )

  return Effect.gen(function* () {
    const prepared = queries.map((entry) => commandOf(name, entry))
    const commands = prepared.filter(Result.isSuccess).map((r) => r.success)
    const readOnly = queries.every((entry) => entry.readOnly === true)
    const replies =
      commands.length === 0
        ? []
        : yield* connection
            .pipeline(commands, { readOnly, timeout: options.clientTimeout })
            .pipe(Effect.mapError((error) => fromRedis(error, { graph: name, command: "GRAPH.QUERY" })))
    let next = 0
    return yield* Effect.forEach(prepared, (entry) => {
      if (Result.isFailure(entry))
        return Effect.succeed(Result.fail(entry.failure) as Result.Result<QueryResult, FalkorError>)
      const reply = replies[next++]!
      return Effect.result(decode(reply, String(entry.success[0])))
    })
  }).pipe(Effect.withSpan("Batch.run", { attributes: { "db.namespace": name, "db.batch.size": queries.length } }))
}
