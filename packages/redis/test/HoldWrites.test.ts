/**
 * `holdWritesAbove`: while a connection owes more replies than the bound, later commands wait
 * in the client, unsent, and go out together once a reply brings the count down. Against a
 * scripted peer that answers only when the test opens a gate, so what reached the server, and
 * when, is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as RedisOptions from "../src/RedisOptions.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import { build } from "./fixtures/Strategies.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

const bulk = (value: string) => `$${value.length}\r\n${value}\r\n`

/** A gate the peer's answer waits behind, opened by the test. */
const gate = () => {
  let open: () => void = () => undefined
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

/**
 * A peer that records every ECHO it receives and answers it with its argument; the answer to
 * `ECHO first` (and so every answer after it: a connection's answers keep their order) waits
 * for `first.open()`.
 */
const gatedPeer = Effect.gen(function* () {
  const first = gate()
  const received: Array<string> = []
  const fake = yield* FakeServer.make((command) => {
    if (command[0] === "PING") return "+PONG\r\n"
    received.push(command.slice(1).join(" "))
    if (command[0] !== "ECHO") return "-ERR unknown\r\n"
    return command[1] === "first" ? { gate: first.opened, bytes: bulk("first") } : bulk(command[1]!)
  })
  return { fake, received, first }
})

/** Long enough for a write the client made to reach the peer (this is about absence). */
const settle = Effect.sleep(100)

describe("holdWritesAbove", { timeout: 30_000 }, () => {
  it.live("commands beyond the bound wait in the client and go out together once a reply brings the count down", () =>
    Effect.gen(function* () {
      const { fake, received, first } = yield* gatedPeer
      const { service: redis } = yield* build("single", fake.url, { holdWritesAbove: 1, commandTimeout: "Infinity" })
      // Off the handshake reply's turn: commands sent while a chunk of replies wakes its
      // callers go out with that chunk's write, whatever is owed.
      yield* Effect.yieldNow
      const call = (value: string) => Effect.forkChild(redis.execute(["ECHO", value]), { startImmediately: true })
      const early = [yield* call("first"), yield* call("second")]
      while (received.length < 2) yield* Effect.sleep(5)
      // Two owed (first, second): the third and fourth are held.
      const late = [yield* call("third"), yield* call("fourth")]
      yield* settle
      assert.deepStrictEqual(received, ["first", "second"])
      first.open()
      const replies = yield* Effect.forEach([...early, ...late], Fiber.join)
      assert.deepStrictEqual(replies.map(text), ["first", "second", "third", "fourth"])
      assert.deepStrictEqual(received, ["first", "second", "third", "fourth"])
    })
  )

  it.live("a held command whose caller times out or is interrupted is never sent (written: false)", () =>
    Effect.gen(function* () {
      const { fake, received, first } = yield* gatedPeer
      const { service: redis, engines } = yield* build("single", fake.url, {
        holdWritesAbove: 0,
        commandTimeout: "Infinity"
      })
      yield* Effect.yieldNow
      const owed = yield* Effect.forkChild(redis.execute(["ECHO", "first"]), { startImmediately: true })
      const interrupted = yield* Effect.forkChild(redis.execute(["ECHO", "interrupted"]), { startImmediately: true })
      const timedOut = yield* Effect.flip(redis.execute(["ECHO", "timed-out"], { timeout: 50 }))
      assert.strictEqual(timedOut.reason._tag, "Timeout")
      if (timedOut.reason._tag === "Timeout") assert.isFalse(timedOut.reason.written)
      yield* Fiber.interrupt(interrupted)
      first.open()
      assert.strictEqual(text(yield* Fiber.join(owed)), "first")
      assert.strictEqual(text(yield* redis.execute(["ECHO", "after"])), "after")
      assert.deepStrictEqual(received, ["first", "after"])
      assert.strictEqual(engines[0]!.window.inUse, 0)
    })
  )

  it.effect("the bound is an integer >= 0", () =>
    Effect.gen(function* () {
      for (const bad of [-1, 1.5, Number.NaN, "2" as unknown as number]) {
        const error = yield* Effect.flip(RedisOptions.resolve({ holdWritesAbove: bad }))
        assert.strictEqual(error.reason._tag, "Config")
        assert.include(error.message, "holdWritesAbove")
      }
      assert.strictEqual((yield* RedisOptions.resolve({})).holdWritesAbove, Number.POSITIVE_INFINITY)
      assert.strictEqual((yield* RedisOptions.resolve({ holdWritesAbove: 0 })).holdWritesAbove, 0)
    })
  )
})
