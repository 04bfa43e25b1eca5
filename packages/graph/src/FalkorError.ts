/**
 * The graph client's one error type, classified by `reason`. Server errors keep the whole
 * line the server sent (`serverMessage`); connection-level errors from the engine keep the
 * engine error as `cause` and say whether the command may have run.
 *
 * @since 0.1.0
 */
import type { RedisError } from "@effect-falkordb/redis/RedisError"
import * as Data from "effect/Data"

/**
 * Why a graph call failed.
 *
 * - `Syntax`: the query does not parse (C `errMsg: … line: … column:` or Rust `…, errCtx: …, pos N`).
 * - `ReadOnlyQuery`: a write sent through `roQuery`.
 * - `Timeout`: the server's per-query `TIMEOUT` expired (`Query timed out`).
 * - `EmptyKey`: the graph does not exist (`ERR Invalid graph operation on empty key`).
 * - `WrongType`: the key holds something that is not a graph.
 * - `UnknownFunction` / `UnknownProcedure`: the query calls what the server does not have.
 * - `ModuleMissing`: the server has no `GRAPH.*` commands: the FalkorDB module is not loaded.
 * - `InvalidParameter`: a parameter could not be encoded, or the server rejected one.
 * - `InvalidArgument`: a bad TIMEOUT, version or arity.
 * - `VersionMismatch`: the schema-version check failed (`currentVersion` is the server's).
 * - `Backpressure`: the server's queue is full; nothing ran, retrying later is safe.
 * - `ConstraintViolation`: a unique or mandatory constraint rejected the write.
 * - `Query`: any other run-time error (type mismatch, division by zero, …).
 * - `Connection`: the engine failed the command (lost connection, client timeout, closed …).
 * - `Decode`: the reply is malformed or has an unknown type code; `row`/`column` say where.
 * - `UnknownSchemaId`: a label/type/property id is still unknown after a schema refresh.
 * - `RowDecode`: a typed row failed its `Schema`; `column` names the alias, `cause` is the `SchemaError`.
 * - `Unsupported`: the call needs a server feature this one does not have.
 *
 * @since 0.1.0
 * @category models
 */
export type Reason =
  | "Syntax"
  | "ReadOnlyQuery"
  | "Timeout"
  | "EmptyKey"
  | "WrongType"
  | "UnknownFunction"
  | "UnknownProcedure"
  | "ModuleMissing"
  | "InvalidParameter"
  | "InvalidArgument"
  | "VersionMismatch"
  | "Backpressure"
  | "ConstraintViolation"
  | "Query"
  | "Connection"
  | "Decode"
  | "UnknownSchemaId"
  | "RowDecode"
  | "Unsupported"

const hints: { readonly [R in Reason]: string } = {
  Syntax: "fix the Cypher text; the message points at the offending position",
  ReadOnlyQuery: "use query (GRAPH.QUERY) for writes; roQuery only runs read-only Cypher",
  Timeout: "raise the query's timeout option or make the query cheaper (the server stopped it)",
  EmptyKey: "the graph does not exist yet; create it with a write through query()",
  WrongType: "the key holds a non-graph value; pick another graph name or delete the key",
  UnknownFunction: "check the function name (temporal functions need FalkorDB ≥ 4.6; UDFs must be loaded)",
  UnknownProcedure: "check the procedure name with CALL dbms.procedures()",
  ModuleMissing: "the FalkorDB module is not loaded: start redis-server with --loadmodule falkordb.so",
  InvalidParameter: "pass plain data as parameters and build points/vectors/temporals with Cypher functions",
  InvalidArgument: "check the TIMEOUT value (a positive integer, at most TIMEOUT_MAX) and the arguments",
  VersionMismatch: "the graph's schema changed (or the graph was replaced); refresh the schema and retry",
  Backpressure: "the server's queue is full and nothing ran; retry after a short delay or lower concurrency",
  ConstraintViolation: "the write breaks a unique or mandatory constraint; fix the data",
  Query: "the query failed while running; see the server message",
  Connection: "see the cause: a write that may have run is never re-sent",
  Decode: "the reply could not be decoded; this is a client or server bug, report it with the query",
  UnknownSchemaId: "the graph changed under the client (deleted or replaced); run the query again",
  RowDecode: "the row does not match the Schema; fix the schema or the query's RETURN aliases",
  Unsupported: "this server version lacks the feature"
}

/**
 * A failed graph call.
 *
 * @since 0.1.0
 * @category errors
 */
export class FalkorError extends Data.TaggedError("FalkorError")<{
  readonly reason: Reason
  readonly message: string
  /** The error line exactly as the server sent it, for server errors. */
  readonly serverMessage?: string | undefined
  readonly graph?: string | undefined
  /** The command name (`GRAPH.QUERY`, `GRAPH.RO_QUERY`, …). */
  readonly command?: string | undefined
  /** 0-based row of a decode failure. */
  readonly row?: number | undefined
  /** Column alias of a decode failure. */
  readonly column?: string | undefined
  /** The server's current schema version, for `VersionMismatch`. */
  readonly currentVersion?: number | bigint | undefined
  readonly cause?: unknown
}> {
  /** What to do about it. */
  get hint(): string {
    if (this.reason === "Connection" && hasHint(this.cause)) return this.cause.hint
    return hints[this.reason]
  }
  /**
   * True when running the call again is safe and may succeed: server backpressure (nothing
   * ran), or a connection error whose command was never written.
   */
  get isRetryable(): boolean {
    if (this.reason === "Backpressure") return true
    if (this.reason === "Connection") return hasRetryable(this.cause) && this.cause.isRetryable
    return false
  }
}

const hasHint = (u: unknown): u is { readonly hint: string } =>
  typeof u === "object" && u !== null && typeof (u as { hint?: unknown }).hint === "string"
const hasRetryable = (u: unknown): u is { readonly isRetryable: boolean } =>
  typeof u === "object" && u !== null && typeof (u as { isRetryable?: unknown }).isRetryable === "boolean"

const baseCommands = new Set(["query", "ro_query", "delete", "list", "explain", "profile", "copy", "slowlog", "config"])

/**
 * Classifies the text of a server error reply. The checks use `includes` on the whole
 * line because many FalkorDB errors carry no `ERR` prefix and one starts with
 * `graph.RO_QUERY`.
 *
 * @since 0.1.0
 * @category classification
 */
export const classify = (message: string): Reason => {
  const lower = message.toLowerCase()
  const unknownGraphCommand = /^(?:err )?unknown command 'graph\.([a-z_]+)'/.exec(lower)
  if (unknownGraphCommand !== null) {
    // Commands every FalkorDB has: their absence means the module is not loaded. Newer ones
    // (GRAPH.MEMORY, GRAPH.UDF on 4.4) are missing because of the server version.
    return baseCommands.has(unknownGraphCommand[1]!) ? "ModuleMissing" : "Unsupported"
  }
  if (message.includes("is to be executed only on read-only queries")) return "ReadOnlyQuery"
  if (message.includes("Query timed out")) return "Timeout"
  if (message.includes("Invalid graph operation on empty key")) return "EmptyKey"
  if (message.startsWith("WRONGTYPE") || message.includes("Existing key has wrong Redis type")) return "WrongType"
  if (message.includes("version mismatch") || message.includes("invalid graph version")) return "VersionMismatch"
  if (
    message.includes("Max pending queries exceeded") ||
    message.includes("Write queue is full") ||
    message.includes("another write is in progress") ||
    message.includes("write queue unavailable")
  ) {
    return "Backpressure"
  }
  if (message.startsWith("Unknown function '")) return "UnknownFunction"
  if (message.startsWith("Procedure `") && message.includes("is not registered")) return "UnknownProcedure"
  if (
    message.includes("Failed to parse query parameter") ||
    message.includes("Failed to parse the value of parameter") ||
    message === "Missing parameters" ||
    /^Parameter .* not found/.test(message)
  ) {
    return "InvalidParameter"
  }
  if (
    message.includes("Failed to parse query timeout value") ||
    message.includes("TIMEOUT parameter value cannot exceed") ||
    message.includes("Failed to parse graph version value") ||
    lower.startsWith("err wrong number of arguments")
  ) {
    return "InvalidArgument"
  }
  if (message.includes("constraint violation")) return "ConstraintViolation"
  if (message.startsWith("errMsg:") || message.includes(", errCtx:") || message.includes(" errCtx: ")) return "Syntax"
  return "Query"
}

/**
 * A server error line as a `FalkorError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromServer = (serverMessage: string, graph: string | undefined, command: string): FalkorError => {
  const reason = classify(serverMessage)
  const message =
    reason === "ModuleMissing"
      ? `the FalkorDB module is not loaded on this server (${command} is an unknown command)`
      : reason === "Unsupported"
        ? `${command} is not supported by this FalkorDB version: ${serverMessage}`
        : `${command}${graph === undefined ? "" : ` on graph "${graph}"`} failed: ${serverMessage}`
  return new FalkorError({ reason, message, serverMessage, graph, command })
}

/**
 * An engine error as a `FalkorError`: error replies are classified from their text, every
 * other engine error becomes `Connection` with the engine error as `cause`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRedis = (error: RedisError, graph: string | undefined, command: string): FalkorError => {
  if (error._tag === "RedisReplyError") return fromServer(error.message, graph, command)
  return new FalkorError({
    reason: "Connection",
    message: `${command}${graph === undefined ? "" : ` on graph "${graph}"`}: ${error._tag}: ${error.message}`,
    graph,
    command,
    cause: error
  })
}
