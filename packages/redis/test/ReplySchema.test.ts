/**
 * Typed plain-Redis results: `executeAs` with the `ReplySchema` shapes, against a real
 * redis-server (RESP2 and RESP3).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
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
      assert.include(error.message, 'GET replied the bulk string "abc", which the schema does not accept')
      // A server error stays a Reply, not a Decode.
      const refused = yield* Effect.flip(
        RedisConnection.executeAs(ReplySchema.Integer, ["INCR", "not-a-number"]).pipe(
          Effect.provideService(RedisConnection.RedisConnection, redis)
        )
      )
      assert.strictEqual(refused.reason._tag, "Reply")
    })
  )

  for (const protocol of [2, 3] as const) {
    it.effect(`RESP${protocol}: executeAs on the connection; hashes as records, numbers from text, text arrays`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.EmbeddedServer
        const redis = yield* RedisConnection.makeSingle({ url: server.url, protocol })
        const key = `shapes-${protocol}`
        yield* redis.execute(["HSET", `${key}:user`, "name", "Ada", "born", "1815", "score", "2.5"])
        // HGETALL is a flat array on RESP2 and a map on RESP3: the same record either way.
        const user: Readonly<Record<string, string>> = yield* redis.executeAs(ReplySchema.Hash, [
          "HGETALL",
          `${key}:user`
        ])
        assert.deepStrictEqual(user, { name: "Ada", born: "1815", score: "2.5" })
        assert.deepStrictEqual(yield* redis.executeAs(ReplySchema.Hash, ["HGETALL", `${key}:none`]), {})
        yield* redis.execute(["HSET", `${key}:scores`, "a", "1", "b", "-2.5", "c", "inf"])
        const scores = yield* redis.executeAs(ReplySchema.HashOf(ReplySchema.NumberFromText), [
          "HGETALL",
          `${key}:scores`
        ])
        assert.deepStrictEqual(scores, { a: 1, b: -2.5, c: Number.POSITIVE_INFINITY })
        // ZSCORE: bulk text on RESP2, a double on RESP3.
        yield* redis.execute(["ZADD", `${key}:z`, "1.25", "m"])
        assert.strictEqual(yield* redis.executeAs(ReplySchema.NumberFromText, ["ZSCORE", `${key}:z`, "m"]), 1.25)
        assert.strictEqual(yield* redis.executeAs(ReplySchema.NumberFromText, ["INCRBYFLOAT", `${key}:f`, "0.5"]), 0.5)
        yield* redis.execute(["SET", `${key}:big`, "9007199254740993"])
        assert.strictEqual(
          yield* redis.executeAs(ReplySchema.BigIntegerFromText, ["GET", `${key}:big`]),
          9007199254740993n
        )
        assert.strictEqual(
          yield* redis.executeAs(ReplySchema.BigIntegerFromText, ["INCRBY", `${key}:big`, "1"]),
          9007199254740994n
        )
        yield* redis.execute(["RPUSH", `${key}:l`, "x", "y"])
        assert.deepStrictEqual(yield* redis.executeAs(ReplySchema.TextArray, ["LRANGE", `${key}:l`, "0", "-1"]), [
          "x",
          "y"
        ])
        assert.deepStrictEqual(
          yield* redis.executeAs(ReplySchema.NullableTextArray, ["HMGET", `${key}:user`, "name", "nope"]),
          ["Ada", null]
        )
        // A refused reply is described as a reply, on either protocol.
        const notNumber = yield* Effect.flip(
          redis.executeAs(ReplySchema.HashOf(ReplySchema.NumberFromText), ["HGETALL", `${key}:user`])
        )
        assert.deepInclude(notNumber.reason, { _tag: "Decode", command: "HGETALL" })
        assert.include(
          notNumber.message,
          protocol === 2 ? "HGETALL replied an array of 6 elements" : "HGETALL replied a map of 3 entries"
        )
        assert.include(notNumber.message, "a number, or text that spells one")
        const notHash = yield* Effect.flip(redis.executeAs(ReplySchema.Hash, ["LRANGE", `${key}:l`, "0", "0"]))
        assert.include(notHash.message, "LRANGE replied an array of 1 element, which the schema does not accept")
        // Streaming is a method too.
        const parts = yield* Stream.runCollect(redis.executeStreamed(["LRANGE", `${key}:l`, "0", "-1"], { depth: 1 }))
        assert.deepStrictEqual(parts.filter((part) => part._tag === "Value").length, 2)
      })
    )
  }
})
