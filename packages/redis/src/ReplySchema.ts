/**
 * Schemas that read plain replies as the values a command means, for
 * `RedisConnection.executeAs`: `GET` as `string | null`, `INCR` as a number, `MGET` as an
 * array of nullable strings. A reply of another shape fails with reason `Decode`.
 *
 * Replies are plain values (`@effect-falkordb/resp/Reply`): simple strings are `string`,
 * bulk strings `Uint8Array`, integers `number` (`bigint` beyond the safe range). These
 * schemas decode from those; any `effect/Schema` that accepts them works as well.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
 * import { Effect, Schema } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const greeting = yield* RedisConnection.executeAs(ReplySchema.NullableText, ["GET", "greeting"]) // string | null
 *   const visits = yield* RedisConnection.executeAs(ReplySchema.Integer, ["INCR", "visits"]) // number
 *   const names = yield* RedisConnection.executeAs(Schema.Array(ReplySchema.NullableText), ["MGET", "a", "b"])
 *   return { greeting, visits, names }
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { decodeUtf8 } from "@effect-falkordb/resp/Text"

const encoder = new TextEncoder()

/** A bulk string read as UTF-8 text (every code point kept, a leading U+FEFF included). */
const TextFromBytes = Schema.Uint8Array.pipe(
  Schema.decodeTo(Schema.String, {
    decode: SchemaGetter.transform(decodeUtf8),
    encode: SchemaGetter.transform((text: string) => encoder.encode(text))
  })
)

/**
 * A simple or bulk string reply as text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Text = Schema.Union([Schema.String, TextFromBytes])

/**
 * A string reply or `null` (a missing key): what `GET`, `HGET`, `LPOP` … answer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NullableText = Schema.NullOr(Text)

/**
 * An integer reply within the safe range: what `INCR`, `DEL`, `EXISTS`, `LLEN` … answer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Integer = Schema.Int

/**
 * An integer reply of any size: `number` replies widened to `bigint`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BigInteger = Schema.Union([
  Schema.BigInt,
  Schema.Int.pipe(
    Schema.decodeTo(Schema.BigInt, {
      decode: SchemaGetter.transform((n: number) => BigInt(n)),
      encode: SchemaGetter.transform((n: bigint) => Number(n))
    })
  )
])

/**
 * A bulk string reply as its bytes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Bytes = Schema.Uint8Array

/**
 * The `OK` status reply (`SET`, `MSET`, `FLUSHDB` …).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Ok = Schema.Literal("OK")
