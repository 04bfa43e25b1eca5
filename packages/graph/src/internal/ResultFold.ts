/**
 * A query's whole result folded off the wire (`RedisConnection.executeFolded`, depth 2):
 * every row is decoded as its bytes arrive, so a large reply's tree is never held beside its
 * decoded rows; each row's raw cells die young instead of the whole tree being kept until
 * the last row is read. (200,000 nodes: peak memory about a third and less CPU than a whole
 * reply decoded after it arrived; see the graph-large benchmark.)
 *
 * The reply's parts are read by `EnvelopeParts` (the header, each row, the statistics; the
 * envelope checked at the end as for a whole reply). A row naming an id the schema cache does
 * not know is kept undecoded, with every row after it, for the caller to decode after a
 * refresh (nothing asynchronous may happen here: the calls are made while the socket's bytes
 * are decoded), as is every row of a reply whose server may not be the one the names were
 * read from (a changed primary: `current`). Nothing is thrown: a failure is the result, and
 * the rest of the reply is skipped.
 *
 * @internal
 */
import type { ReplyFold } from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { Statistics } from "../Graph.ts"
import { type Header, Row } from "../Row.ts"
import { decodeRow, isSchemaMiss } from "./CompactReply.ts"
import { EnvelopeParts } from "./EnvelopeParts.ts"
import type { GraphSchema } from "./SchemaCache.ts"

/** What the fold built: the rows decoded, and those left undecoded after a schema miss. */
export interface FoldedRows {
  readonly header: Header
  readonly rows: Array<Row>
  /** Rows from the first one naming an unknown id on, undecoded and in order. */
  readonly pending: Array<Reply>
  readonly statistics: Statistics
}

/** A failure while folding: what was thrown, to be placed on the graph and command. */
export class FoldFailure {
  readonly cause: unknown
  constructor(cause: unknown) {
    this.cause = cause
  }
}

/** The fold of one query reply (see the module header). */
export class ResultFold extends EnvelopeParts implements ReplyFold<FoldedRows | FoldFailure> {
  readonly depth = 2
  private readonly schema: GraphSchema
  private readonly current: (() => boolean) | undefined
  /** Rows are decoded as they arrive only while the cached names are those of the replying server. */
  private eager = true
  private readonly rows: Array<Row> = []
  private readonly pending: Array<Reply> = []
  private failure: FoldFailure | undefined = undefined

  /**
   * `current`: whether the cached names are known to be the replying server's (a client that
   * follows a primary: after a failover they are re-validated first, so every row waits).
   */
  constructor(schema: GraphSchema, command: string, current?: () => boolean) {
    super(schema.graph, command, schema.headers)
    this.schema = schema
    this.current = current
  }

  override open(depth: number, length: number): void {
    if (this.failure !== undefined) return
    try {
      super.open(depth, length)
    } catch (e) {
      this.failure = new FoldFailure(e)
    }
  }

  override value(depth: number, value: Reply): void {
    if (this.failure !== undefined) return
    try {
      super.value(depth, value)
    } catch (e) {
      this.failure = new FoldFailure(e)
    }
  }

  override close(depth: number): void {
    if (this.failure !== undefined) return
    try {
      super.close(depth)
    } catch (e) {
      this.failure = new FoldFailure(e)
    }
  }

  result(): FoldedRows | FoldFailure {
    if (this.failure !== undefined) return this.failure
    return { header: this.header!, rows: this.rows, pending: this.pending, statistics: this.statistics! }
  }

  protected override begin(): void {
    if (this.current !== undefined) this.eager = this.current()
  }

  protected row(raw: Reply): void {
    if (this.pending.length > 0 || !this.eager) {
      this.pending.push(raw)
      return
    }
    const header = this.header!
    const values = decodeRow(raw, this.rows.length, header.columns, this.schema.lookup)
    if (isSchemaMiss(values)) this.pending.push(raw)
    else this.rows.push(new Row(header, values))
  }
}
