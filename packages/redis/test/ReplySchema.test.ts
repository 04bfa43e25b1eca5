/**
 * Typed plain-Redis results: `executeAs` with the `ReplySchema` shapes, against a real
 * redis-server (RESP2 and RESP3).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as ReplySchema from "../src/ReplySchema.ts"

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("ReplySchema", (it) => {
  for (const protocol of [2, 3] as const) {
    it.effect(`RESP${protocol}: GET as string | null, INCR as a number, MGET as an array, SET as "OK"`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        const redis = yield* RedisConnection.makeSingle({ url: server.url, protocol })
        const run = <S extends Schema.Top>(schema: S, command: ReadonlyArray<string | number>) =>
          RedisConnection.executeAs(schema, command).pipe(Effect.provideService(RedisConnection.RedisConnection, redis))
        const key = `typed-${protocol}`
        const ok: "OK" = yield* run(ReplySchema.Ok, ["SET", key, "\uFEFFhéllo"])
        assert.strictEqual(ok, "OK")
        const text: string | null = yield* run(ReplySchema.NullableText, ["GET", key])
        assert.strictEqual(text, "\uFEFFhéllo")
        assert.isNull(yield* run(ReplySchema.NullableText, ["GET", `${key}-missing`]))
        const count: number = yield* run(ReplySchema.Integer, ["INCR", `${key}-n`])
        assert.strictEqual(count, 1)
        assert.strictEqual(yield* run(ReplySchema.BigInteger, ["INCRBY", `${key}-n`, 41]), 42n)
        const both = yield* run(Schema.Array(ReplySchema.NullableText), ["MGET", key, `${key}-missing`])
        assert.deepStrictEqual(both, ["\uFEFFhéllo", null])
        const bytes = yield* run(ReplySchema.Bytes, ["GET", key])
        assert.instanceOf(bytes, Uint8Array)
      })
    )
  }

  it.effect("a reply of another shape fails with reason Decode, naming the command", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.EmbeddedServer
      const redis = yield* RedisConnection.makeSingle({ url: server.url })
      yield* redis.execute(["SET", "not-a-number", "abc"])
      const error = yield* Effect.flip(
        RedisConnection.executeAs(ReplySchema.Integer, ["GET", "not-a-number"]).pipe(
          Effect.provideService(RedisConnection.RedisConnection, redis)
        )
      )
      assert.strictEqual(error.reason._tag, "Decode")
      if (error.reason._tag !== "Decode") return
      assert.strictEqual(error.reason.command, "GET")
      assert.isTrue(error.written)
      assert.include(error.message, "GET replied a value the schema does not accept")
      // A server error stays a Reply, not a Decode.
      const refused = yield* Effect.flip(
        RedisConnection.executeAs(ReplySchema.Integer, ["INCR", "not-a-number"]).pipe(
          Effect.provideService(RedisConnection.RedisConnection, redis)
        )
      )
      assert.strictEqual(refused.reason._tag, "Reply")
    })
  )
})
