/**
 * Pub/Sub against a real redis-server: ordering per channel, many subscribers, patterns,
 * sharded channels, a reconnect in the middle (`CLIENT KILL TYPE pubsub`), unsubscribe on
 * interrupt, and the overflow policy of a slow consumer. RESP2 and RESP3.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisPubSub from "../src/RedisPubSub.ts"
import { until } from "./fixtures/Until.ts"

const setup = (url: string, protocol: 2 | 3) =>
  Effect.gen(function* () {
    const redis = yield* RedisConnection.makeSingle({ url, protocol })
    const pubsub = yield* RedisPubSub.make({ url, protocol }).pipe(
      Effect.provideService(RedisConnection.RedisConnection, redis)
    )
    return { redis, pubsub }
  })

const numsub = (redis: RedisConnection.RedisConnection["Service"], channel: string) =>
  Effect.map(redis.execute(["PUBSUB", "NUMSUB", channel]), (reply) => Number((reply as ReadonlyArray<unknown>)[1]))

const texts = (stream: Stream.Stream<RedisPubSub.PubSubMessage, unknown>, count: number) =>
  Stream.runCollect(
    Stream.take(
      Stream.map(stream, (message) => message.message),
      count
    )
  )

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i))

for (const protocol of [2, 3] as const) {
  describe(`pub/sub (RESP${protocol})`, { timeout: 60_000 }, () => {
    it.live("many subscribers each receive every message of a channel in publish order", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const { pubsub } = yield* setup(server.url, protocol)
          const streams = yield* Effect.forEach(range(1, 12), () => pubsub.subscribe("orders"))
          const others = yield* pubsub.subscribe(["other", "orders"])
          const expected = range(1, 300)
          const readers = yield* Effect.forEach(streams, (stream) => Effect.forkChild(texts(stream, 300)))
          const mixed = yield* Effect.forkChild(Stream.runCollect(Stream.take(others, 301)))
          for (const n of expected) {
            const receivers = yield* pubsub.publish("orders", n)
            // 12 streams + the mixed one share one connection: the server counts it once.
            assert.strictEqual(receivers, 1)
          }
          yield* pubsub.publish("other", "x")
          for (const reader of readers) assert.deepStrictEqual(yield* Fiber.join(reader), expected)
          const messages = yield* Fiber.join(mixed)
          assert.deepStrictEqual(
            messages.filter((m) => m.channel === "orders").map((m) => m.message),
            expected
          )
          assert.deepStrictEqual(
            messages.filter((m) => m.channel === "other").map((m) => [m.kind, m.message]),
            [["channel", "x"]]
          )
        })
      )
    )

    it.live("pattern and sharded subscriptions", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const { pubsub } = yield* setup(server.url, protocol)
          const news = yield* pubsub.psubscribe("news.*")
          const shard = yield* pubsub.ssubscribe("{user1}.events")
          const reader = yield* Effect.forkChild(
            Effect.map(Stream.runCollect(Stream.take(news, 2)), (chunk) =>
              chunk.map((m) => [m.kind, m.pattern, m.channel, m.message])
            )
          )
          yield* pubsub.publish("weather", "ignored")
          yield* pubsub.publish("news.sport", "goal")
          yield* pubsub.publish("news.tech", "chip")
          assert.deepStrictEqual(yield* Fiber.join(reader), [
            ["pattern", "news.*", "news.sport", "goal"],
            ["pattern", "news.*", "news.tech", "chip"]
          ])
          assert.strictEqual(yield* pubsub.spublish("{user1}.events", "login"), 1)
          const [event] = yield* Stream.runCollect(Stream.take(shard, 1))
          assert.deepStrictEqual([event!.kind, event!.channel, event!.message], ["shard", "{user1}.events", "login"])
        })
      )
    )

    it.live("re-subscribes after CLIENT KILL TYPE pubsub; order holds across the reconnect", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const { redis, pubsub } = yield* setup(server.url, protocol)
          const stream = yield* pubsub.subscribe("jobs")
          const reader = yield* Effect.forkChild(texts(stream, 20))
          for (const n of range(1, 10)) yield* pubsub.publish("jobs", n)
          const killed = yield* redis.execute(["CLIENT", "KILL", "TYPE", "pubsub"])
          assert.strictEqual(killed, 1)
          // At-most-once: wait until the subscription is back before publishing the rest.
          yield* until(
            Effect.map(numsub(redis, "jobs"), (n) => n === 1),
            "the channel is subscribed again"
          )
          for (const n of range(11, 20)) yield* pubsub.publish("jobs", n)
          assert.deepStrictEqual(yield* Fiber.join(reader), range(1, 20))
        })
      )
    )

    it.live("interrupting a subscriber unsubscribes its channel; another subscriber keeps it", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const { redis, pubsub } = yield* setup(server.url, protocol)
          const lone = yield* Effect.forkChild(Effect.scoped(Effect.flatMap(pubsub.subscribe("lone"), Stream.runDrain)))
          const shared = yield* Effect.forkChild(
            Effect.scoped(Effect.flatMap(pubsub.subscribe("shared"), Stream.runDrain))
          )
          const keeper = yield* pubsub.subscribe("shared")
          yield* until(
            Effect.map(numsub(redis, "lone"), (n) => n === 1),
            "lone is subscribed"
          )
          yield* until(
            Effect.map(numsub(redis, "shared"), (n) => n === 1),
            "shared is subscribed"
          )
          yield* Fiber.interrupt(lone)
          yield* Fiber.interrupt(shared)
          yield* until(
            Effect.map(numsub(redis, "lone"), (n) => n === 0),
            "lone is unsubscribed"
          )
          assert.strictEqual(yield* numsub(redis, "shared"), 1)
          yield* pubsub.publish("shared", "still here")
          assert.deepStrictEqual(yield* texts(keeper, 1), ["still here"])
        })
      )
    )

    it.live("a slow consumer's buffer is bounded: dropOldest keeps the newest, dropNewest the oldest", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          const { pubsub } = yield* setup(server.url, protocol)
          const oldest = yield* pubsub.subscribe("flood", { bufferSize: 4 })
          const newest = yield* pubsub.subscribe("flood", { bufferSize: 4, overflow: "dropNewest" })
          for (const n of range(1, 10)) yield* pubsub.publish("flood", n)
          yield* until(
            Effect.map(pubsub.dropped, (n) => n === 12),
            "both buffers overflowed"
          )
          assert.deepStrictEqual(yield* texts(oldest, 4), range(7, 10))
          assert.deepStrictEqual(yield* texts(newest, 4), range(1, 4))
        })
      )
    )
  })
}

describe("pub/sub options", () => {
  it.live("bufferSize must be a positive integer", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const { pubsub } = yield* setup(server.url, 2)
        const error = yield* Effect.flip(pubsub.subscribe("x", { bufferSize: 0 }))
        assert.strictEqual(error.reason._tag, "Config")
      })
    )
  )
})
