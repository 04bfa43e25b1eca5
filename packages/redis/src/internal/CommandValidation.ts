/**
 * Command names for messages and the argument check every face runs before admission, so
 * an argument that cannot be encoded is refused with a typed error and never reaches the
 * writer (where it would fail a whole write).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { InvalidArgument, RedisError } from "../RedisError.ts"
import { argumentText } from "./Text.ts"

/** The command name for messages: `GET`, `GRAPH.QUERY`. */
export const commandName = (command: Command): string => {
  const name = command[0]
  return argumentText(name).toUpperCase()
}

/** Where a refused command sits in its batch, for the message (built only on a refusal). */
const batchPlace = (index: number | undefined): string =>
  index === undefined ? "" : ` (command ${index} of the batch)`

/** Checks arguments before admission, so an encoding failure never reaches the writer. */
export const validateCommand = (command: Command, index?: number): RedisError | undefined => {
  if (!Array.isArray(command) || command.length === 0) {
    return new RedisError({
      reason: new InvalidArgument({ message: `a command needs at least its name${batchPlace(index)}` })
    })
  }
  for (let i = 0; i < command.length; i++) {
    const argument: unknown = command[i]
    switch (typeof argument) {
      case "string":
      case "bigint":
        continue
      case "number":
        if (Number.isFinite(argument)) continue
        return new RedisError({
          reason: new InvalidArgument({
            message: `argument ${i} of ${commandName(command)} is ${argument}, which cannot be sent${batchPlace(index)}`
          })
        })
      default:
        if (argument instanceof Uint8Array) continue
        return new RedisError({
          reason: new InvalidArgument({
            message: `argument ${i} of ${commandName(command)} has type ${argument === null ? "null" : typeof argument}; expected string, number, bigint or Uint8Array${batchPlace(index)}`
          })
        })
    }
  }
  return undefined
}
