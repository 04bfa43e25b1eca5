/**
 * The parts of a compact query reply `[header, rows, stats]` read as they arrive (depth 2, the
 * parts of `RedisConnection.executeStreamed` / a `ReplyFold`): the header is collected and
 * parsed when it closes, each row is handed to `row` as it completes, the statistics are
 * collected; the envelope is checked as for a whole reply (`parseHeader` when the header
 * arrives, `parseTrailer` or `parseEnvelope` at the end), so error shapes (version mismatch, a
 * legacy trailing error) fail the same way. A reply that arrives whole (not a non-empty array) is
 * parsed whole. Failures are thrown (`FalkorError`); subclasses say what a row becomes
 * (`RowStream`: kept until pulled; `ResultFold`: decoded at once).
 *
 * @internal
 */
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { Statistics } from "../Graph.ts"
import { Header } from "../Row.ts"
import { parseEnvelope, parseTrailer } from "./CompactReply.ts"
import type { HeaderCache } from "./HeaderCache.ts"

export abstract class EnvelopeParts {
  protected readonly graph: string
  protected readonly command: string
  private replyLength = -1
  private element = -1
  private collecting: Array<Reply> | undefined = undefined
  private readonly elements: Array<Reply> = []
  private inRows = false
  /** The header, once it has arrived. */
  protected header: Header | undefined = undefined
  /** The statistics, once the reply has ended. */
  statistics: Statistics | undefined = undefined
  /** The reply has ended. */
  ended = false

  /** The graph's recent headers (`GraphSchema.headers`). */
  private readonly headers: HeaderCache

  constructor(graph: string, command: string, headers: HeaderCache) {
    this.graph = graph
    this.command = command
    this.headers = headers
  }

  /** A row of the reply, complete, in order (the header is known). */
  protected abstract row(raw: Reply): void

  /** The reply began (an array reply opened, or a whole reply arrived). */
  protected begin(): void {}

  open(depth: number, length: number): void {
    if (depth === 0) {
      this.replyLength = length
      this.begin()
      return
    }
    this.element++
    if (this.replyLength === 3 && this.element === 1) this.inRows = true
    else this.collecting = []
  }

  value(depth: number, value: Reply): void {
    if (depth === 2) {
      if (this.inRows) this.row(value)
      else this.collecting!.push(value)
    } else if (depth === 1) {
      this.element++
      this.completed(value)
    } else this.whole(value)
  }

  close(depth: number): void {
    if (depth === 0) this.end()
    else if (this.inRows) this.inRows = false
    else {
      this.completed(this.collecting!)
      this.collecting = undefined
    }
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
      this.header = this.headers.read(value)
    }
  }

  /** A reply that arrived whole (not a non-empty array): checked like any whole reply. */
  private whole(reply: Reply): void {
    this.begin()
    const envelope = parseEnvelope(reply, this.graph, this.command)
    this.header = new Header(envelope.columns)
    for (let i = 0; i < envelope.rows.length; i++) this.row(envelope.rows[i]!)
    this.statistics = envelope.statistics
    this.ended = true
  }

  private end(): void {
    if (this.replyLength === 3) {
      // The header was read when it arrived (element 0 always completes first); only the
      // statistics are left to check.
      this.statistics = parseTrailer(this.elements[2]!, this.graph, this.command)
    } else {
      const envelope = parseEnvelope(this.elements, this.graph, this.command)
      this.header = new Header(envelope.columns)
      this.statistics = envelope.statistics
    }
    this.ended = true
  }
}
