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
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Cypher from "./Cypher.ts"
import { FalkorError, fromRedis, fromServer } from "./FalkorError.ts"
import type { Graph, Parameters, QueryResult } from "./Graph.ts"
import { invalidArgument } from "./internal/errors.ts"
import * as QueryPath from "./internal/QueryPath.ts"
import { GraphSchema } from "./internal/SchemaCache.ts"

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
  /** How long the client waits for the whole batch. Default: no limit (never the connection's `commandTimeout`). */
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
  const text = Effect.runSync(Effect.result(QueryPath.resolve(graph, command, entry.query, entry.parameters)))
  if (Result.isFailure(text)) return Result.fail(text.failure)
  const timeout = QueryPath.timeoutArgs({ timeout: entry.timeout }, graph, command)
  if (timeout instanceof FalkorError) return Result.fail(timeout)
  return Result.succeed([command, graph, text.success, "--compact", ...timeout.args])
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
  options: BatchOptions = {},
  attributes: Readonly<Record<string, string | number>> = { "db.namespace": graph.name }
): Effect.Effect<ReadonlyArray<Result.Result<QueryResult, FalkorError>>, FalkorError> => {
  const name = graph.name
  // Replies are decoded through the graph's own schema cache entry (its `schema` member).
  const schema = graph.schema instanceof GraphSchema ? graph.schema : undefined

  const decode = (reply: Reply, command: string): Effect.Effect<QueryResult, FalkorError> =>
    Effect.gen(function* () {
      if (reply instanceof ErrorReply) return yield* fromServer(reply.message, { graph: name, command })
      if (schema === undefined) return yield* invalidArgument("graph", "not a Graph made by FalkorDB.graph", name)
      const envelope = yield* QueryPath.parse(reply, name, command)
      return yield* QueryPath.decodeResult(schema, envelope, command)
    })

  return Effect.gen(function* () {
    const prepared = queries.map((entry) => commandOf(name, entry))
    const commands = prepared.filter(Result.isSuccess).map((r) => r.success)
    const readOnly = queries.every((entry) => entry.readOnly === true)
    // The graph client's waiting rule: no limit unless asked, never the connection's commandTimeout.
    const replies =
      commands.length === 0
        ? []
        : yield* connection
            .pipeline(commands, { readOnly, timeout: options.clientTimeout ?? "Infinity" })
            .pipe(Effect.mapError((error) => fromRedis(error, { graph: name, command: "GRAPH.QUERY" })))
    let next = 0
    return yield* Effect.forEach(prepared, (entry) => {
      if (Result.isFailure(entry))
        return Effect.succeed(Result.fail(entry.failure) as Result.Result<QueryResult, FalkorError>)
      const reply = replies[next++]!
      return Effect.result(decode(reply, String(entry.success[0])))
    })
  }).pipe(
    Effect.withSpan("Batch.run", {
      attributes: {
        ...attributes,
        "db.operation.name": batchOperation(queries),
        "db.operation.batch.size": queries.length
      }
    })
  )
}

/**
 * `BATCH GRAPH.QUERY` when every query is a write-capable one, `BATCH GRAPH.RO_QUERY` when
 * every one is read-only, `BATCH` for a mix (OpenTelemetry's naming of batches).
 */
const batchOperation = (queries: ReadonlyArray<BatchQuery>): string => {
  if (queries.length > 0 && queries.every((entry) => entry.readOnly === true)) return "BATCH GRAPH.RO_QUERY"
  if (queries.length > 0 && queries.every((entry) => entry.readOnly !== true)) return "BATCH GRAPH.QUERY"
  return "BATCH"
}
