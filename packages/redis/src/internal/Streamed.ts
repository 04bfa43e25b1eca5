/**
 * `executeStreamed` for any service: its own when it has one, else the parts of the whole
 * reply from `execute` (the same parts, only after the whole reply).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
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

/** Streams `command`'s reply on `connection` (see `RedisConnection.executeStreamed`). */
export const executeStreamed = (
  connection: RedisConnection["Service"],
  command: Command,
  options?: StreamOptions
): Stream.Stream<ReplyPart, RedisError> =>
  connection.executeStreamed !== undefined
    ? connection.executeStreamed(command, options)
    : Stream.flatMap(Stream.fromEffect(connection.execute(command, options)), (reply) =>
        Stream.fromIterable(partsOf(reply, options?.depth ?? 2))
      )
