/**
 * `executeFolded`: a reply folded as it is read (`RedisConnection.ReplyFold`). The engine side
 * is `ReplyFolder`, the decoder's sink for one command; a service without a folded path runs
 * `execute` and folds the whole reply.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import type { CommandOptions, RedisConnection, ReplyFold } from "../RedisConnection.ts"
import type { RedisError } from "../RedisError.ts"
import type { Request } from "./Request.ts"
import type { RequestSink, StreamHost } from "./ReplyStream.ts"

/** The outcome of a folded reply, as the request's reply (never seen by callers). */
export class FoldedReply {
  readonly value: unknown
  readonly defect: unknown
  readonly threw: boolean
  constructor(value: unknown, defect: unknown, threw: boolean) {
    this.value = value
    this.defect = defect
    this.threw = threw
  }
}

/**
 * The decoder's sink for a folded command: parts go to the fold; `close(0)` settles the
 * request with the fold's result. A fold that throws is not called again: the rest of the
 * reply is skipped and the command fails with the defect.
 */
export class ReplyFolder<A> implements RequestSink {
  readonly depth: number
  private readonly fold: ReplyFold<A>
  private readonly request: Request<Reply>
  private host: StreamHost | undefined = undefined
  private threw = false
  private defect: unknown = undefined

  constructor(request: Request<Reply>, fold: ReplyFold<A>) {
    this.fold = fold
    this.depth = fold.depth
    this.request = request
    request.sink = this
  }

  begin(host: StreamHost): void {
    this.host = host
  }

  open(depth: number, length: number): void {
    if (this.threw) return
    try {
      this.fold.open(depth, length)
    } catch (defect) {
      this.failed(defect)
    }
  }

  value(depth: number, value: Reply): void {
    if (this.threw) return
    try {
      this.fold.value(depth, value)
    } catch (defect) {
      this.failed(defect)
    }
  }

  close(depth: number): void {
    if (!this.threw) {
      try {
        this.fold.close(depth)
      } catch (defect) {
        this.failed(defect)
      }
    }
    if (depth !== 0) return
    let outcome: FoldedReply
    if (this.threw) outcome = new FoldedReply(undefined, this.defect, true)
    else {
      try {
        outcome = new FoldedReply(this.fold.result(), undefined, false)
      } catch (defect) {
        outcome = new FoldedReply(undefined, defect, true)
      }
    }
    this.host!.streamEnded(this, this.request, outcome as unknown as Reply)
  }

  /** The connection was lost mid-reply: the request fails with it; nothing more arrives. */
  fail(_error: RedisError): void {
    this.threw = true
  }

  private failed(defect: unknown): void {
    this.threw = true
    this.defect = defect
  }
}

/** Hands a whole reply to `fold` as a folded read would have, then asks its result. */
export const foldWhole = <A>(reply: Reply, fold: ReplyFold<A>): A => {
  const depth = fold.depth
  const walk = (value: Reply, level: number): void => {
    if (level < depth && Array.isArray(value) && value.length > 0) {
      fold.open(level, value.length)
      for (let i = 0; i < value.length; i++) walk(value[i]!, level + 1)
      fold.close(level)
    } else fold.value(level, value)
  }
  walk(reply, 0)
  return fold.result()
}

/** The caller's value from a folded request's reply: the fold's result, or the whole reply folded. */
export const unfold = <A>(reply: Reply, fold: ReplyFold<A>): Effect.Effect<A> => {
  if (reply instanceof FoldedReply) {
    return reply.threw ? Effect.die(reply.defect) : Effect.succeed(reply.value as A)
  }
  // Not an array (or an empty one): it came whole.
  return Effect.sync(() => foldWhole(reply, fold))
}

/** `executeFolded` on any service: its own when it has one, else `execute` and the whole reply folded. */
export const executeFolded = <A>(
  connection: Pick<RedisConnection["Service"], "execute" | "executeFolded">,
  command: Command,
  fold: () => ReplyFold<A>,
  options: CommandOptions | undefined
): Effect.Effect<A, RedisError> => {
  const folded = connection.executeFolded
  if (folded !== undefined) return folded(command, fold, options)
  return Effect.flatMap(connection.execute(command, options), (reply) => Effect.sync(() => foldWhole(reply, fold())))
}
