/**
 * A query's whole result folded off the wire (`RedisConnection.executeFolded`, depth 2):
 * every row is decoded as its bytes arrive, so a large reply's tree is never held beside its
 * decoded rows; each row's raw cells die young instead of the whole tree being kept until
 * the last row is read. (200,000 nodes: peak memory about a third and less CPU than a whole
 * reply decoded after it arrived; see the graph-large benchmark.)
 *
 * The reply `[header, rows, stats]` arrives as: the header (collected, parsed when it
 * closes), each row (decoded at once), the statistics (collected); the envelope is checked at
 * the end exactly as for a whole reply (`parseEnvelope` on the header and statistics), so
 * error shapes fail the same way. A row naming an id the schema cache does not know is kept
 * undecoded, with every row after it, for the caller to decode after a refresh (nothing
 * asynchronous may happen here: the calls are made while the socket's bytes are decoded), as
 * is every row of a reply whose server may not be the one the names were read from (a
 * changed primary: `current`).
 * Nothing is thrown: a failure is the result, and the rest of the reply is skipped.
 *
 * @internal
 */
import type { ReplyFold } from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { Statistics } from "../Graph.ts"
import { Header, Row } from "../Row.ts"
import { decodeRow, isSchemaMiss, parseEnvelope } from "./CompactReply.ts"
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
export class ResultFold implements ReplyFold<FoldedRows | FoldFailure> {
  readonly depth = 2
  private readonly schema: GraphSchema
  private readonly graph: string
  private readonly command: string
  private replyLength = -1
  private element = -1
  private collecting: Array<Reply> | undefined = undefined
  private readonly elements: Array<Reply> = []
  private inRows = false
  private header: Header | undefined = undefined
  private rows: Array<Row> = []
  private pending: Array<Reply> = []
  private statistics: Statistics | undefined = undefined
  private failure: FoldFailure | undefined = undefined

  /** Rows are decoded as they arrive only while the cached names are those of the replying server. */
  private eager = true
  private readonly current: (() => boolean) | undefined

  /**
   * `current`: whether the cached names are known to be the replying server's (a client that
   * follows a primary: after a failover they are re-validated first, so every row waits).
   */
  constructor(schema: GraphSchema, command: string, current?: () => boolean) {
    this.schema = schema
    this.graph = schema.graph
    this.command = command
    this.current = current
  }

  open(depth: number, length: number): void {
    if (this.failure !== undefined) return
    if (depth === 0) {
      this.replyLength = length
      if (this.current !== undefined) this.eager = this.current()
      return
    }
    this.element++
    if (this.replyLength === 3 && this.element === 1) this.inRows = true
    else this.collecting = []
  }

  value(depth: number, value: Reply): void {
    if (this.failure !== undefined) return
    try {
      if (depth === 2) {
        if (this.inRows) this.row(value)
        else this.collecting!.push(value)
      } else if (depth === 1) {
        this.element++
        this.completed(value)
      } else this.whole(value)
    } catch (e) {
      this.failure = new FoldFailure(e)
    }
  }

  close(depth: number): void {
    if (this.failure !== undefined) return
    try {
      if (depth === 0) this.end()
      else if (this.inRows) this.inRows = false
      else {
        this.completed(this.collecting!)
        this.collecting = undefined
      }
    } catch (e) {
      this.failure = new FoldFailure(e)
    }
  }

  result(): FoldedRows | FoldFailure {
    if (this.failure !== undefined) return this.failure
    return { header: this.header!, rows: this.rows, pending: this.pending, statistics: this.statistics! }
  }

  /** An element of the reply, complete. */
  private completed(value: Reply): void {
    if (this.replyLength === 3 && this.element === 1) {
      // The rows arrived whole (none: `*0`).
      if (Array.isArray(value)) for (let i = 0; i < value.length; i++) this.row(value[i]!)
      return
    }
    this.elements[this.element] = value
    if (this.replyLength === 3 && this.element === 0) {
      this.header = new Header(parseEnvelope([value, [], []], this.graph, this.command).columns)
    }
  }

  /** A reply that arrived whole (not a non-empty array): checked like any whole reply. */
  private whole(reply: Reply): void {
    if (this.current !== undefined) this.eager = this.current()
    const envelope = parseEnvelope(reply, this.graph, this.command)
    this.header = new Header(envelope.columns)
    for (let i = 0; i < envelope.rows.length; i++) this.row(envelope.rows[i]!)
    this.statistics = envelope.statistics
  }

  private end(): void {
    const skeleton = this.replyLength === 3 ? [this.elements[0]!, [], this.elements[2]!] : this.elements
    const envelope = parseEnvelope(skeleton, this.graph, this.command)
    this.header ??= new Header(envelope.columns)
    this.statistics = envelope.statistics
  }

  private row(raw: Reply): void {
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
