/**
 * The error's shape: one `RedisError` whose reason is a tagged class, caught by reason with
 * `Effect.catchReason` / `Effect.catchReasons`, against a real redis-server.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Redis from "effect/persistence/Redis"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisError from "../src/RedisError.ts"

const client = Effect.gen(function* () {
  const server = yield* Embedded.EmbeddedServer
  return yield* RedisConnection.makeSingle({ url: server.url })
})

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("RedisError", (it) => {
  it.effect("catchReason: one reason, with its own fields", () =>
    Effect.gen(function* () {
      const redis = yield* client
      yield* redis.execute(["SET", "a-string", "x"])
      const code = yield* redis.execute(["LPUSH", "a-string", "y"]).pipe(
        Effect.as("pushed"),
        Effect.catchReason("RedisError", "Reply", (reason) => Effect.succeed(`${reason.code}/${reason.command}`))
      )
      assert.strictEqual(code, "WRONGTYPE/LPUSH")
      // A reason not named is left in the error channel, still a RedisError.
      const other = yield* Effect.flip(
        redis
          .execute(["GET", "k"], { timeout: -1 })
          .pipe(Effect.catchReason("RedisError", "Timeout", () => Effect.succeed(null)))
      )
      assert.strictEqual(other._tag, "RedisError")
      assert.strictEqual(other.reason._tag, "InvalidArgument")
    })
  )

  it.effect("catchReasons: several reasons, each handled by its own tag", () =>
    Effect.gen(function* () {
      const redis = yield* client
      const handle = <A>(effect: Effect.Effect<A, RedisError.RedisError>) =>
        effect.pipe(
          Effect.map(() => "ok"),
          Effect.catchReasons("RedisError", {
            Reply: (reason) => Effect.succeed(`reply ${reason.code}`),
            NotMultiplexable: (reason) => Effect.succeed(`exclusive ${reason.command}`),
            Unsupported: (reason) => Effect.succeed(`unsupported ${reason.command}`)
          })
        )
      assert.strictEqual(yield* handle(redis.execute(["PING"])), "ok")
      assert.strictEqual(yield* handle(redis.execute(["NOT-A-COMMAND"])), "reply ERR")
      assert.strictEqual(yield* handle(redis.execute(["MULTI"])), "exclusive MULTI")
      assert.strictEqual(yield* handle(redis.execute(["SUBSCRIBE", "news"])), "unsupported SUBSCRIBE")
    })
  )

  it.effect(
    "message, hint, written, isRetryable come from the reason; cause is the reason; the stack carries the hint",
    () =>
      Effect.gen(function* () {
        const redis = yield* client
        const error = yield* Effect.flip(redis.execute(["NOT-A-COMMAND"]))
        assert.isTrue(RedisError.isRedisError(error))
        assert.isTrue(RedisError.isRedisErrorReason(error.reason))
        assert.strictEqual(error.reason._tag, "Reply")
        if (error.reason._tag !== "Reply") return
        assert.match(error.reason.serverMessage, /^ERR unknown command/)
        assert.strictEqual(error.message, error.reason.message)
        assert.include(error.stack ?? "", `\n  hint: ${error.reason.hint}\n`)
        assert.strictEqual(error.hint, error.reason.hint)
        assert.isTrue(error.written)
        assert.isFalse(error.isRetryable)
        assert.strictEqual(error.cause, error.reason)
      })
  )

  it("an uncaught error renders with its hint (what runMain prints)", () => {
    const error = RedisError.make(new RedisError.Offline({ message: "could not connect to 127.0.0.1:1/0" }))
    const printed = Cause.pretty(Cause.fail(error))
    assert.include(printed, "RedisError: could not connect to 127.0.0.1:1/0\n  hint: the server is unreachable")
    assert.include(printed, "[cause]: Offline: could not connect")
  })

  it("mayHaveRun: sent and not refused before running", () => {
    const reply = (code: string) =>
      RedisError.make(new RedisError.Reply({ code, serverMessage: `${code} x`, command: "SET", message: "m" }))
    assert.isFalse(reply("LOADING").mayHaveRun)
    assert.isTrue(reply("LOADING").written)
    assert.isTrue(reply("ERR").mayHaveRun)
    assert.isTrue(RedisError.make(new RedisError.ConnectionLost({ written: true, message: "gone" })).mayHaveRun)
    assert.isFalse(RedisError.make(new RedisError.ConnectionLost({ written: false, message: "gone" })).mayHaveRun)
    assert.isFalse(RedisError.make(new RedisError.Offline({ message: "down" })).mayHaveRun)
  })

  it("hintOnStack: the hint is the stack's second line; a stack set later replaces it", () => {
    class CacheFull extends Error {
      readonly hint = "raise maxEntries"
      constructor() {
        super("the cache is full")
        RedisError.hintOnStack(this)
      }
    }
    const error = new CacheFull()
    const lines = (error.stack ?? "").split("\n")
    assert.strictEqual(lines[0], "Error: the cache is full")
    assert.strictEqual(lines[1], "  hint: raise maxEntries")
    assert.match(lines[2] ?? "", /^\s+at /)
    // Read twice: the same text, the hint once.
    assert.strictEqual(error.stack, lines.join("\n"))
    const other = new CacheFull()
    other.stack = "replaced"
    assert.strictEqual(other.stack, "replaced")
  })

  it("effect's persistence RedisError is not this package's", () => {
    const theirs = new Redis.RedisError({ cause: new Error("x") })
    assert.strictEqual(theirs._tag, "RedisError")
    assert.isFalse(RedisError.isRedisError(theirs))
    const ours = RedisError.make(new RedisError.Offline({ message: "down" }))
    assert.isTrue(RedisError.isRedisError(ours))
    assert.isFalse(ours.written)
  })
})
