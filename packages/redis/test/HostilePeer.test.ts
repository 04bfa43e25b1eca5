/**
 * Scripted peers on loopback that misbehave on purpose, over every strategy: an overlong
 * line, a late line terminator, a half-open peer that stops mid-reply, and a healthy peer
 * that takes long to answer. Every test is bounded and stops what it starts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { RedisConnection } from "../src/RedisConnection.ts"
import type { RedisError } from "../src/RedisError.ts"
import * as RedisOptions from "../src/RedisOptions.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import { build } from "./fixtures/Strategies.ts"

const kinds = ["single", "pooled4", "multiplexed1", "multiplexed4"] as const

const text = (reply: unknown): string =>
  typeof reply === "string" ? reply : new TextDecoder().decode(reply as Uint8Array)

/** 200 concurrent ECHOs, each must get its own payload. */
const aligned = (redis: RedisConnection["Service"], tag: string) =>
  Effect.gen(function* () {
    const echoes = yield* Effect.forEach(
      Array.from({ length: 200 }, (_, i) => `${tag}-${i}`),
      (payload) => redis.execute(["ECHO", payload]),
      { concurrency: "unbounded" }
    )
    echoes.forEach((echo, i) => {
      assert.strictEqual(text(echo), `${tag}-${i}`)
    })
  })

/** Tries a PING until one succeeds (bounded); returns the number of attempts. */
const untilServed = (redis: RedisConnection["Service"], attempts: number) =>
  Effect.gen(function* () {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const exit = yield* Effect.exit(redis.execute(["ECHO", `probe-${attempt}`], { timeout: 300 }))
      if (Exit.isSuccess(exit) && text(exit.value) === `probe-${attempt}`) return attempt
      yield* Effect.sleep(50)
    }
    return assert.fail(`not served after ${attempts} attempts`)
  })

/** A burst of 40 concurrent ECHOs with short timeouts: how many got their own reply. */
const burst = (redis: RedisConnection["Service"], tag: string) =>
  Effect.gen(function* () {
    const exits = yield* Effect.forEach(
      Array.from({ length: 40 }, (_, i) => `${tag}-${i}`),
      (payload) => Effect.exit(redis.execute(["ECHO", payload], { timeout: 300 })),
      { concurrency: "unbounded" }
    )
    let own = 0
    exits.forEach((exit, i) => {
      if (Exit.isSuccess(exit)) {
        assert.strictEqual(text(exit.value), `${tag}-${i}`, "a reply reached the wrong caller")
        own++
      }
    })
    return own
  })

const errorOf = (exit: Exit.Exit<unknown, RedisError>): RedisError | undefined =>
  Exit.isFailure(exit)
    ? (exit.cause.reasons.find((reason) => reason._tag === "Fail") as { error: RedisError } | undefined)?.error
    : undefined

const echoReply = (payload: string) => `$${Buffer.byteLength(payload)}\r\n${payload}\r\n`

/**
 * A peer that answers SPLIT with 70 KiB of a simple string whose CRLF comes only with the
 * next reply; ECHO is answered as a simple string, so that CRLF really joins them.
 */
const lateTerminatorPeer = FakeServer.make((command) => {
  if (command[0] === "PING") return "+PONG\r\n"
  if (command[0] === "ECHO") return `+${command[1]}\r\n`
  if (command[0] === "SPLIT") return `+${"y".repeat(70 * 1024)}`
  return "-ERR unknown\r\n"
})

/**
 * A peer that answers HALF with half a bulk reply and then goes silent on that connection
 * for good (a half-open connection); PING and ECHO are answered normally elsewhere.
 */
const halfOpenPeer = Effect.suspend(() => {
  const silent = new Set<number>()
  return FakeServer.make((command, connection) => {
    if (silent.has(connection)) return undefined
    if (command[0] === "PING") return "+PONG\r\n"
    if (command[0] === "ECHO") return echoReply(command[1]!)
    if (command[0] === "HALF") {
      silent.add(connection)
      return "$10\r\nabc"
    }
    return "-ERR unknown\r\n"
  })
})

describe("hostile peers", { timeout: 60_000 }, () => {
  for (const kind of kinds) {
    it.live(
      `${kind}: an overlong line fails its connection's calls (Protocol error), later calls get their own replies`,
      () =>
        Effect.gen(function* () {
          const fake = yield* FakeServer.make((command) => {
            if (command[0] === "PING") return "+PONG\r\n"
            if (command[0] === "ECHO") return echoReply(command[1]!)
            // 70 KiB of a simple string without CRLF: over the 64 KiB default line cap.
            if (command[0] === "LONG") return `+${"x".repeat(70 * 1024)}`
            if (command[0] === "HOLD") return undefined
            return "-ERR unknown\r\n"
          })
          const { service: redis } = yield* build(kind, fake.url, { reconnect: { baseDelay: 10, maxDelay: 50 } })
          yield* aligned(redis, "before")
          const long = yield* Effect.forkChild(Effect.exit(redis.execute(["LONG"])), { startImmediately: true })
          // On one shared socket, a call behind it is in flight on the same connection and fails with it.
          const behind =
            kind === "single" || kind === "multiplexed1"
              ? yield* Effect.forkChild(Effect.exit(redis.execute(["HOLD"])), { startImmediately: true })
              : undefined
          const longError = errorOf(yield* Fiber.join(long))
          assert.strictEqual(longError?.reason._tag, "Protocol")
          assert.include(longError?.message, "maxLineLength")
          if (behind !== undefined) assert.strictEqual(errorOf(yield* Fiber.join(behind))?.reason._tag, "Protocol")
          yield* untilServed(redis, 100)
          yield* aligned(redis, "after")
          assert.isAtLeast(fake.connections(), 2)
        })
    )

    it.live(`${kind}: a late line terminator cannot shift replies onto the wrong callers`, () =>
      Effect.gen(function* () {
        // SPLIT is answered with a line the *next* reply terminates: read naively, SPLIT's
        // reply would swallow the next one and every later reply would reach the caller after
        // its own. Replies are simple strings so the terminator really joins them.
        const fake = yield* lateTerminatorPeer
        const { service: redis } = yield* build(kind, fake.url, { reconnect: { baseDelay: 10, maxDelay: 50 } })
        const split = yield* Effect.forkChild(Effect.exit(redis.execute(["SPLIT"])), { startImmediately: true })
        const own = yield* burst(redis, "late")
        assert.strictEqual(errorOf(yield* Fiber.join(split))?.reason._tag, "Protocol")
        assert.isAtMost(own, 40)
        yield* untilServed(redis, 100)
        yield* aligned(redis, "after-late")
      })
    )

    it.live(`${kind}: a long-running command on a healthy connection is never cut, even past deadPeerTimeout`, () =>
      Effect.gen(function* () {
        // SLOW answers after 1.5 s of silence; the dead-peer bound is 300 ms. Its caller is
        // still waiting, so the connection is never a candidate, also while calls queued
        // behind it time out.
        const fake = yield* FakeServer.make((command) => {
          if (command[0] === "PING") return "+PONG\r\n"
          if (command[0] === "ECHO") return echoReply(command[1]!)
          if (command[0] === "SLOW") return { delay: 1500, bytes: "+done\r\n" }
          return "-ERR unknown\r\n"
        })
        const { service: redis, engines } = yield* build(kind, fake.url, { deadPeerTimeout: 300 })
        const slow = yield* Effect.forkChild(redis.execute(["SLOW"], { timeout: "Infinity" }), {
          startImmediately: true
        })
        // Traffic meanwhile: on one socket these queue behind SLOW and time out; elsewhere they are served.
        const during = yield* burst(redis, "during")
        if (kind === "single" || kind === "multiplexed1") assert.strictEqual(during, 0)
        else assert.isAbove(during, 0)
        assert.strictEqual(yield* Fiber.join(slow), "done")
        yield* aligned(redis, "after-slow")
        // Nothing was replaced: one connection per engine (at most the pool's size).
        if (kind === "pooled4") assert.isAtMost(fake.connections(), 4)
        else assert.strictEqual(fake.connections(), engines.length)
        for (const engine of engines) assert.strictEqual(engine.connects, 1)
      })
    )
  }

  it.live(
    "the late-terminator control: with the line cap raised above the line, replies do shift (why the cap exists)",
    () =>
      Effect.gen(function* () {
        const fake = yield* lateTerminatorPeer
        const { service: redis } = yield* build("single", fake.url, { maxLineLength: 1024 * 1024, closeTimeout: 100 })
        const split = yield* Effect.forkChild(redis.execute(["SPLIT"]), { startImmediately: true })
        const first = yield* Effect.forkChild(redis.execute(["ECHO", "first"]), { startImmediately: true })
        const second = yield* Effect.forkChild(redis.execute(["ECHO", "second"]), { startImmediately: true })
        // No RESP client can tell: SPLIT gets its line with the next reply glued on, and so on.
        assert.isTrue(text(yield* Fiber.join(split)).endsWith("+first"))
        assert.strictEqual(text(yield* Fiber.join(first)), "second")
        yield* Fiber.interrupt(second)
      })
  )

  it.live("timeouts name the configured timeout, also on a pooled client that spent part of it waiting", () =>
    Effect.gen(function* () {
      const fake = yield* FakeServer.make((command) => {
        if (command[0] === "PING") return "+PONG\r\n"
        if (command[0] === "SLOW") return { delay: 400, bytes: "+done\r\n" }
        return undefined
      })
      for (const kind of kinds) {
        const { service: redis } = yield* build(kind, fake.url, { closeTimeout: 100 })
        const error = yield* Effect.flip(redis.execute(["HOLD"], { timeout: 250 }))
        assert.strictEqual(error.reason._tag, "Timeout")
        const errorReason = error.reason
        if (errorReason._tag !== "Timeout") continue
        assert.strictEqual(errorReason.timeout, 250, kind)
        assert.include(error.message, "within 250 ms", kind)
      }
      // A pool of one, busy: the wait for a free connection and the call share one budget.
      const pooled = yield* build("pooled1", fake.url, { closeTimeout: 100 })
      const busy = yield* Effect.forkChild(pooled.service.execute(["SLOW"]), { startImmediately: true })
      yield* Effect.sleep(50)
      const waited = yield* Effect.flip(pooled.service.execute(["HOLD"], { timeout: 600 }))
      assert.strictEqual(waited.reason._tag, "Timeout")
      if (waited.reason._tag === "Timeout") {
        assert.isTrue(waited.written)
        assert.strictEqual(waited.reason.timeout, 600)
        assert.include(waited.message, "within 600 ms")
      }
      assert.strictEqual(yield* Fiber.join(busy), "done")
      const full = yield* Effect.forkChild(pooled.service.execute(["SLOW"]), { startImmediately: true })
      yield* Effect.sleep(50)
      const never = yield* Effect.flip(pooled.service.execute(["PING"], { timeout: 100 }))
      assert.strictEqual(never.reason._tag, "Timeout")
      if (never.reason._tag === "Timeout") {
        assert.isFalse(never.written)
        assert.strictEqual(never.reason.timeout, 100)
        assert.include(never.message, "(size 1) became free within 100 ms")
      }
      yield* Fiber.join(full)
    })
  )

  it.live(
    "a silent half-open peer (half a reply, then nothing) is recovered from with default options, on every strategy",
    () =>
      Effect.gen(function* () {
        // HALF is answered with half a bulk reply, then the connection goes silent for good.
        const fake = yield* halfOpenPeer
        // The strategies run side by side: each waits out the default bound (10 s) once.
        const results = yield* Effect.forEach(
          kinds,
          (kind) =>
            Effect.gen(function* () {
              const { service: redis, engines } = yield* build(kind, fake.url)
              assert.strictEqual((yield* RedisOptions.resolve({ url: fake.url })).deadPeerTimeout, 10_000)
              const half = yield* Effect.flip(redis.execute(["HALF"], { timeout: 300 }))
              assert.strictEqual(half.reason._tag, "Timeout")
              if (half.reason._tag === "Timeout") assert.isTrue(half.written)
              // Calls keep going until served (bounded well past the 10 s bound), then a burst is all served.
              yield* untilServed(redis, 60)
              for (let round = 0; round < 40; round++) {
                if ((yield* burst(redis, `${kind}-${round}`)) === 40) break
                yield* Effect.sleep(300)
              }
              // Spread routing avoids the dead engine (its owed permits make it the most loaded),
              // so also wait for the rule to replace it (bounded, well past the 10 s bound).
              const connects = () => engines.reduce((n, engine) => n + engine.connects, 0)
              for (let i = 0; i < 150 && engines.length > 0 && connects() === engines.length; i++) {
                yield* Effect.sleep(100)
              }
              const own = yield* burst(redis, `${kind}-final`)
              assert.strictEqual(own, 40, `${kind}: ${own}/40 after recovery`)
              yield* aligned(redis, `${kind}-aligned`)
              return { kind, connects: connects(), engines: engines.length }
            }),
          { concurrency: "unbounded" }
        )
        for (const { kind, connects, engines } of results) {
          // The dead connection was replaced: one more connect than engines.
          if (kind !== "pooled4") assert.strictEqual(connects, engines + 1, kind)
        }
      })
  )

  it.live(
    "the dead-peer controls: a short bound recovers fast; off, a shared connection stays dead; pooled is replaced when lent",
    () =>
      Effect.gen(function* () {
        const fake = yield* halfOpenPeer
        // deadPeerTimeout 400 ms: the single engine is replaced, with a message naming the rule.
        const fast = yield* build("single", fake.url, { deadPeerTimeout: 400 })
        assert.strictEqual(
          (yield* Effect.flip(fast.service.execute(["HALF"], { timeout: 100 }))).reason._tag,
          "Timeout"
        )
        const owed = yield* Effect.flip(fast.service.execute(["ECHO", "owed"], { timeout: 5000 }))
        assert.strictEqual(owed.reason._tag, "ConnectionLost")
        assert.include(owed.message, "deadPeerTimeout")
        yield* untilServed(fast.service, 40)
        assert.strictEqual(fast.engines[0]!.connects, 2)
        // Off: the shared connection stays dead (bounded look: 1.5 s of probes).
        const off = yield* build("single", fake.url, { deadPeerTimeout: "Infinity", closeTimeout: 100 })
        yield* Effect.flip(off.service.execute(["HALF"], { timeout: 100 }))
        for (let i = 0; i < 5; i++) {
          assert.strictEqual(
            (yield* Effect.flip(off.service.execute(["ECHO", "never"], { timeout: 300 }))).reason._tag,
            "Timeout"
          )
        }
        assert.strictEqual(off.engines[0]!.connects, 1)
        // Pooled with the timer rule off: the connection is still replaced before it is lent again.
        const pooled = yield* build("pooled4", fake.url, { deadPeerTimeout: "Infinity" })
        yield* Effect.flip(pooled.service.execute(["HALF"], { timeout: 100 }))
        for (let round = 0; round < 3; round++) assert.strictEqual(yield* burst(pooled.service, `pooled-${round}`), 40)
      })
  )
})
