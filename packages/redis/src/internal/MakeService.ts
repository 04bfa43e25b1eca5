/**
 * `RedisConnection.makeService`: a service from its parts, `executeAs` derived from `execute`
 * and streaming falling back to the whole reply. Here, not in `RedisConnection.ts`, so the
 * strategies that build services import it without a cycle.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RedisConnection, ServiceParts } from "../RedisConnection.ts"
import { Decode, RedisError } from "../RedisError.ts"
import { commandName } from "./CommandValidation.ts"
import { describeReply } from "./ReplyText.ts"
import { fromWhole } from "./Streamed.ts"

type Service = RedisConnection["Service"]

/** `execute` then the schema: a refused reply is reason `Decode`, described as the reply. */
const executeAsWith =
  (execute: Service["execute"]): Service["executeAs"] =>
  (schema, command, options) =>
    Effect.flatMap(execute(command, options), (reply) =>
      Effect.mapError(
        Schema.decodeUnknownEffect(schema)(reply),
        (cause) =>
          new RedisError({
            reason: new Decode({
              command: commandName(command),
              message: `${commandName(command)} replied ${describeReply(reply)}, which the schema does not accept: ${cause.message}`,
              cause
            })
          })
      )
    )

export const makeService = (parts: ServiceParts): Service => {
  const streamed = parts.executeStreamed
  return {
    ...parts,
    executeAs: executeAsWith(parts.execute),
    executeStreamed:
      streamed === undefined ? (command, options) => fromWhole(parts.execute(command, options), options) : streamed
  }
}
