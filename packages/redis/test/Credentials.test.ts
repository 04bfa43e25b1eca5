/**
 * Rotating credentials (`credentials` option) on real redis-server processes: an Effect asked
 * on every connect; a Stream whose emission re-authenticates live connections while a second
 * client changes the ACL user's password under load (no caller sees an error, no connection is
 * dropped, a reconnect afterwards uses the new secret) on every strategy, Pub/Sub and the
 * client cache; a failing or silent provider is a typed reason, retried with backoff.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as RedisClientCache from "../src/RedisClientCache.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import { failureOf } from "./fixtures/Failure.ts"
import type { Credentials } from "../src/RedisOptions.ts"
import * as RedisPubSub from "../src/RedisPubSub.ts"
import { until } from "./fixtures/Until.ts"

type Service = RedisConnection.RedisConnection["Service"]

const strategies = ["single", "multiplexed", "pooled"] as const

const app = (secret: string): Credentials => ({ username: "app", password: Redacted.make(secret) })

/** Counts from `INFO commandstats` of the `auth` line. */
const authStats = (admin: Service) =>
  Effect.map(admin.execute(["INFO", "commandstats"]), (reply) => {
    const match = /^cmdstat_auth:calls=(\d+),.*failed_calls=(\d+)/m.exec(String(reply))
    return { calls: Number(match?.[1] ?? 0), failed: Number(match?.[2] ?? 0) }
  })

/** The ids of the connections of user `app`, sorted. */
const appConnections = (admin: Service) =>
  Effect.map(admin.execute(["CLIENT", "LIST"]), (reply) =>
    String(reply)
      .split("\n")
      .filter((line) => / user=app /.test(line))
      .map((line) => Number(/^id=(\d+)/.exec(line)?.[1]))
      .sort((a, b) => a - b)
  )

const serverWithAdmin = Effect.gen(function* () {
  const server = yield* Embedded.make({ module: false })
  const admin = yield* RedisConnection.makeSingle({ url: server.url })
  yield* admin.execute(["ACL", "SETUSER", "app", "on", ">secret-one", "+@all", "~*", "&*"])
  return { server, admin }
})

/** 8 fibers × 150 INCRs each, all of which must succeed; returns the fiber. */
const load = (redis: Service, prefix: string) =>
  Effect.forkChild(
    Effect.forEach(
      Array.from({ length: 8 }, (_, i) => i),
      (i) =>
        Effect.forEach(
          Array.from({ length: 150 }, (_, n) => n),
          () => redis.execute(["INCR", `${prefix}:${i}`]),
          { discard: true }
        ),
      { concurrency: "unbounded", discard: true }
    ),
    { startImmediately: true }
  )

describe("credentials", { timeout: 60_000 }, () => {
  it.live(
    "an Effect is asked on every connect: after a rotation, the reconnect authenticates with the new secret",
    () =>
      Effect.gen(function* () {
        const { admin, server } = yield* serverWithAdmin
        let secret = "secret-one"
        let asked = 0
        const credentials = Effect.sync(() => {
          asked++
          return app(secret)
        })
        for (const strategy of strategies) {
          const redis = yield* RedisConnection.makeFromOptions({ strategy, url: server.url, credentials })
          assert.strictEqual(yield* redis.execute(["SET", "k", strategy]), "OK")
        }
        const before = asked
        secret = "secret-two"
        yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">secret-two"])
        yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
        const redis = yield* RedisConnection.makeSingle({ url: server.url, credentials })
        yield* until(
          Effect.map(Effect.exit(redis.execute(["GET", "k"])), Exit.isSuccess),
          "the client reconnects with the new secret"
        )
        assert.isAbove(asked, before)
      })
  )

  for (const strategy of strategies) {
    it.live(
      `${strategy}: a Stream's new secret re-authenticates the live connections while the password changes under load; no caller sees an error`,
      () =>
        Effect.gen(function* () {
          const { admin, server } = yield* serverWithAdmin
          const secrets = yield* Queue.unbounded<Credentials>()
          yield* Queue.offer(secrets, app("secret-one"))
          const redis = yield* RedisConnection.makeFromOptions({
            strategy,
            url: server.url,
            credentials: Stream.fromQueue(secrets),
            ...(strategy === "multiplexed" ? { connections: 2, routing: "spread" as const } : {}),
            ...(strategy === "pooled" ? { size: 4 } : {})
          })
          // Every connection is open before the rotation (a pool opens its connections on demand).
          yield* load(redis, "warm").pipe(Effect.flatMap(Fiber.join))
          const connectionsBefore = yield* appConnections(admin)
          const authBefore = yield* authStats(admin)
          const work = yield* load(redis, "counter")
          // Under load, the second client changes the password (the old one stops working), then
          // the stream emits the new one (a token source learns of a new secret once it is valid).
          yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">secret-two"])
          yield* Queue.offer(secrets, app("secret-two"))
          yield* Fiber.join(work)
          for (let i = 0; i < 8; i++) {
            assert.strictEqual(replyToString(yield* redis.execute(["GET", `counter:${i}`])), "150")
          }
          // The same connections, each re-authenticated once with the new secret, none refused.
          yield* until(
            Effect.map(authStats(admin), (stats) => stats.calls - authBefore.calls >= connectionsBefore.length),
            "every live connection sent AUTH"
          )
          assert.deepStrictEqual(yield* appConnections(admin), connectionsBefore, "no connection was replaced")
          const authAfter = yield* authStats(admin)
          assert.strictEqual(authAfter.failed, authBefore.failed, "no AUTH was refused")
          assert.strictEqual(
            authAfter.calls - authBefore.calls,
            connectionsBefore.length,
            `one AUTH per connection (${connectionsBefore.join(",")})`
          )
          // A reconnect after the change uses the new secret (the old one no longer works).
          yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
          yield* until(
            Effect.map(Effect.exit(redis.execute(["GET", "counter:0"])), Exit.isSuccess),
            "the client reconnects"
          )
          assert.strictEqual((yield* authStats(admin)).failed, authBefore.failed)
        })
    )
  }

  it.live(
    "a Stream's new secret is not sent into a caller's own connection (an AUTH inside MULTI would join the transaction)",
    () =>
      Effect.gen(function* () {
        const { admin, server } = yield* serverWithAdmin
        const secrets = yield* Queue.unbounded<Credentials>()
        yield* Queue.offer(secrets, app("secret-one"))
        const redis = yield* RedisConnection.makeSingle({ url: server.url, credentials: Stream.fromQueue(secrets) })
        yield* redis.execute(["PING"])
        const exec = yield* redis.withExclusive((connection) =>
          Effect.gen(function* () {
            yield* connection.execute(["MULTI"])
            yield* connection.execute(["SET", "in-tx", "1"])
            const before = yield* authStats(admin)
            yield* admin.execute(["ACL", "SETUSER", "app", ">secret-two"])
            yield* Queue.offer(secrets, app("secret-two"))
            // The shared connection re-authenticates; the exclusive one, inside MULTI, does not.
            yield* until(
              Effect.map(authStats(admin), (stats) => stats.calls > before.calls),
              "the shared connection sent AUTH"
            )
            return yield* connection.execute(["EXEC"])
          })
        )
        assert.deepStrictEqual(exec, ["OK"])
      })
  )

  it.live("Pub/Sub and the client cache take their credentials from the option, on connect and reconnect", () =>
    Effect.gen(function* () {
      const { admin, server } = yield* serverWithAdmin
      const secrets = yield* Queue.unbounded<Credentials>()
      yield* Queue.offer(secrets, app("secret-one"))
      const credentials = Stream.fromQueue(secrets)
      const options = { url: server.url, credentials, protocol: 3 as const }
      const redis = yield* RedisConnection.makeSingle(options)
      const pubsub = yield* RedisPubSub.make(options).pipe(
        Effect.provideService(RedisConnection.RedisConnection, redis)
      )
      const cache = yield* RedisClientCache.make({ ...options, clientCache: { commands: ["GET"] } })
      yield* redis.execute(["SET", "cached", "1"])
      assert.strictEqual(replyToString(yield* cache.execute(["GET", "cached"])), "1")
      yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">secret-two"])
      yield* Queue.offer(secrets, app("secret-two"))
      yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
      const messages = yield* pubsub.subscribe("news")
      const received = yield* Effect.forkChild(Stream.runHead(messages), { startImmediately: true })
      yield* until(
        Effect.map(admin.execute(["PUBSUB", "NUMSUB", "news"]), (reply) => Number((reply as Array<unknown>)[1]) === 1),
        "the subscriber reconnected and subscribed"
      )
      yield* until(
        Effect.map(Effect.exit(redis.execute(["PUBLISH", "news", "hello"])), Exit.isSuccess),
        "the data connection reconnected"
      )
      const message = yield* Fiber.join(received)
      assert.isTrue(message._tag === "Some")
      yield* until(
        Effect.map(
          Effect.exit(cache.execute(["GET", "cached"])),
          (exit) => Exit.isSuccess(exit) && replyToString(exit.value) === "1"
        ),
        "the cache's connection reconnected"
      )
    })
  )

  it.live(
    "Pub/Sub: on RESP3 an emission re-authenticates the subscribed connection in place (messages keep arriving, no resubscribe); on RESP2 the next connect uses it",
    () =>
      Effect.forEach([3, 2] as const, (protocol) =>
        Effect.gen(function* () {
          const { admin, server } = yield* serverWithAdmin
          const secrets = yield* Queue.unbounded<Credentials>()
          yield* Queue.offer(secrets, app("secret-one"))
          const options = { url: server.url, credentials: Stream.fromQueue(secrets), protocol }
          const redis = yield* RedisConnection.makeSingle(options)
          const pubsub = yield* RedisPubSub.make(options).pipe(
            Effect.provideService(RedisConnection.RedisConnection, redis)
          )
          const received = yield* Queue.unbounded<string>()
          const messages = yield* pubsub.subscribe("news")
          yield* Effect.forkScoped(
            Stream.runForEach(messages, (message) => Queue.offer(received, new TextDecoder().decode(message.payload)))
          )
          /** The subscribed connection's CLIENT LIST line. */
          const subscriberLine = Effect.map(admin.execute(["CLIENT", "LIST"]), (reply) =>
            String(reply)
              .split("\n")
              .find((line) => / user=app /.test(line) && / sub=1 /.test(line))
          )
          const idOf = (line: string | undefined) => /^id=(\d+)/.exec(line ?? "")?.[1]
          const publishAndReceive = (payload: string) =>
            Effect.gen(function* () {
              yield* admin.execute(["PUBLISH", "news", payload])
              assert.strictEqual(yield* Queue.take(received), payload, `protocol ${protocol}`)
            })
          yield* until(
            Effect.map(subscriberLine, (line) => line !== undefined),
            "subscribed"
          )
          yield* publishAndReceive("one")
          const before = idOf(yield* subscriberLine)

          yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", ">secret-two"])
          yield* Queue.offer(secrets, app("secret-two"))
          if (protocol === 3) {
            // AUTH ran on the subscribed connection itself: the same id, still subscribed.
            yield* until(
              Effect.map(subscriberLine, (line) => line !== undefined && / cmd=auth /.test(line)),
              "the subscriber re-authenticated"
            )
          }
          yield* publishAndReceive("two")
          const after = yield* subscriberLine
          assert.strictEqual(idOf(after), before, `protocol ${protocol}: no reconnect, no resubscribe`)
          if (protocol === 2) assert.notMatch(after ?? "", / cmd=auth /, "no AUTH while subscribed on RESP2")

          // The next connect authenticates with the new secret (the old one is gone).
          yield* admin.execute(["CLIENT", "KILL", "ID", before!])
          yield* until(
            Effect.map(subscriberLine, (line) => line !== undefined && idOf(line) !== before),
            "the subscriber reconnected"
          )
          yield* publishAndReceive("three")
          assert.strictEqual((yield* authStats(admin)).failed, 0, `protocol ${protocol}: no AUTH refused`)
        })
      )
  )

  it.live(
    "a failing provider is reason CredentialsProvider at construction; a silent one is bounded by connectTimeout",
    () =>
      Effect.gen(function* () {
        const { server } = yield* serverWithAdmin
        const failing = failureOf(
          yield* Effect.exit(
            RedisConnection.makeSingle({ url: server.url, credentials: Effect.fail(new Error("vault unreachable")) })
          )
        )
        assert.strictEqual(failing.reason._tag, "CredentialsProvider")
        assert.isFalse(failing.written)
        const silent = failureOf(
          yield* Effect.exit(
            RedisConnection.makeSingle({ url: server.url, credentials: Effect.never, connectTimeout: 300 })
          )
        )
        assert.strictEqual(silent.reason._tag, "CredentialsProvider")
        assert.include(silent.message, "did not answer within 300 ms (connectTimeout)")
        const silentStream = failureOf(
          yield* Effect.exit(
            RedisConnection.makeSingle({ url: server.url, credentials: Stream.never, connectTimeout: 300 })
          )
        )
        assert.include(silentStream.message, "did not answer within 300 ms")
        const empty = failureOf(
          yield* Effect.exit(RedisConnection.makeSingle({ url: server.url, credentials: Stream.empty }))
        )
        assert.include(empty.message, "ended before it emitted")
        const noPassword = failureOf(
          yield* Effect.exit(
            RedisConnection.makeSingle({
              url: server.url,
              credentials: Effect.succeed({ username: "app" } as unknown as Credentials)
            })
          )
        )
        assert.include(noPassword.message, "no password")
        const both = failureOf(
          yield* Effect.exit(
            RedisConnection.makeSingle({ url: server.url, password: "x", credentials: Effect.succeed(app("x")) })
          )
        )
        assert.strictEqual(both.reason._tag, "Config")
        if (both.reason._tag === "Config") assert.strictEqual(both.reason.field, "credentials")
      })
  )

  it.live("a provider that starts failing is asked again with backoff, not in a tight loop", () =>
    Effect.gen(function* () {
      const { admin, server } = yield* serverWithAdmin
      let failing = false
      let asked = 0
      const credentials = Effect.suspend(() => {
        asked++
        return failing ? Effect.fail("token endpoint down") : Effect.succeed(app("secret-one"))
      })
      const redis = yield* RedisConnection.makeSingle({
        url: server.url,
        credentials,
        reconnect: { baseDelay: 100, maxDelay: 400 }
      })
      yield* redis.execute(["PING"])
      failing = true
      yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
      const start = asked
      yield* Effect.sleep(1500)
      const attempts = asked - start
      assert.isAtLeast(attempts, 2)
      assert.isAtMost(attempts, 12, `backoff, not a tight loop: ${attempts} asks`)
      const refused = failureOf(yield* Effect.exit(redis.execute(["PING"])))
      assert.strictEqual(refused.reason._tag, "Offline")
      assert.include(refused.message, "credentials provider failed")
      failing = false
      yield* until(Effect.map(Effect.exit(redis.execute(["PING"])), Exit.isSuccess), "the provider answers again")
    })
  )
})
