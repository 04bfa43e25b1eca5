/**
 * The graph client's one error, in Effect 4's shape (like `effect/sql/SqlError`): a
 * `FalkorError` whose `reason` is one of the tagged reason classes below, each carrying
 * only its own fields. `message`, `hint` and `isRetryable` come from the reason, so
 *
 * ```ts skip-type-checking
 * Effect.catchReason("FalkorError", "UnknownGraph", () => Effect.succeed([]))
 * Effect.catchReasons("FalkorError", { Timeout: (r) => …, Backpressure: (r) => … })
 * ```
 *
 * work. Server reasons keep the whole line the server sent (`serverMessage`, every code
 * point); engine failures keep the engine's `RedisError` as `cause`. `written` says whether
 * the call reached the server, `mayHaveRun` whether it may have run. The convention is the
 * engine's `RedisError`'s (ARCHITECTURE.md §5).
 *
 * @since 0.1.0
 */
import type { SchemaError } from "effect/Schema"
import { hintOnStack, type RedisError } from "@effect-falkordb/redis/RedisError"
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"
import * as ServerLine from "./internal/ServerLine.ts"

const TypeId = "~@effect-falkordb/graph/FalkorError" as const
const ReasonTypeId = "~@effect-falkordb/graph/FalkorError/Reason" as const

/**
 * Where a failure happened: the graph and the command (`GRAPH.QUERY`, …), when known.
 *
 * @since 0.1.0
 * @category models
 */
export interface Where {
  readonly graph?: string | undefined
  readonly command?: string | undefined
}

const where = (w: Where): string =>
  `${w.command ?? "graph call"}${w.graph === undefined ? "" : ` on graph ${JSON.stringify(w.graph)}`}`

/**
 * The fields of a reason classified from a server error line.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerFields extends Where {
  /** The error line exactly as the server sent it. */
  readonly serverMessage: string
}

/**
 * What a server reason instance is. Spelled out (not inferred from the class below) so the
 * emitted declarations can name it: the inferred type reaches into `effect` internals.
 */
type ServerReasonInstance<Tag extends string> = Cause.YieldableError & {
  readonly _tag: Tag
} & Readonly<ServerFields> & {
    readonly [ReasonTypeId]: typeof ReasonTypeId
    readonly hint: string
    readonly isRetryable: boolean
    readonly written: boolean
  }

/** A reason classified from a server error line: the message quotes the line whole. */
const ServerReason = <Tag extends string>(
  tag: Tag,
  hint: string,
  retryable: boolean
): (new (
  fields: ServerFields
) => ServerReasonInstance<Tag>) => {
  class Base extends Data.TaggedError(tag)<ServerFields> {
    readonly [ReasonTypeId] = ReasonTypeId
    override get message(): string {
      return `${where(this)} failed: ${this.serverMessage}`
    }
    get hint(): string {
      return hint
    }
    get isRetryable(): boolean {
      return retryable
    }
    /** The server answered the query with this line: it was sent. */
    get written(): boolean {
      return true
    }
  }
  return Base
}

/**
 * The query does not parse: the C server's `errMsg: … line: … column:` or the Rust
 * server's `…, errCtx: …, pos N`.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Syntax extends ServerReason(
  "Syntax",
  "fix the Cypher text; the message points at the offending position",
  false
) {}

/**
 * A write sent through `roQuery` (`graph.RO_QUERY is to be executed only on read-only queries`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ReadOnlyQuery extends ServerReason(
  "ReadOnlyQuery",
  "use query (GRAPH.QUERY) for writes; roQuery only runs read-only Cypher",
  false
) {}

/**
 * The graph does not exist (`ERR Invalid graph operation on empty key`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownGraph extends ServerReason(
  "UnknownGraph",
  "the graph does not exist (yet); create it with a write through query(), or check the name",
  false
) {}

/**
 * The key holds something that is not a graph (`WRONGTYPE …` / `Existing key has wrong Redis type`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class WrongType extends ServerReason(
  "WrongType",
  "the key holds a non-graph value; pick another graph name or delete the key",
  false
) {}

/**
 * The query calls a function the server does not have (`Unknown function 'f'`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownFunction extends ServerReason(
  "UnknownFunction",
  "check the function name (temporal functions need FalkorDB >= 4.6; UDFs must be loaded)",
  false
) {}

/**
 * The query calls a procedure the server does not have (``Procedure `p` is not registered``).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownProcedure extends ServerReason(
  "UnknownProcedure",
  "check the procedure name with CALL dbms.procedures()",
  false
) {}

/**
 * The server has no `GRAPH.*` commands: the FalkorDB module is not loaded.
 *
 * @since 0.1.0
 * @category reasons
 */
export class ModuleMissing extends ServerReason(
  "ModuleMissing",
  "the FalkorDB module is not loaded: start redis-server with --loadmodule falkordb.so",
  false
) {
  override get message(): string {
    return `the FalkorDB module is not loaded on this server (${this.command ?? "GRAPH.*"} is an unknown command): ${this.serverMessage}`
  }
}

/**
 * The call needs a command this FalkorDB version does not have (e.g. `GRAPH.MEMORY` on 4.4).
 *
 * @since 0.1.0
 * @category reasons
 */
export class Unsupported extends ServerReason("Unsupported", "this server version lacks the feature", false) {
  override get message(): string {
    return `${this.command ?? "the command"} is not supported by this FalkorDB version: ${this.serverMessage}`
  }
}

/**
 * The server's queue is full; nothing ran, so running the call again later is safe.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Backpressure extends ServerReason(
  "Backpressure",
  "the server's queue is full and nothing ran; retry after a short delay or lower concurrency",
  true
) {}

/**
 * A unique or mandatory constraint rejected the write.
 *
 * @since 0.1.0
 * @category reasons
 */
export class ConstraintViolation extends ServerReason(
  "ConstraintViolation",
  "the write breaks a unique or mandatory constraint; fix the data",
  false
) {}

/**
 * Any other error while the query ran (type mismatch, division by zero, memory cap, …).
 *
 * @since 0.1.0
 * @category reasons
 */
export class Runtime extends ServerReason("Runtime", "the query failed while running; see the server message", false) {}

/**
 * The query timed out. `origin` says who gave up:
 *
 * - `"server"`: the server stopped the query at its `TIMEOUT` (`Query timed out`, kept in
 *   `serverMessage`); nothing is left running.
 * - `"client"`: the client stopped waiting after `timeout` ms (`cause` is the engine's
 *   timeout). When `stillRunning` (the query was sent), the server may still be running it,
 *   and FalkorDB runs one query per connection at a time: that connection owes the reply and
 *   later queries sent on it wait behind. A multiplexed client steers new commands to its
 *   other connections until the late reply has been read.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Timeout extends Data.TaggedError("Timeout")<
  Where & {
    readonly origin: "server" | "client"
    /** Milliseconds: the server `TIMEOUT` sent with the query, or how long the client waited. */
    readonly timeout: number | undefined
    /** The query may still be running on the server and holding its connection. */
    readonly stillRunning: boolean
    /** The server's line (`Query timed out`), for `origin: "server"`. */
    readonly serverMessage: string | undefined
    /** The engine's timeout, for `origin: "client"`. */
    readonly cause?: RedisError | undefined
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const ms = this.timeout === undefined ? "" : ` of ${this.timeout} ms`
    if (this.origin === "server") {
      return `${where(this)}: the server stopped the query at its timeout${ms} (${this.serverMessage ?? "Query timed out"})`
    }
    return this.stillRunning
      ? `${where(this)}: the client stopped waiting after ${this.timeout} ms; the query was sent and may still be running on the server, holding its connection`
      : `${where(this)}: the client stopped waiting after ${this.timeout} ms; the query was never sent`
  }
  get hint(): string {
    if (this.origin === "server") {
      return "raise the query's timeout option or make the query cheaper (the server stopped it)"
    }
    return this.stillRunning
      ? "the server may still be running the query and its connection serves nothing else until it ends: set a server timeout (the timeout option) so the server stops it, or raise clientTimeout"
      : "nothing was sent; retrying is safe (the connection or its window was busy)"
  }
  get isRetryable(): boolean {
    return this.origin === "client" && !this.stillRunning
  }
  /** Sent: the server stopped it, or the client stopped waiting after it was sent. */
  get written(): boolean {
    return this.origin === "server" || this.stillRunning
  }
}

/**
 * A parameter was refused: by the client (it cannot be encoded as a Cypher literal;
 * `path` names it, e.g. `user.tags[2]`) or by the server (`serverMessage`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidParameter extends Data.TaggedError("InvalidParameter")<
  Where & {
    /** The parameter (and where inside it), when known. */
    readonly path: string | undefined
    /** What is wrong with it. */
    readonly detail: string
    readonly serverMessage: string | undefined
    readonly cause?: unknown
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: invalid parameter${this.path === undefined ? "" : ` ${this.path}`}: ${this.detail}`
  }
  get hint(): string {
    return "pass plain data as parameters (null instead of undefined inside lists is fine) and build points/vectors/temporals with Cypher functions"
  }
  get isRetryable(): boolean {
    return false
  }
  /** Sent only when the server refused it; a parameter the client refused was never sent. */
  get written(): boolean {
    return this.serverMessage !== undefined
  }
}

/**
 * A programmer's mistake in an argument: a graph name that is not a non-empty string, a bad
 * timeout, a wrong arity. `argument` names it; `serverMessage` is set when the server refused it.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidArgument extends Data.TaggedError("InvalidArgument")<
  Where & {
    readonly argument: string | undefined
    readonly detail: string
    readonly serverMessage: string | undefined
    readonly cause?: unknown
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: invalid ${this.argument ?? "argument"}: ${this.detail}`
  }
  get hint(): string {
    return "fix the call: graph names are non-empty strings, timeouts positive durations (at most TIMEOUT_MAX)"
  }
  get isRetryable(): boolean {
    return false
  }
  /** Sent only when the server refused it; an argument the client refused was never sent. */
  get written(): boolean {
    return this.serverMessage !== undefined
  }
}

/**
 * The server-side schema-version check failed (only with `schemaVersionCheck`); nothing ran.
 *
 * @since 0.1.0
 * @category reasons
 */
export class VersionMismatch extends Data.TaggedError("VersionMismatch")<
  ServerFields & {
    /** The server's current schema version (unknown when the server sent the line alone). */
    readonly currentVersion: number | bigint | undefined
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const version = this.currentVersion === undefined ? "" : ` (server version ${this.currentVersion})`
    return `${where(this)}: schema version mismatch${version}: ${this.serverMessage}`
  }
  get hint(): string {
    return "the graph's schema changed (or the graph was replaced); refresh the schema and retry"
  }
  get isRetryable(): boolean {
    return false
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * The engine failed the command: connection lost, offline, closed, protocol error, or a
 * server refusing every command for a while (`LOADING`, `BUSY`, `MASTERDOWN`, `TRYAGAIN`,
 * `CLUSTERDOWN`: nothing ran). The engine's `RedisError` is the `cause`;
 * `FalkorError.mayHaveRun` says whether the query may have run.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Connection extends Data.TaggedError("Connection")<Where & { readonly cause: RedisError }> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: ${this.cause._tag}: ${this.cause.message}`
  }
  get hint(): string {
    return this.cause.hint
  }
  get isRetryable(): boolean {
    return this.cause.isRetryable
  }
  /** The engine's answer: `false` when the command was never sent. */
  get written(): boolean {
    return this.cause.written
  }
}

/**
 * The reply could not be decoded (malformed, or an unknown value type code); `row` and
 * `column` say where, when the failure is inside a row.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Decode extends Data.TaggedError("Decode")<
  Where & {
    readonly row: number | undefined
    readonly column: string | undefined
    readonly detail: string
    readonly cause?: unknown
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const at =
      this.row === undefined ? "" : ` at row ${this.row}${this.column === undefined ? "" : `, column "${this.column}"`}`
    return `${where(this)}: cannot decode the reply${at}: ${this.detail}`
  }
  get hint(): string {
    return "the reply could not be decoded; this is a client or server bug, report it with the query"
  }
  get isRetryable(): boolean {
    return false
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * A label, relationship-type or property-key id is still unknown after a schema refresh:
 * the graph was deleted or replaced meanwhile.
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownSchemaId extends Data.TaggedError("UnknownSchemaId")<
  Where & {
    readonly kind: "labels" | "relationshipTypes" | "propertyKeys"
    readonly id: number
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: ${this.kind} id ${this.id} is not known to the server after a refresh (the graph was deleted or replaced meanwhile)`
  }
  get hint(): string {
    return "the graph changed under the client (deleted or replaced); run the query again"
  }
  get isRetryable(): boolean {
    return false
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * A typed row (`queryAs`) failed its `Schema`: `row` counts from 0 in the run, `column` is
 * the alias the first issue points at, `cause` the `SchemaError`.
 *
 * @since 0.1.0
 * @category reasons
 */
export class RowDecode extends Data.TaggedError("RowDecode")<
  Where & {
    readonly row: number
    readonly column: string | undefined
    readonly cause: SchemaError
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: row ${this.row}${this.column === undefined ? "" : `, column "${this.column}"`}: ${this.cause.message}`
  }
  get hint(): string {
    return "the row does not match the Schema; fix the schema or the query's RETURN aliases"
  }
  get isRetryable(): boolean {
    return false
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * A unique constraint needs a range index on the same label and properties first
 * (`missing supporting exact-match index`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class MissingIndex extends ServerReason(
  "MissingIndex",
  "create a range index on the same label and properties first (Indexes.createRange), or pass createIndex: true to Constraints.create",
  false
) {}

/**
 * The property already has an index of that kind (`Attribute 'n' is already indexed`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class IndexExists extends ServerReason(
  "IndexExists",
  "the index exists already; list the indexes (Indexes.list) or treat this as done",
  false
) {}

/**
 * There is no such index to drop (`Unable to drop index on :Doc(x): no such index.`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class IndexNotFound extends ServerReason(
  "IndexNotFound",
  "there is no such index; check the label, property and index kind with Indexes.list",
  false
) {}

/**
 * The constraint exists already (`Constraint already exists`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ConstraintExists extends ServerReason(
  "ConstraintExists",
  "the constraint exists already; list the constraints (Constraints.list) or treat this as done",
  false
) {}

/**
 * There is no such constraint to drop (`Unable to drop constraint, no such constraint.`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ConstraintNotFound extends ServerReason(
  "ConstraintNotFound",
  "there is no such constraint; check kind, entity type, label and properties with Constraints.list",
  false
) {}

/**
 * A constraint the server reports as `FAILED`: the existing data violates it. `constraint`
 * names it (`UNIQUE (:User {email})`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ConstraintFailed extends Data.TaggedError("ConstraintFailed")<Where & { readonly constraint: string }> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: the constraint ${this.constraint} FAILED: the existing data violates it`
  }
  get hint(): string {
    return "drop the constraint, fix the data that violates it, then create it again"
  }
  get isRetryable(): boolean {
    return false
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * Waiting for an index or constraint to become operational gave up (deadline reached or
 * schedule exhausted); `lastStatus` is what the server said last.
 *
 * @since 0.1.0
 * @category reasons
 */
export class WaitTimeout extends Data.TaggedError("WaitTimeout")<
  Where & {
    /** What was awaited (`the index on Doc.n`). */
    readonly what: string
    /** The last status read (`(:Doc) (n): [Indexing] 3379/20000: UNDER CONSTRUCTION`). */
    readonly lastStatus: string
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: gave up waiting for ${this.what} to become operational; last status: ${this.lastStatus}`
  }
  get hint(): string {
    return "the server is still building it: wait longer (the timeout option) and check progress with list()"
  }
  get isRetryable(): boolean {
    return true
  }
  /** A reply came back: the call was sent. */
  get written(): boolean {
    return true
  }
}

/**
 * A label, relationship type, property or output name that cannot be written as one Cypher
 * identifier (empty, a backtick, NUL, a lone surrogate). Nothing was sent.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidIdentifier extends Data.TaggedError("InvalidIdentifier")<
  Where & {
    /** The refused name. */
    readonly name: string
    /** What it names (`label`, `property name`, …). */
    readonly what: string
    readonly detail: string
  }
> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${where(this)}: the ${this.what} ${JSON.stringify(this.name)} cannot be written as a Cypher identifier: ${this.detail}`
  }
  get hint(): string {
    return "rename it: identifiers are written bare or in backticks, and FalkorDB cannot escape a backtick inside one"
  }
  get isRetryable(): boolean {
    return false
  }
  /** Refused before anything was sent. */
  get written(): boolean {
    return false
  }
}

/**
 * A procedure was called with arguments it does not take: the wrong number
 * (``Procedure `algo.pageRank` requires 2 arguments, got 3``), or values it refuses
 * (`Invalid arguments for procedure 'db.idx.vector.queryNodes'`: for vector queries this
 * line covers `k = 0`, a label or property without a vector index, and an index still
 * being built).
 *
 * @since 0.1.0
 * @category reasons
 */
export class ProcedureArguments extends ServerReason(
  "ProcedureArguments",
  "check the procedure's arguments (CALL dbms.procedures()); for vector queries k must be positive, the label and property must have a vector index, and the index must be operational (Indexes.awaitOperational)",
  false
) {}

/**
 * A `YIELD` names an output the procedure does not have
 * (``Procedure `algo.pageRank` does not yield output `nosuch` ``).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownOutput extends ServerReason(
  "UnknownOutput",
  "yield only the procedure's outputs (CALL dbms.procedures() lists its signature)",
  false
) {}

/**
 * A query vector's length differs from the index's dimension
 * (`Vector dimension mismatch, expected 3 but got 2`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class VectorDimension extends ServerReason(
  "VectorDimension",
  "send a query vector with as many elements as the index's dimension (Indexes.list shows it in options)",
  false
) {}

/**
 * A UDF library of that name is loaded already
 * (`Failed to register, UDF Library 'mathlib' already registered`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UdfExists extends ServerReason(
  "UdfExists",
  "load it with replace: true to replace the library, or delete it first",
  false
) {}

/**
 * A UDF library failed while being loaded: its code does not parse or throws
 * (`Failed to evaluate UDF library 'badlib', Exception: SyntaxError: expecting ';'`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UdfInvalid extends ServerReason(
  "UdfInvalid",
  "fix the library's JavaScript (the server message has the exception) and load it again",
  false
) {}

/**
 * There is no UDF library of that name (`Library mathlib does not exist`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UdfNotFound extends ServerReason(
  "UdfNotFound",
  "list the loaded libraries (udf list) and check the name",
  false
) {}

/**
 * A UDF threw while a query ran (`UDF Exception: kaboom , Stack: …`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class UdfException extends ServerReason(
  "UdfException",
  "the function threw; the server message carries its exception and stack",
  false
) {}

/**
 * Every reason a graph call can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type FalkorErrorReason =
  | Syntax
  | ReadOnlyQuery
  | UnknownGraph
  | WrongType
  | UnknownFunction
  | UnknownProcedure
  | ModuleMissing
  | Unsupported
  | Backpressure
  | ConstraintViolation
  | Runtime
  | Timeout
  | InvalidParameter
  | InvalidArgument
  | VersionMismatch
  | Connection
  | Decode
  | UnknownSchemaId
  | RowDecode
  | MissingIndex
  | IndexExists
  | IndexNotFound
  | ConstraintExists
  | ConstraintNotFound
  | ConstraintFailed
  | WaitTimeout
  | InvalidIdentifier
  | ProcedureArguments
  | UnknownOutput
  | VectorDimension
  | UdfExists
  | UdfInvalid
  | UdfNotFound
  | UdfException

/**
 * A failed graph call. `message`, `hint` and `isRetryable` come from the `reason`; the stack's
 * first lines carry the hint too, so an uncaught error printed by `runMain` shows it.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 *
 * const titles = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const result = yield* db.graph("movies").roQuery("MATCH (m:Movie) RETURN m.title AS title")
 *   return result.rows.map((row) => row.get("title"))
 * }).pipe(
 *   // No graph yet: no titles.
 *   Effect.catchReason("FalkorError", "UnknownGraph", () => Effect.succeed([]))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class FalkorError extends Data.TaggedError("FalkorError")<{ readonly reason: FalkorErrorReason }> {
  readonly [TypeId] = TypeId
  /** The reason, as the standard `cause` (printed beneath the error). */
  override readonly cause: FalkorErrorReason = this.reason
  constructor(props: { readonly reason: FalkorErrorReason }) {
    super(props)
    // The first stack line is "FalkorError: <message>"; the hint follows it, so runMain shows both.
    hintOnStack(this)
  }
  override get message(): string {
    return this.reason.message
  }
  /** What to do about it. */
  get hint(): string {
    return this.reason.hint
  }
  /**
   * True when running the call again is safe and may succeed: server backpressure (nothing
   * ran), a client timeout before the query was sent, or an engine error whose command was
   * never written.
   */
  get isRetryable(): boolean {
    return this.reason.isRetryable
  }
  /**
   * Whether the query may have run on the server (so a write may have been applied): what a
   * caller needs to know before running a failed `query` again. True for a connection lost
   * or a client timeout after the query was sent (`Connection` whose engine error is
   * `written`, `Timeout { stillRunning }`), and for a reply the client could not decode
   * (`Decode`, `UnknownSchemaId`, `RowDecode`: the server ran the query and answered). False
   * when the query was never sent, or the server refused it or failed it as a whole (FalkorDB
   * undoes the changes of a query that fails) — including a server refusing every command
   * for a while (`LOADING`, `BUSY`, `MASTERDOWN`, `TRYAGAIN`, `CLUSTERDOWN`: a `Connection`
   * whose engine error is such a reply).
   *
   * @example
   * ```ts
   * import * as Effect from "effect/Effect"
   * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
   *
   * const create = (id: string) =>
   *   Effect.gen(function* () {
   *     const db = yield* FalkorDB.FalkorDB
   *     yield* db.graph("ledger").query("CREATE (:Entry {id: $id})", { id })
   *     return "applied" as const
   *   }).pipe(
   *     Effect.catchTag("FalkorError", (error) =>
   *       // Unknown: look for the entry before creating it again. Not run: safe to run again.
   *       Effect.succeed(error.mayHaveRun ? ("unknown" as const) : ("not applied" as const))
   *     )
   *   )
   * ```
   *
   * @since 0.1.0
   */
  get mayHaveRun(): boolean {
    const reason = this.reason
    switch (reason._tag) {
      case "Connection":
        return reason.cause.mayHaveRun
      case "Timeout":
        return reason.origin === "client" && reason.stillRunning
      case "Decode":
      case "UnknownSchemaId":
      case "RowDecode":
        return true
      default:
        return false
    }
  }
  /**
   * `false`: nothing was sent (retrying is safe); `true`: the call reached the server (whether
   * it may have run: `mayHaveRun`).
   */
  get written(): boolean {
    return this.reason.written
  }
}

/**
 * True for a `FalkorError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isFalkorError = (u: unknown): u is FalkorError => Predicate.hasProperty(u, TypeId)

/**
 * True for a `FalkorErrorReason`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isFalkorErrorReason = (u: unknown): u is FalkorErrorReason => Predicate.hasProperty(u, ReasonTypeId)

/**
 * The tag of a reason classified from a server error line.
 *
 * @since 0.1.0
 * @category models
 */
export type ServerReasonTag = ServerLine.ServerReasonTag

/**
 * Classifies the text of a server error reply, C and Rust server forms alike (the rules are
 * in this package's `internal/ServerLine.ts`).
 *
 * @example
 * ```ts
 * import * as FalkorError from "@effect-falkordb/graph/FalkorError"
 *
 * FalkorError.classify("Invalid graph operation on empty key") // "UnknownGraph"
 * FalkorError.classify("Max pending queries exceeded") // "Backpressure"
 * ```
 *
 * @since 0.1.0
 * @category classification
 */
export const classify: (message: string) => ServerReasonTag = ServerLine.classify

/**
 * Context a caller knows about a failed command.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context extends Where {
  /** The server `TIMEOUT` sent with the query, in milliseconds. */
  readonly serverTimeout?: number | undefined
}

/**
 * The reason of a server error line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasonFromServer = (serverMessage: string, context: Context): FalkorErrorReason => {
  const { graph, command } = context
  const fields = { serverMessage, graph, command }
  switch (classify(serverMessage)) {
    case "Syntax":
      return new Syntax(fields)
    case "ReadOnlyQuery":
      return new ReadOnlyQuery(fields)
    case "Timeout":
      return new Timeout({
        ...fields,
        origin: "server",
        timeout: context.serverTimeout,
        stillRunning: false
      })
    case "UnknownGraph":
      return new UnknownGraph(fields)
    case "WrongType":
      return new WrongType(fields)
    case "UnknownFunction":
      return new UnknownFunction(fields)
    case "UnknownProcedure":
      return new UnknownProcedure(fields)
    case "ModuleMissing":
      return new ModuleMissing(fields)
    case "Unsupported":
      return new Unsupported(fields)
    case "InvalidParameter":
      return new InvalidParameter({
        ...fields,
        path: ServerLine.parameterOf(serverMessage) ?? undefined,
        detail: serverMessage
      })
    case "InvalidArgument":
      return new InvalidArgument({ ...fields, argument: undefined, detail: serverMessage })
    case "VersionMismatch":
      // A top-level line (not the `[error, version]` reply shape): the version is not known.
      return new VersionMismatch({ ...fields, currentVersion: undefined })
    case "Backpressure":
      return new Backpressure(fields)
    case "ConstraintViolation":
      return new ConstraintViolation(fields)
    case "Runtime":
      return new Runtime(fields)
    case "MissingIndex":
      return new MissingIndex(fields)
    case "IndexExists":
      return new IndexExists(fields)
    case "IndexNotFound":
      return new IndexNotFound(fields)
    case "ConstraintExists":
      return new ConstraintExists(fields)
    case "ConstraintNotFound":
      return new ConstraintNotFound(fields)
    case "ProcedureArguments":
      return new ProcedureArguments(fields)
    case "UnknownOutput":
      return new UnknownOutput(fields)
    case "VectorDimension":
      return new VectorDimension(fields)
    case "UdfExists":
      return new UdfExists(fields)
    case "UdfInvalid":
      return new UdfInvalid(fields)
    case "UdfNotFound":
      return new UdfNotFound(fields)
    case "UdfException":
      return new UdfException(fields)
  }
}

/**
 * A server error line as a `FalkorError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromServer = (serverMessage: string, context: Context): FalkorError =>
  new FalkorError({ reason: reasonFromServer(serverMessage, context) })

/**
 * An engine error as a `FalkorError`: an error reply is classified from its text (one that
 * refuses every command for a while — `LOADING`, `BUSY`, … — stays `Connection`), a client
 * timeout becomes `Timeout { origin: "client" }`, an argument the engine refused becomes
 * `InvalidArgument`, anything else `Connection` with the engine error as `cause`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRedis = (error: RedisError, context: Context): FalkorError => {
  const { graph, command } = context
  const reason = error.reason
  switch (reason._tag) {
    case "Reply":
      // A server refusing every command for a while (LOADING, BUSY, MASTERDOWN, …) did not run
      // the query: the engine's reason keeps that (notExecuted, retryable), a Runtime would not.
      if (reason.notExecuted) return new FalkorError({ reason: new Connection({ graph, command, cause: error }) })
      return fromServer(reason.serverMessage, context)
    case "Timeout":
      return new FalkorError({
        reason: new Timeout({
          graph,
          command,
          origin: "client",
          timeout: reason.timeout,
          stillRunning: reason.written,
          serverMessage: undefined,
          cause: error
        })
      })
    case "InvalidArgument":
      return new FalkorError({
        reason: new InvalidArgument({
          graph,
          command,
          argument: undefined,
          detail: reason.message,
          serverMessage: undefined,
          cause: error
        })
      })
    default:
      return new FalkorError({ reason: new Connection({ graph, command, cause: error }) })
  }
}

/**
 * A `Decode` failure as a `FalkorError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeError = (
  detail: string,
  context: Where & { readonly row?: number | undefined; readonly column?: string | undefined; readonly cause?: unknown }
): FalkorError =>
  new FalkorError({
    reason: new Decode({
      graph: context.graph,
      command: context.command,
      row: context.row,
      column: context.column,
      detail,
      cause: context.cause
    })
  })
