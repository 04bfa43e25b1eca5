/**
 * The one error of loading data (`Ingest` into an existing graph, `BulkLoader` into a new
 * one), in the shape of `FalkorError`: a `LoadError` whose `reason` is one of the tagged
 * reason classes below, so `Effect.catchReason("LoadError", "UnknownEndpoint", …)` works.
 * Every reason says where (file or source, line, column, batch) and what was committed.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"
import type { FalkorError } from "./FalkorError.ts"

const TypeId = "~@effect-falkordb/graph/LoadError" as const
const ReasonTypeId = "~@effect-falkordb/graph/LoadError/Reason" as const

/** `file.csv:12` or `file.csv:12, column "age"`. */
const at = (source: string, line: number | undefined, column?: string | undefined): string =>
  `${source}${line === undefined ? "" : `:${line}`}${column === undefined ? "" : `, column ${JSON.stringify(column)}`}`

/** A record shown in a message: JSON, cut at 120 characters. */
const show = (value: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}` : v)) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}

/**
 * What a load had committed when it stopped.
 *
 * @since 0.1.0
 * @category models
 */
export interface Committed {
  /** Nodes the server confirmed created. */
  readonly nodes: number
  /** Relationships the server confirmed created. */
  readonly relationships: number
  /** `GRAPH.BULK` commands (or ingest batches) the server confirmed. */
  readonly commands: number
}

/**
 * An ingest batch failed with an error that does not say it never ran (so it was not
 * retried): the stream stops, naming the batch's first and last record.
 *
 * @since 0.1.0
 * @category reasons
 */
export class BatchFailed extends Data.TaggedError("BatchFailed")<{
  readonly graph: string
  /** The batch, counted from 0 in stream order. */
  readonly batch: number
  /** Position of the batch's first record in the stream, from 0. */
  readonly firstIndex: number
  /** Position of the batch's last record in the stream. */
  readonly lastIndex: number
  readonly first: unknown
  readonly last: unknown
  /** Records of the batches the server confirmed before the stream stopped. */
  readonly committedRecords: number
  /** The batch's error: its `written`/`stillRunning` says whether it may have run. */
  readonly cause: FalkorError
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `ingest into graph ${JSON.stringify(this.graph)}: batch ${this.batch} (records ${this.firstIndex}–${this.lastIndex}, first ${show(this.first)}, last ${show(this.last)}) failed: ${this.cause.message}; ${this.committedRecords} records were committed by earlier batches`
  }
  get hint(): string {
    return `${this.cause.hint}; the batch may have run in part or whole: make the query idempotent (MERGE) and resume from record ${this.firstIndex}`
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A row that cannot be read: a ragged row, an unterminated quote, a value that is not of its
 * column's type, a JSON line that does not parse.
 *
 * @since 0.1.0
 * @category reasons
 */
export class MalformedRow extends Data.TaggedError("MalformedRow")<{
  /** The file (or the source's name). */
  readonly source: string
  /** 1-based line where the row starts, when known. */
  readonly line: number | undefined
  readonly column: string | undefined
  readonly detail: string
  readonly cause?: unknown
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `malformed row at ${at(this.source, this.line, this.column)}: ${this.detail}`
  }
  get hint(): string {
    return "fix the row in the file (or declare the column's type)"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * Two nodes of one id space have the same key.
 *
 * @since 0.1.0
 * @category reasons
 */
export class DuplicateKey extends Data.TaggedError("DuplicateKey")<{
  readonly source: string
  readonly line: number | undefined
  readonly idSpace: string
  readonly key: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `duplicate node key ${JSON.stringify(this.key)} in id space ${JSON.stringify(this.idSpace)} at ${at(this.source, this.line)}`
  }
  get hint(): string {
    return "node keys must be unique per id space: remove the duplicate, or give the files separate id spaces"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A relationship names an endpoint whose key no node file loaded.
 *
 * @since 0.1.0
 * @category reasons
 */
export class UnknownEndpoint extends Data.TaggedError("UnknownEndpoint")<{
  readonly source: string
  readonly line: number | undefined
  /** The endpoint column (`from` or `to` side). */
  readonly column: string
  readonly idSpace: string
  readonly key: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `relationship at ${at(this.source, this.line, this.column)} refers to node ${JSON.stringify(this.key)}, which no node file of id space ${JSON.stringify(this.idSpace)} loaded`
  }
  get hint(): string {
    return "load the node first (node files are read before relationship files), or fix the key or the id space"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * Relationships whose endpoint nodes were loaded but are gone when their batch ran (deleted by
 * another client during an `IngestFiles.load`): the batch created fewer relationships than it
 * had rows, so those rows were not loaded.
 *
 * @since 0.1.0
 * @category reasons
 */
export class EndpointsGone extends Data.TaggedError("EndpointsGone")<{
  readonly source: string
  /** Relationship rows sent. */
  readonly rows: number
  /** Relationships the server created for them. */
  readonly created: number
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${this.rows - this.created} of the ${this.rows} relationships of ${this.source} were not created: an endpoint node loaded earlier in this load no longer exists`
  }
  get hint(): string {
    return "nodes were deleted while the load ran; do not delete nodes of the graph during a load (relationships find their endpoints by internal id, which FalkorDB reuses), then load again"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The graph (or another key of that name) already exists: `GRAPH.BULK` only builds new graphs.
 *
 * @since 0.1.0
 * @category reasons
 */
export class GraphExists extends Data.TaggedError("GraphExists")<{
  readonly graph: string
  readonly serverMessage: string | undefined
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `graph ${JSON.stringify(this.graph)} already exists${this.serverMessage === undefined ? "" : ` (${this.serverMessage})`}; the bulk loader only creates new graphs`
  }
  get hint(): string {
    return "load into a new name, delete the graph first, or add to it with Ingest (batched UNWIND queries)"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The server refused `GRAPH.BULK` itself (an unknown command, an ACL or a proxy that does not
 * pass it): nothing was loaded.
 *
 * @since 0.1.0
 * @category reasons
 */
export class BulkUnsupported extends Data.TaggedError("BulkUnsupported")<{
  readonly graph: string
  readonly serverMessage: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `the server refused GRAPH.BULK for graph ${JSON.stringify(this.graph)}: ${this.serverMessage}`
  }
  get hint(): string {
    return "load the same inputs through Cypher instead (batched UNWIND … CREATE queries, any server that runs Cypher): `IngestFiles.load`, or `effect-falkordb load --ingest` on the command line"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The load stopped part way, after the server had confirmed commands: the server failed a
 * command, the connection was lost, or a later row or input failed (`cause`, then a
 * `LoadErrorReason`). What the server confirmed is in `committed`; when `uncertain`, the last
 * command was sent and may also have run.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Interrupted extends Data.TaggedError("Interrupted")<{
  readonly graph: string
  readonly committed: Committed
  readonly uncertain: boolean
  readonly cause: FalkorError | LoadErrorReason
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const { commands, nodes, relationships } = this.committed
    return `load of graph ${JSON.stringify(this.graph)} stopped after ${commands} confirmed commands (GRAPH.BULK commands or ingest batches; ${nodes} nodes, ${relationships} relationships)${this.uncertain ? ", and the last command sent may also have run" : ""}: ${this.cause.message}`
  }
  get hint(): string {
    const partial = `the graph holds a partial load: delete it (GRAPH.DELETE ${JSON.stringify(this.graph)}, or \`effect-falkordb graphs delete\`) and run the load again`
    return isLoadErrorReason(this.cause) ? `${this.cause.hint}; ${partial}` : partial
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A value or row exceeds a limit (a row larger than the token size, a node key past the
 * id range), or the limits themselves are invalid.
 *
 * @since 0.1.0
 * @category reasons
 */
export class LimitExceeded extends Data.TaggedError("LimitExceeded")<{
  readonly source: string
  readonly line: number | undefined
  readonly detail: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${at(this.source, this.line)}: ${this.detail}`
  }
  get hint(): string {
    return "raise maxTokenSize / maxBufferSize (Redis caps a string at 512 MB and a command at 1 GB), or make the row smaller"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A source cannot be read (missing file, permission), or an option is invalid.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidSource extends Data.TaggedError("InvalidSource")<{
  readonly source: string
  readonly detail: string
  readonly cause?: unknown
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${this.source}: ${this.detail}`
  }
  get hint(): string {
    return "check the path, the header and the options of this source"
  }
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The reasons of a `LoadError`.
 *
 * @since 0.1.0
 * @category models
 */
export type LoadErrorReason =
  | BatchFailed
  | MalformedRow
  | DuplicateKey
  | UnknownEndpoint
  | EndpointsGone
  | GraphExists
  | BulkUnsupported
  | Interrupted
  | LimitExceeded
  | InvalidSource

/**
 * A failed load. `message`, `hint` and `isRetryable` come from the `reason`.
 *
 * @example
 * ```ts
 * import * as LoadError from "@effect-falkordb/graph/LoadError"
 * import { Effect } from "effect"
 *
 * const failed = Effect.fail(
 *   new LoadError.LoadError({
 *     reason: new LoadError.UnknownEndpoint({
 *       source: "knows.csv",
 *       line: 7,
 *       column: "to",
 *       idSpace: "Person",
 *       key: "p42"
 *     })
 *   })
 * )
 * const recovered = failed.pipe(
 *   Effect.catchReason("LoadError", "UnknownEndpoint", (reason) => Effect.succeed(reason.key))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class LoadError extends Data.TaggedError("LoadError")<{ readonly reason: LoadErrorReason }> {
  readonly [TypeId] = TypeId
  /** The reason, as the standard `cause` (printed beneath the error). */
  override readonly cause: LoadErrorReason = this.reason
  override get message(): string {
    return this.reason.message
  }
  /** What to do about it. */
  get hint(): string {
    return this.reason.hint
  }
  /** Always false: a load is never retried whole (ingest retries only batches that never ran). */
  get isRetryable(): boolean {
    return this.reason.isRetryable
  }
}

/**
 * True for a `LoadError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isLoadError = (u: unknown): u is LoadError => Predicate.hasProperty(u, TypeId)

/**
 * True for a `LoadErrorReason`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isLoadErrorReason = (u: unknown): u is LoadErrorReason => Predicate.hasProperty(u, ReasonTypeId)

/**
 * A reason wrapped as a `LoadError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (reason: LoadErrorReason): LoadError => new LoadError({ reason })
