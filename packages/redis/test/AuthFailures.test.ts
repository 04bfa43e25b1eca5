/**
 * Auth failures that do not storm: a wrong password fails the construction at once with a
 * typed reason; after a password change on the server, reconnects back off (the AUTH attempts
 * the server saw are counted from `INFO commandstats`), the failure is logged once, and
 * commands fail at once instead of waiting. A least-privilege ACL user that may not run
 * `CLIENT SETNAME` or `PING` still connects. Real redis-server processes on loopback.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as RedisConnection from "../src/RedisConnection.ts"
import { failureOf } from "./fixtures/Failure.ts"

const strategies = ["single", "multiplexed", "pooled"] as const

/** AUTH and HELLO calls the server has counted so far (failed ones included). */
const authCalls = (admin: RedisConnection.RedisConnection["Service"]) =>
  Effect.map(admin.execute(["INFO", "commandstats"]), (reply) => {
    const text = String(reply)
    let calls = 0
    for (const match of text.matchAll(/^cmdstat_(?:auth|hello):calls=(\d+)/gm)) calls += Number(match[1])
    return calls
  })

/** A server (no module) and an admin client of the default user. */
const serverWithAdmin = Effect.gen(function* () {
  const server = yield* Embedded.make({ module: false })
  const admin = yield* RedisConnection.makeSingle({ url: server.url })
  return { server, admin }
})

describe("auth failures", { timeout: 60_000 }, () => {
  it.live("a wrong password fails the construction at once with reason Reply WRONGPASS, on every strategy", () =>
    Effect.gen(function* () {
      const { server, admin } = yield* serverWithAdmin
      yield* admin.execute(["ACL", "SETUSER", "app", "on", ">right-secret-1", "+@all", "~*"])
      const before = yield* authCalls(admin)
      for (const strategy of strategies) {
        const error = failureOf(
          yield* Effect.exit(
            RedisConnection.makeFromOptions({
              strategy,
              url: server.url,
              username: "app",
              password: "wrong-secret-2",
              ...(strategy === "pooled" ? { size: 2 } : {})
            })
          )
        )
        assert.strictEqual(error.reason._tag, "Reply", strategy)
        if (error.reason._tag !== "Reply") return
        assert.strictEqual(error.reason.code, "WRONGPASS")
        assert.strictEqual(error.reason.command, "AUTH")
        assert.notInclude(error.message, "wrong-secret-2")
        assert.include(error.hint, "check the password")
      }
      // One attempt per strategy, not a retry loop (a pool stops at its first failed connection).
      assert.isAtMost((yield* authCalls(admin)) - before, 4)
    })
  )

  it.live(
    "after a password change, reconnects back off, the failure is logged once, commands fail at once, and the client recovers",
    () =>
      Effect.gen(function* () {
        const { server, admin } = yield* serverWithAdmin
        yield* admin.execute(["ACL", "SETUSER", "app", "on", ">first-secret", "+@all", "~*"])
        const logs: Array<{ level: string; message: string }> = []
        const capture = Logger.make((options) => {
          logs.push({ level: options.logLevel, message: String(options.message) })
        })
        const redis = yield* RedisConnection.makeMultiplexed({
          url: server.url,
          username: "app",
          password: "first-secret",
          offlineTimeout: Duration.infinity,
          reconnect: { baseDelay: 100, maxDelay: 400 }
        }).pipe(Effect.provide(Logger.layer([capture])))
        assert.strictEqual(yield* redis.execute(["SET", "k", "v"]), "OK")
        yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">second-secret"])
        yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
        const start = yield* authCalls(admin)
        // Let it try for a while: a tight loop would make thousands of attempts, the backoff
        // (100 ms doubling to 400 ms) a handful.
        yield* Effect.sleep(1500)
        const attempts = (yield* authCalls(admin)) - start
        assert.isAtLeast(attempts, 2, "it keeps trying")
        assert.isAtMost(attempts, 12, `backoff, not a storm: ${attempts} AUTH attempts`)
        // With no offline bound, a command would otherwise wait forever for a reconnect.
        const refused = failureOf(yield* Effect.exit(redis.execute(["GET", "k"], { timeout: Duration.infinity })))
        assert.strictEqual(refused.reason._tag, "Offline")
        assert.include(refused.message, "WRONGPASS")
        assert.isFalse(refused.written)
        const warnings = logs.filter((log) => log.level === "Warn")
        assert.strictEqual(warnings.length, 1, JSON.stringify(warnings))
        assert.include(warnings[0]!.message, "WRONGPASS")
        assert.notInclude(warnings[0]!.message, "first-secret")
        // The secret changes back: the next reconnect works and says so once.
        yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">first-secret"])
        let value: unknown
        for (let i = 0; i < 100 && value !== "v"; i++) {
          value = yield* Effect.orElseSucceed(Effect.map(redis.execute(["GET", "k"]), replyToString), () => undefined)
          if (value !== "v") yield* Effect.sleep(50)
        }
        assert.strictEqual(value, "v")
        assert.deepStrictEqual(
          logs.filter((log) => log.level === "Info").map((log) => log.message),
          [`connected to ${server.host}:${server.port}/0 again`]
        )
      })
  )

  for (const protocol of [2, 3] as const) {
    it.live(
      `RESP${protocol}: a least-privilege ACL user (no CLIENT SETNAME, no PING) connects on every strategy, and a command outside its rights fails with NOPERM`,
      () =>
        Effect.gen(function* () {
          const { server, admin } = yield* serverWithAdmin
          yield* admin.execute(["ACL", "SETUSER", "reader", "on", ">reader-secret", "-@all", "+get", "+set", "~app:*"])
          for (const strategy of strategies) {
            const redis = yield* RedisConnection.makeFromOptions({
              strategy,
              url: server.url,
              username: "reader",
              password: "reader-secret",
              clientName: "svc",
              protocol,
              ...(strategy === "pooled" ? { size: 2 } : {})
            })
            assert.strictEqual(yield* redis.execute(["SET", `app:${strategy}`, "1"]), "OK")
            assert.strictEqual(replyToString(yield* redis.execute(["GET", `app:${strategy}`])), "1")
            const denied = failureOf(yield* Effect.exit(redis.execute(["SET", "other", "1"])))
            assert.strictEqual(denied.reason._tag, "Reply")
            if (denied.reason._tag === "Reply") assert.strictEqual(denied.reason.code, "NOPERM")
          }
        })
    )
  }
})
