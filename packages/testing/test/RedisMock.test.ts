import { Buffer } from "node:buffer"
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import * as RedisConnectionModule from "@effect-falkordb/redis/RedisConnection"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as RedisMock from "@effect-falkordb/testing/RedisMock"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"

const text = (reply: Reply): string => {
  assert.instanceOf(reply, Uint8Array)
  return Buffer.from(reply as Uint8Array).toString()
}
let counter = 0
const fresh = (label: string) => `suite:${label}:${process.pid}:${++counter}:${Date.now()}`

/**
 * The behaviour suite: the same assertions against the mock and against a real
 * redis-server through `RedisConnection.layerSingle`, so the mock's reply types and error
 * codes are checked against the real thing rather than against expectations of the mock.
 */
const suite = (name: string, connection: Layer.Layer<RedisConnection, unknown>) =>
  layer(connection, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    it.effect("SET answers a status, GET the bytes, a missing key null", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("str")
        assert.strictEqual(yield* redis.execute(["SET", key, "héllo"]), "OK")
        assert.strictEqual(text(yield* redis.execute(["GET", key])), "héllo")
        assert.strictEqual(yield* redis.execute(["GET", `${key}:missing`]), null)
        assert.strictEqual(yield* redis.execute(["TYPE", key]), "string")
        assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
        assert.strictEqual(text(yield* redis.execute(["ECHO", "hi"])), "hi")
        assert.strictEqual(yield* redis.execute(["EXISTS", key, `${key}:missing`]), 1)
        assert.strictEqual(yield* redis.execute(["DEL", key]), 1)
      })
    )

    it.effect("binary values and numeric arguments survive", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("bin")
        const value = new Uint8Array([0, 255, 13, 10, 128])
        yield* redis.execute(["SET", key, value])
        assert.deepStrictEqual([...((yield* redis.execute(["GET", key])) as Uint8Array)], [...value])
        yield* redis.execute(["SET", `${key}:n`, 42])
        assert.strictEqual(yield* redis.execute(["INCRBY", `${key}:n`, 8n]), 50)
      })
    )

    it.effect("integers, and error replies with their Redis codes", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("err")
        assert.strictEqual(yield* redis.execute(["INCR", `${key}:n`]), 1)
        yield* redis.execute(["SET", key, "not a number"])
        const notInteger = yield* Effect.flip(redis.execute(["INCR", key]))
        assert.strictEqual(notInteger.reason._tag, "Reply")
        assert.strictEqual(notInteger.reason._tag === "Reply" && notInteger.reason.code, "ERR")
        assert.strictEqual(
          notInteger.reason._tag === "Reply" && notInteger.reason.serverMessage,
          "ERR value is not an integer or out of range"
        )
        const wrongType = yield* Effect.flip(redis.execute(["LPUSH", key, "x"]))
        assert.strictEqual(wrongType.reason._tag === "Reply" && wrongType.reason.code, "WRONGTYPE")
        assert.strictEqual(
          wrongType.reason._tag === "Reply" && wrongType.reason.serverMessage,
          "WRONGTYPE Operation against a key holding the wrong kind of value"
        )
      })
    )

    it.effect("lists and hashes come back as arrays of bulk strings", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("agg")
        assert.strictEqual(yield* redis.execute(["RPUSH", `${key}:l`, "a", "b", "c"]), 3)
        const list = (yield* redis.execute(["LRANGE", `${key}:l`, 0, -1])) as ReadonlyArray<Reply>
        assert.deepStrictEqual(list.map(text), ["a", "b", "c"])
        assert.strictEqual(yield* redis.execute(["HSET", `${key}:h`, "f1", "1", "f2", "2"]), 2)
        const flat = (yield* redis.execute(["HGETALL", `${key}:h`])) as ReadonlyArray<Reply>
        const pairs: Record<string, string> = {}
        for (let i = 0; i < flat.length; i += 2) pairs[text(flat[i]!)] = text(flat[i + 1]!)
        assert.deepStrictEqual(pairs, { f1: "1", f2: "2" })
        assert.deepStrictEqual(yield* redis.execute(["LRANGE", `${key}:none`, 0, -1]), [])
      })
    )

    it.effect("pipeline: one reply per command, error replies as values", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("pipe")
        const replies = yield* redis.pipeline([
          ["SET", key, "1"],
          ["INCR", key],
          ["LPUSH", key, "x"],
          ["GET", key]
        ])
        assert.strictEqual(replies.length, 4)
        assert.strictEqual(replies[0], "OK")
        assert.strictEqual(replies[1], 2)
        assert.instanceOf(replies[2], ErrorReply)
        assert.strictEqual((replies[2] as ErrorReply).code, "WRONGTYPE")
        assert.strictEqual(text(replies[3]!), "2")
      })
    )

    it.effect("executeAll: replies in order, the first failure in command order, or one result each", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("all")
        const replies = yield* redis.executeAll(Array.from({ length: 50 }, (_, i) => ["RPUSH", key, i]))
        assert.deepStrictEqual(
          replies,
          Array.from({ length: 50 }, (_, i) => i + 1)
        )
        yield* redis.execute(["SET", `${key}:text`, "1"])
        const commands = [
          ["LLEN", key],
          ["LPUSH", `${key}:text`, "x"],
          ["GET", `${key}:none`],
          ["FOO-NO-SUCH"]
        ] as const
        const failure = yield* Effect.flip(redis.executeAll(commands))
        assert.strictEqual(failure.reason._tag, "Reply")
        if (failure.reason._tag === "Reply") assert.strictEqual(failure.reason.code, "WRONGTYPE")
        const results = yield* redis.executeAll(commands, { mode: "result" })
        assert.deepStrictEqual(
          results.map((result) => result._tag),
          ["Success", "Failure", "Success", "Failure"]
        )
        assert.strictEqual(results[0]?._tag === "Success" && results[0].success, 50)
        assert.strictEqual(results[2]?._tag === "Success" && results[2].success, null)
        const refused = yield* Effect.flip(
          redis.executeAll([
            ["INCR", key],
            ["BLPOP", key, 1]
          ])
        )
        assert.strictEqual(refused.reason._tag, "NotMultiplexable")
      })
    )

    it.effect("submit: 200 unawaited RPUSH keep their order; poll sees the reply", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("order")
        const futures = []
        for (let i = 0; i < 200; i++) futures.push(yield* redis.submit(["RPUSH", key, i]))
        const counts = yield* Effect.forEach(futures, (f) => f.await)
        assert.deepStrictEqual(
          counts,
          Array.from({ length: 200 }, (_, i) => i + 1)
        )
        assert.strictEqual(yield* futures[199]!.poll, 200)
        const list = (yield* redis.execute(["LRANGE", key, 0, -1])) as ReadonlyArray<Reply>
        assert.deepStrictEqual(
          list.map(text),
          Array.from({ length: 200 }, (_, i) => String(i))
        )
      })
    )

    it.effect("withExclusive: MULTI/EXEC runs the queued commands", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("tx")
        const result = yield* redis.withExclusive((c) =>
          Effect.gen(function* () {
            assert.strictEqual(yield* c.execute(["MULTI"]), "OK")
            assert.strictEqual(yield* c.execute(["INCR", key]), "QUEUED")
            assert.strictEqual(yield* c.execute(["INCR", key]), "QUEUED")
            return yield* c.execute(["EXEC"])
          })
        )
        assert.deepStrictEqual(result, [1, 2])
        const piped = yield* redis.withExclusive((c) =>
          c.pipeline([["MULTI"], ["SET", key, "x"], ["GET", key], ["EXEC"]])
        )
        assert.strictEqual(piped[0], "OK")
        assert.strictEqual(piped[1], "QUEUED")
        const exec = piped[3] as ReadonlyArray<Reply>
        assert.strictEqual(exec[0], "OK")
        assert.strictEqual(text(exec[1]!), "x")
      })
    )

    it.effect("withExclusive: a WATCHed key changed by another connection aborts EXEC (null)", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const key = fresh("watch")
        yield* redis.execute(["SET", key, "before"])
        const exec = yield* redis.withExclusive((c) =>
          Effect.gen(function* () {
            assert.strictEqual(yield* c.execute(["WATCH", key]), "OK")
            yield* redis.execute(["SET", key, "changed"])
            yield* c.execute(["MULTI"])
            yield* c.execute(["SET", key, "mine"])
            return yield* c.execute(["EXEC"])
          })
        )
        assert.strictEqual(exec, null)
        assert.strictEqual(text(yield* redis.execute(["GET", key])), "changed")
      })
    )

    it.effect("an argument that cannot be sent is an InvalidArgument", () =>
      Effect.gen(function* () {
        const redis = yield* RedisConnection
        const error = yield* Effect.flip(redis.execute(["SET", fresh("nan"), Number.NaN]))
        assert.strictEqual(error._tag, "RedisError")
        assert.strictEqual(error.reason._tag, "InvalidArgument")
      })
    )
  })

suite("RedisMock", RedisMock.layer())

const real = Layer.effect(
  RedisConnection,
  Effect.gen(function* () {
    const server = yield* Embedded.EmbeddedServer
    return yield* RedisConnectionModule.makeSingle({ url: server.url })
  })
).pipe(Layer.provide(Embedded.layer()))

suite("redis-server through RedisConnection.layerSingle", real)

describe("RedisMock only", () => {
  it.effect("reports strategy mock; each mock has its own data unless named alike", () =>
    Effect.gen(function* () {
      const a = yield* RedisMock.make()
      const b = yield* RedisMock.make()
      assert.strictEqual(a.info.strategy, "mock")
      assert.notStrictEqual(a.info.target, b.info.target)
      yield* a.execute(["SET", "k", "a"])
      assert.strictEqual(yield* b.execute(["GET", "k"]), null)
      const name = `shared-${Date.now()}`
      const c = yield* RedisMock.make({ name })
      const d = yield* RedisMock.make({ name })
      yield* c.execute(["SET", "k", "c"])
      assert.strictEqual(text(yield* d.execute(["GET", "k"])), "c")
    })
  )

  it.effect("starts from the given data", () =>
    Effect.gen(function* () {
      const redis = yield* RedisMock.make({ data: { greeting: "hi", list: ["x", "y"], hash: { f: "v" } } })
      assert.strictEqual(text(yield* redis.execute(["GET", "greeting"])), "hi")
      assert.strictEqual(yield* redis.execute(["LLEN", "list"]), 2)
      assert.strictEqual(text(yield* redis.execute(["HGET", "hash", "f"])), "v")
    })
  )

  it.effect("a command ioredis-mock lacks is an unknown-command reply error that says so", () =>
    Effect.gen(function* () {
      const redis = yield* RedisMock.make()
      const error = yield* Effect.flip(redis.execute(["GRAPH.QUERY", "g", "RETURN 1"]))
      assert.strictEqual(error.reason._tag === "Reply" && error.reason.code, "ERR")
      assert.include(error.message, "unknown command 'GRAPH.QUERY'")
      assert.include(error.message, "ioredis-mock does not implement it")
    })
  )

  it.effect("transactions and blocking commands are refused on the shared face", () =>
    Effect.gen(function* () {
      const redis = yield* RedisMock.make()
      for (const command of [["MULTI"], ["WATCH", "k"], ["BLPOP", "k", "0"], ["SUBSCRIBE", "c"]]) {
        const error = yield* Effect.flip(redis.execute(command))
        assert.strictEqual(error.reason._tag, "NotMultiplexable")
      }
      const inPipeline = yield* Effect.flip(redis.pipeline([["PING"], ["MULTI"]]))
      assert.strictEqual(inPipeline._tag, "RedisError")
    })
  )

  it.effect("EXEC after a queued unknown command is EXECABORT; DISCARD drops the queue", () =>
    Effect.gen(function* () {
      const redis = yield* RedisMock.make()
      const replies = yield* redis.withExclusive((c) =>
        c.pipeline([["MULTI"], ["NOSUCH"], ["SET", "k", "v"], ["EXEC"], ["MULTI"], ["SET", "k", "w"], ["DISCARD"]])
      )
      assert.strictEqual((replies[3] as ErrorReply).code, "EXECABORT")
      assert.strictEqual(replies[6], "OK")
      assert.strictEqual(yield* redis.execute(["GET", "k"]), null)
    })
  )

  it.effect("calls after the scope closed fail with reason Closed", () =>
    Effect.gen(function* () {
      const redis = yield* Effect.scoped(RedisMock.make())
      const error = yield* Effect.flip(redis.execute(["PING"]))
      assert.strictEqual(error.reason._tag, "Closed")
    })
  )
})
