/**
 * `executeStreamed` for any service: its own when it has one, else the parts of the whole
 * reply from `execute` (the same parts, only after the whole reply).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RedisConnection, ReplyPart, StreamOptions } from "../RedisConnection.ts"
import type { RedisError } from "../RedisError.ts"

/** The parts of a whole reply, as a streamed reply of `depth` levels would hand them over. */
const partsOf = (reply: Reply, depth: number): Array<ReplyPart> => {
  const out: Array<ReplyPart> = []
  const walk = (value: Reply, level: number): void => {
    if (level < depth && Array.isArray(value) && value.length > 0) {
      out.push({ _tag: "Open", depth: level, length: value.length })
      for (const item of value) walk(item, level + 1)
      out.push({ _tag: "Close", depth: level })
    } else out.push({ _tag: "Value", depth: level, value })
  }
  walk(reply, 0)
  return out
}

/** The parts of the reply `whole` gives, handed over once it is complete. */
export const fromWhole = (
  whole: Effect.Effect<Reply, RedisError>,
  options: StreamOptions | undefined
): Stream.Stream<ReplyPart, RedisError> =>
  Stream.flatMap(Stream.fromEffect(whole), (reply) => Stream.fromIterable(partsOf(reply, options?.depth ?? 2)))

/** Streams `command`'s reply on `connection` (see `RedisConnection.executeStreamed`). */
export const executeStreamed = (
  connection: {
    readonly execute: RedisConnection["Service"]["execute"]
    readonly executeStreamed?: RedisConnection["Service"]["executeStreamed"] | undefined
  },
  command: Command,
  options?: StreamOptions
): Stream.Stream<ReplyPart, RedisError> =>
  connection.executeStreamed !== undefined
    ? connection.executeStreamed(command, options)
    : fromWhole(connection.execute(command, options), options)
