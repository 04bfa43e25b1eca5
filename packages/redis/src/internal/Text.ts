/**
 * Command arguments as text for the engine's messages (command names, keys), through
 * `@effect-falkordb/resp/Text`'s `decodeUtf8` (a leading U+FEFF is part of the text).
 *
 * @internal
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"

/** A command argument (or any value) as text for messages. */
export const argumentText = (value: unknown): string =>
  typeof value === "string" ? value : value instanceof Uint8Array ? decodeUtf8(value) : String(value)
