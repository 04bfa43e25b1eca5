/**
 * Defaults that never hang: a call made during an outage settles within `offlineTimeout`
 * (default 5 s) with reason `Offline`, even without a timeout of its own; closing a client
 * during an outage is prompt. Real redis-server processes on loopback, killed with SIGKILL.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as RedisConnection from "../src/RedisConnection.ts"
import type { RedisError } from "../src/RedisError.ts"

type Service = RedisConnection.RedisConnection["Service"]

const strategies = ["single", "multiplexed", "pooled"] as const

/** A client of each strategy, with default options (only the URL). */
const withDefaults = (strategy: (typeof strategies)[number], url: string, extra: RedisConnection.LayerOptions = {}) =>
  RedisConnection.makeFromOptions({ strategy, url, ...extra })

const failureOf = (exit: Exit.Exit<unknown, RedisError>): RedisError => {
  assert.isTrue(Exit.isFailure(exit), "the call must fail: the server is down")
  if (Exit.isSuccess(exit)) throw new Error("unreachable")
  const reason = exit.cause.reasons[0]
  assert.strictEqual(reason?._tag, "Fail", `a typed failure, not ${reason?._tag}`)
  if (reason?._tag !== "Fail") throw new Error("unreachable")
  return reason.error
}

const untilOnline = (redis: Service) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 400; attempt++) {
      const exit = yield* Effect.exit(redis.execute(["PING"], { timeout: 500 }))
      if (Exit.isSuccess(exit)) return
      yield* Effect.sleep(25)
    }
    assert.fail("the client did not come back online")
  })

describe("outage", { timeout: 60_000 }, () => {
  it.live(
    "default options: after the server dies, each call fails with Offline (never sent) even with no timeout, and the client recovers",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const clients = yield* Effect.forEach(strategies, (strategy) => withDefaults(strategy, server.url))
        for (const redis of clients) assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
        yield* server.kill
        // Five calls in a row per client, each allowed to wait forever for its reply: without the
        // offline bound the first one would never settle and this test would run into its timeout.
        const errors = yield* Effect.forEach(
          clients,
          (redis) =>
            Effect.forEach(
              Array.from({ length: 5 }, (_, i) => i),
              (i) =>
                Effect.map(
                  Effect.exit(redis.execute(["SET", `outage-${i}`, "x"], { timeout: Duration.infinity })),
                  failureOf
                )
            ),
          { concurrency: "unbounded" }
        )
        clients.forEach((_, c) => {
          const reasons = errors[c].map((error) => error.reason._tag)
          assert.strictEqual(reasons.length, 5)
          // The first call may have been written before the loss was noticed; every later one is Offline.
          assert.include(["Offline", "ConnectionLost"], reasons[0], strategies[c])
          assert.deepStrictEqual(reasons.slice(1), ["Offline", "Offline", "Offline", "Offline"], strategies[c])
          for (const error of errors[c].slice(1)) {
            assert.isFalse(error.written)
            assert.isTrue(error.isRetryable)
            assert.include(error.stack ?? "", `hint: ${error.hint}`)
          }
        })
        // The server comes back only now that every call has settled.
        yield* server.restart
        for (const redis of clients) {
          yield* untilOnline(redis)
          // Offline calls were never sent.
          assert.strictEqual(yield* redis.execute(["EXISTS", "outage-1", "outage-2", "outage-3", "outage-4"]), 0)
        }
      })
  )

  it.live("offlineTimeout bounds the wait of a call queued during an outage; a call after it fails at once", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const redis = yield* withDefaults("single", server.url, {
        offlineTimeout: "300 millis",
        reconnect: { baseDelay: 50, maxDelay: 100 }
      })
      yield* redis.execute(["PING"])
      yield* server.kill
      yield* Effect.sleep(50)
      const queued = yield* Effect.forkChild(Effect.exit(redis.execute(["GET", "k"], { timeout: Duration.infinity })), {
        startImmediately: true
      })
      // Settles while the server is still down (it is restarted only after the join).
      const first = failureOf(yield* Fiber.join(queued))
      assert.strictEqual(first.reason._tag, "Offline")
      assert.include(first.reason.message, "offlineTimeout 300 ms")
      const next = failureOf(yield* Effect.exit(redis.execute(["GET", "k"], { timeout: Duration.infinity })))
      assert.strictEqual(next.reason._tag, "Offline")
      yield* server.restart
      yield* untilOnline(redis)
      assert.isNull(yield* redis.execute(["GET", "k"]))
    })
  )

  for (const strategy of strategies) {
    it.live(
      `${strategy}: closing during an outage fails pending calls at once (closeTimeout 1 hour is not waited for)`,
      () =>
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const scope = yield* Scope.make()
          // Nothing bounds these calls but the close: no call timeout, no offline bound.
          const redis = yield* withDefaults(strategy, server.url, {
            closeTimeout: "1 hour",
            offlineTimeout: "Infinity"
          }).pipe(Scope.provide(scope))
          yield* redis.execute(["PING"])
          yield* server.kill
          yield* Effect.sleep(50)
          const pending = yield* Effect.forEach(
            Array.from({ length: 5 }, (_, i) => i),
            (i) =>
              Effect.forkChild(
                Effect.exit(redis.execute(["SET", `pending-${i}`, "x"], { timeout: Duration.infinity })),
                {
                  startImmediately: true
                }
              )
          )
          // A hang here would last closeTimeout (1 hour), far past this test's own timeout.
          yield* Scope.close(scope, Exit.void)
          const errors = (yield* Effect.forEach(pending, Fiber.join)).map(failureOf)
          assert.strictEqual(errors.length, 5)
          for (const error of errors) {
            assert.include(["Closed", "Offline", "ConnectionLost"], error.reason._tag)
          }
          assert.isAtLeast(errors.filter((error) => error.reason._tag === "Closed").length, 1)
          const after = failureOf(yield* Effect.exit(redis.execute(["PING"])))
          assert.strictEqual(after.reason._tag, "Closed")
        })
    )
  }

  it.live("timeout: Duration.infinity means no client timeout for this call", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ args: ["--enable-debug-command", "yes"] })
      const redis = yield* withDefaults("single", server.url, { commandTimeout: "100 millis" })
      const limited = failureOf(yield* Effect.exit(redis.execute(["DEBUG", "SLEEP", "0.4"])))
      assert.strictEqual(limited.reason._tag, "Timeout")
      assert.isTrue(limited.written)
      assert.strictEqual(yield* redis.execute(["DEBUG", "SLEEP", "0.4"], { timeout: Duration.infinity }), "OK")
      assert.strictEqual(yield* redis.execute(["DEBUG", "SLEEP", "0.4"], { timeout: "Infinity" }), "OK")
    })
  )
})
