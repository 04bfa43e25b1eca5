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
 *   const names = yield* RedisConnection.executeAs(ReplySchema.NullableTextArray, ["MGET", "a", "b"])
 *   const price = yield* RedisConnection.executeAs(ReplySchema.NumberFromText, ["HGET", "item:1", "price"])
 *   const user = yield* RedisConnection.executeAs(ReplySchema.Hash, ["HGETALL", "user:1"]) // RESP2 and RESP3
 *   const scores = yield* RedisConnection.executeAs(ReplySchema.HashOf(ReplySchema.NumberFromText), ["HGETALL", "scores"])
 *   return { greeting, visits, names, price, user, scores }
 * })
 * ```
 *
 * @since 0.1.0
 */
import { MapReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
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

/**
 * An array reply of strings as text: `KEYS`, `SMEMBERS` (RESP2), `LRANGE`, `HKEYS` …
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextArray = Schema.Array(Text)

/**
 * An array reply of strings or nulls as text: `MGET`, `HMGET`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NullableTextArray = Schema.Array(NullableText)

/** Text a number reply spells, as Redis writes it (`inf`, `-inf`, `nan` included). */
const parseNumber = (text: string): number | undefined => {
  const trimmed = text.trim().toLowerCase()
  if (trimmed === "inf" || trimmed === "+inf" || trimmed === "infinity") return Number.POSITIVE_INFINITY
  if (trimmed === "-inf" || trimmed === "-infinity") return Number.NEGATIVE_INFINITY
  if (trimmed === "nan") return Number.NaN
  if (trimmed === "" || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(trimmed)) return undefined
  return Number(trimmed)
}

const invalid = (
  expected: string,
  input: unknown,
  options: Parameters<Parameters<typeof SchemaGetter.transformEffect>[0]>[1]
) => Effect.fail(new SchemaIssue.InvalidValue({ expected }, input, options))

/**
 * A number from a number reply (integer or double) or from a string reply that spells one:
 * `INCRBYFLOAT`, `ZSCORE` and `ZINCRBY` on RESP2, `HGET` of a counter, `GET` of a number.
 * `inf`, `-inf` and `nan` as Redis writes them; other text fails.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NumberFromText = Schema.Unknown.pipe(
  Schema.decodeTo(Schema.Number, {
    decode: SchemaGetter.transformEffect((reply: unknown, options) => {
      if (typeof reply === "number") return Effect.succeed(reply)
      if (typeof reply === "bigint") return Effect.succeed(Number(reply))
      const text = typeof reply === "string" || reply instanceof Uint8Array ? replyToString(reply) : undefined
      const parsed = text === undefined ? undefined : parseNumber(text)
      return parsed === undefined
        ? invalid("a number, or text that spells one", reply, options)
        : Effect.succeed(parsed)
    }),
    encode: SchemaGetter.transform((n: number) => String(n))
  })
)

/**
 * An integer of any size as `bigint`, from an integer reply or a string reply that spells one
 * (`GET` of a counter, `HGET`, `XADD`-style ids' parts); other text fails.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BigIntegerFromText = Schema.Unknown.pipe(
  Schema.decodeTo(Schema.BigInt, {
    decode: SchemaGetter.transformEffect((reply: unknown, options) => {
      if (typeof reply === "bigint") return Effect.succeed(reply)
      if (typeof reply === "number" && Number.isSafeInteger(reply)) return Effect.succeed(BigInt(reply))
      const text = typeof reply === "string" || reply instanceof Uint8Array ? replyToString(reply) : undefined
      return text !== undefined && /^[+-]?\d+$/.test(text.trim())
        ? Effect.succeed(BigInt(text.trim()))
        : invalid("an integer, or text that spells one", reply, options)
    }),
    encode: SchemaGetter.transform((n: bigint) => String(n))
  })
)

/** The field/value pairs of a hash reply: a RESP3 map, or a RESP2 flat array of even length. */
const hashPairs = (reply: unknown): ReadonlyArray<readonly [Reply, Reply]> | undefined => {
  if (reply instanceof MapReply) return reply.entries()
  if (!Array.isArray(reply) || reply.length % 2 !== 0) return undefined
  const pairs: Array<readonly [Reply, Reply]> = []
  for (let i = 0; i < reply.length; i += 2) pairs.push([reply[i] as Reply, reply[i + 1] as Reply])
  return pairs
}

/**
 * A hash reply (`HGETALL`, `CONFIG GET`, `HRANDFIELD … WITHVALUES`) as a record of field →
 * value with each value decoded by `value`: a RESP3 map and a RESP2 flat `[field, value, …]`
 * array alike. Fields are read as text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HashOf = <S extends Schema.Top>(value: S) =>
  Schema.Unknown.pipe(
    Schema.decodeTo(Schema.Record(Schema.String, Schema.Unknown), {
      decode: SchemaGetter.transformEffect((reply: unknown, options) => {
        const pairs = hashPairs(reply)
        if (pairs === undefined) return invalid("a hash: a map, or an array of field and value pairs", reply, options)
        const record: Record<string, unknown> = {}
        for (const [field, fieldValue] of pairs) {
          const name = replyToString(field)
          if (name === undefined) return invalid("text fields", reply, options)
          record[name] = fieldValue
        }
        return Effect.succeed(record)
      }),
      encode: SchemaGetter.transform((record: Record<string, unknown>) => Object.entries(record).flat())
    }),
    Schema.decodeTo(Schema.Record(Schema.String, value))
  )

/**
 * A hash reply as a record of field → text: `HGETALL` on RESP2 and RESP3.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Hash = HashOf(Text)
