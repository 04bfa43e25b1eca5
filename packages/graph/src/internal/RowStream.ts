/**
 * Rows decoded off the wire: the parts of a streamed compact reply (`RedisConnection`'s
 * `executeStreamed`, depth 2) turned into `Row`s as they arrive, so row 0 is handed out
 * before the reply ends and the whole reply is never held.
 *
 * The reply's parts are read by `EnvelopeParts` (the header, each row, the statistics; the
 * envelope checked at the end as for a whole reply); each row waits here until pulled.
 *
 * Rows are decoded when pulled, `chunkSize` at a time, so rows after the ones taken are never
 * decoded; the stream reads on only when the rows received so far are handed out. A row
 * that names a label, type or property id the schema cache does not know starts one shared
 * refresh (`GraphSchema.ensure`) on a fiber of its own, and that row and every later one
 * wait, undecoded and in order, until it returns. Meanwhile the stream stops taking parts
 * so the rows held stay bounded on a cold schema as on a warm one:
 * - the refresh travels on another connection (several engines, a pool of two or more; on a
 *   client with one shared socket or a pool of one, a connection of its own:
 *   `ensure(…, aside)`), and the
 *   streamed reply's connection stops reading once `highWaterMark` bytes wait (the engine's
 *   backpressure), resuming when the refresh has returned;
 * - should the refresh still queue behind this very reply (every engine busy, or a shared
 *   refresh another caller started), the engine never pauses a reply others wait behind:
 *   it reads on into the stream's buffer, bounded by `maxBuffered` (past it: a typed
 *   `StreamOverflow`), until the refresh's reply arrives behind it. Nothing deadlocks.
 *
 * @internal
 */
import type { ReplyPart } from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type { FalkorError } from "../FalkorError.ts"
import { Row } from "../Row.ts"
import type { Statistics } from "../Graph.ts"
import { decodeRow, isSchemaMiss, type SchemaMiss } from "./CompactReply.ts"
import { EnvelopeParts } from "./EnvelopeParts.ts"
import { placed } from "./QueryPath.ts"
import type { GraphSchema } from "./SchemaCache.ts"

/** Counters of one run, for tests and the span. */
export interface RowStreamStats {
  /** Rows handed out. */
  rows: number
  /** Rows received and not yet decoded (not pulled yet, or waiting for a schema refresh); the most at once. */
  peakWaiting: number
  /** The statistics, once the reply ended. */
  statistics: Statistics | undefined
}

class Decoder extends EnvelopeParts {
  /** Rows received, decoded when pulled (`take`), from `rawHead` on. */
  private raw: Array<Reply> = []
  private rawHead = 0
  private rowIndex = 0
  refresh: Deferred.Deferred<void, FalkorError> | undefined = undefined
  readonly stats: RowStreamStats = { rows: 0, peakWaiting: 0, statistics: undefined }
  private readonly schema: GraphSchema
  constructor(schema: GraphSchema, command: string) {
    super(schema.graph, command, schema.headers)
    this.schema = schema
  }

  /** Takes one chunk of parts; throws `FalkorError` for a malformed or failed reply. */
  parts(parts: ReadonlyArray<ReplyPart>): void {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part._tag === "Value") this.value(part.depth, part.value)
      else if (part._tag === "Open") this.open(part.depth, part.length)
      else this.close(part.depth)
    }
    if (this.ended) this.stats.statistics = this.statistics
  }

  protected row(raw: Reply): void {
    this.raw.push(raw)
    const waiting = this.raw.length - this.rawHead
    if (waiting > this.stats.peakWaiting) this.stats.peakWaiting = waiting
  }

  /**
   * One refresh, to run on a fiber of its own (`toStart`, forked by the pull): reading goes
   * on while it runs (see the module header).
   */
  private startRefresh(miss: SchemaMiss, missSeq: number): void {
    const done = Deferred.makeUnsafe<void, FalkorError>()
    this.refresh = done
    this.toStart = Effect.exit(this.schema.ensure(miss.kind, miss.id, missSeq, true)).pipe(
      Effect.flatMap((exit) => Deferred.done(done, exit))
    )
  }

  /** A refresh to fork. */
  toStart: Effect.Effect<unknown> | undefined = undefined

  /** The refresh returned: decoding goes on (a failure fails the stream). */
  settleRefresh(exit: Exit.Exit<void, FalkorError>): void {
    this.refresh = undefined
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
  }

  /** Rows received and not decoded yet. */
  get pending(): number {
    return this.raw.length - this.rawHead
  }

  /** Decodes up to `limit` waiting rows, stopping at an unknown id (a refresh starts). */
  take(limit: number): Array<Row> {
    const out: Array<Row> = []
    if (this.refresh !== undefined) return out
    const raw = this.raw
    const header = this.header!
    while (this.rawHead < raw.length && out.length < limit) {
      const missSeq = this.schema.now
      const values = decodeRow(raw[this.rawHead]!, this.rowIndex, header.columns, this.schema.lookup)
      if (isSchemaMiss(values)) {
        this.startRefresh(values, missSeq)
        break
      }
      raw[this.rawHead++] = null
      out.push(new Row(header, values))
      this.rowIndex++
    }
    if (this.rawHead === raw.length) {
      this.raw = []
      this.rawHead = 0
    }
    this.stats.rows += out.length
    return out
  }
}

/**
 * The rows of a streamed compact reply. `onEnd` gets the counters once the reply has ended.
 */
export const rows = (
  parts: Stream.Stream<ReplyPart, FalkorError>,
  schema: GraphSchema,
  command: string,
  chunkSize: number,
  onEnd?: (stats: RowStreamStats) => Effect.Effect<void>
): Stream.Stream<Row, FalkorError> =>
  Stream.transformPull(parts, (upstream, scope) =>
    Effect.sync(() => {
      const decoder = new Decoder(schema, command)
      let upstreamDone = false
      const fail = (e: unknown) => Effect.fail(placed(e, schema.graph, command))
      const settle = (exit: Exit.Exit<void, FalkorError>) => {
        try {
          decoder.settleRefresh(exit)
        } catch (e) {
          return fail(e)
        }
        return step
      }
      const step: Effect.Effect<Arr.NonEmptyReadonlyArray<Row>, FalkorError | Cause.Done> = Effect.suspend(() => {
        const start = decoder.toStart
        if (start !== undefined) {
          decoder.toStart = undefined
          return Effect.andThen(Effect.forkIn(start, scope), step)
        }
        const refresh = decoder.refresh
        if (refresh !== undefined) {
          // Reading waits for the refresh (the module header says why nothing deadlocks).
          return Effect.flatMap(Effect.exit(Deferred.await(refresh)), settle)
        }
        let ready: Array<Row>
        try {
          ready = decoder.take(chunkSize)
        } catch (e) {
          return fail(e)
        }
        if (ready.length > 0) return Effect.succeed(ready as unknown as Arr.NonEmptyReadonlyArray<Row>)
        if (decoder.toStart !== undefined) return step
        if (upstreamDone) {
          const end = onEnd === undefined ? Effect.void : onEnd(decoder.stats)
          return Effect.andThen(end, Cause.done())
        }
        return Effect.matchCauseEffect(upstream, {
          onFailure: (cause) => {
            if (!Pull.isDoneCause(cause)) return Effect.failCause(cause as Cause.Cause<FalkorError>)
            upstreamDone = true
            return step
          },
          onSuccess: (parts) => {
            try {
              decoder.parts(parts)
            } catch (e) {
              return fail(e)
            }
            return step
          }
        })
      })
      return step
    })
  )
