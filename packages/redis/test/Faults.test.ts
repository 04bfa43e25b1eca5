/**
 * Fault tests against real processes and sockets: killed connections, a killed and
 * restarted server, a stopped server, re-chunking and cutting proxies, and peers that
 * break the protocol. Every test is bounded and stops what it starts.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { RedisConnection } from "../src/RedisConnection.ts"
import type { RedisError } from "../src/RedisError.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import { build } from "./fixtures/Strategies.ts"
import * as TcpProxy from "./fixtures/Proxy.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

interface Ledger {
  acknowledged: number
  unknown: number
  neverSent: number
  successes: number
  failures: Array<string>
}

/** Classifies each settled INCRBY: acknowledged, may-have-run, or never sent. Anything else fails the test. */
const ledgerOf = (exits: ReadonlyArray<Exit.Exit<unknown, RedisError>>, amounts: ReadonlyArray<number>): Ledger => {
  const ledger: Ledger = { acknowledged: 0, unknown: 0, neverSent: 0, successes: 0, failures: [] }
  exits.forEach((exit, i) => {
    if (Exit.isSuccess(exit)) {
      ledger.acknowledged += amounts[i]
      ledger.successes++
      return
    }
    const reason = exit.cause.reasons[0]
    assert.strictEqual(reason?._tag, "Fail", `call ${i} ended with ${reason?._tag} instead of a typed error`)
    if (reason._tag !== "Fail") return
    const error = reason.error
    ledger.failures.push(error.reason._tag)
    switch (error.reason._tag) {
      case "ConnectionLost":
      case "Timeout":
        if (error.written) ledger.unknown += amounts[i]
        else ledger.neverSent += amounts[i]
        return
      case "Protocol":
        ledger.unknown += amounts[i]
        return
      case "Offline":
        ledger.neverSent += amounts[i]
        return
      case "Reply":
        // LOADING, BUSY, MASTERDOWN, TRYAGAIN: refused before it ran, so it was not applied.
        if (error.reason.notExecuted) {
          ledger.neverSent += amounts[i]
          ledger.failures.push(`${error.reason._tag}:${error.reason.code}`)
          return
        }
        assert.fail(`call ${i} failed with an unexpected reply error: ${error.message}`)
        return
      default:
        assert.fail(`call ${i} failed with an unexpected ${error.reason._tag}: ${error.message}`)
    }
  })
  return ledger
}

const aligned = (redis: RedisConnection["Service"], tag: string) =>
  Effect.gen(function* () {
    const echoes = yield* Effect.forEach(
      Array.from({ length: 200 }, (_, i) => i),
      (i) => redis.execute(["ECHO", `${tag}-${i}`]),
      { concurrency: "unbounded" }
    )
    echoes.forEach((echo, i) => {
      assert.strictEqual(text(echo), `${tag}-${i}`)
    })
  })

/**
 * A single client on a scripted peer that answers PING itself and records every other command
 * with the number of the connection it came on; no command timeout (a command left behind
 * would wait for ever, and the test time out), quick reconnects.
 */
const recordingPeer = (answer: (command: Array<string>) => string | undefined) =>
  Effect.gen(function* () {
    const received: Array<string> = []
    const fake = yield* FakeServer.make((command, connection) => {
      if (command[0] === "PING") return "+PONG\r\n"
      received.push(`${command.join(" ")} @${connection}`)
      return answer(command)
    })
    const { service: redis, engines } = yield* build("single", fake.url, {
      commandTimeout: "Infinity",
      reconnect: { baseDelay: 10, maxDelay: 50 }
    })
    return { received, redis, engines }
  })

/** Retries until the client serves again (after a reconnect), bounded. */
const untilOnline = (redis: RedisConnection["Service"]) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 200; attempt++) {
      const exit = yield* Effect.exit(redis.execute(["PING"], { timeout: 500 }))
      if (Exit.isSuccess(exit)) return
      yield* Effect.sleep(25)
    }
    assert.fail("the client did not come back online")
  })

describe("faults", { timeout: 60_000 }, () => {
  for (const kind of ["single", "pooled8", "multiplexed1", "multiplexed8"] as const) {
    it.live(`${kind}: CLIENT KILL loops during a burst; INCRBY ledger proves no duplicate execution`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const { service: redis, engines } = yield* build(kind, server.url, { clientName: "victim" })
        const { service: admin } = yield* build("single", server.url, { clientName: "admin" })
        const key = `ledger-${kind}`
        const amounts = Array.from({ length: 3000 }, (_, i) => 1 + (i % 7))
        const killer = yield* Effect.forkChild(
          Effect.gen(function* () {
            for (let round = 0; round < 15; round++) {
              yield* Effect.sleep(15)
              yield* admin.execute(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
            }
          })
        )
        const exits = yield* Effect.forEach(amounts, (amount) => Effect.exit(redis.execute(["INCRBY", key, amount])), {
          concurrency: 64
        })
        yield* Fiber.join(killer)
        yield* untilOnline(redis)
        const ledger = ledgerOf(exits, amounts)
        const final = Number(text(yield* admin.execute(["GET", key])))
        assert.isAtLeast(final, ledger.acknowledged)
        assert.isAtMost(final, ledger.acknowledged + ledger.unknown)
        yield* aligned(redis, `after-kill-${kind}`)
        if (engines.length > 0)
          assert.isAbove(
            engines.reduce((n, engine) => n + engine.connects, 0),
            engines.length
          )
        // The handshake ran again on the new connections: they carry the client name.
        const clients = text(yield* admin.execute(["CLIENT", "LIST"]))
        assert.include(clients, "name=victim ")
      })
    )
  }

  it.live("kill -9 of the server mid-burst, restart on the same port: every call settles, ledger holds", () =>
    Effect.gen(function* () {
      // appendfsync always: an acknowledged INCRBY survives the kill, so the ledger is exact.
      const server = yield* Embedded.make({ args: ["--appendonly", "yes", "--appendfsync", "always"] })
      const { service: redis, engines } = yield* build("multiplexed8", server.url, {
        clientName: "survivor",
        database: 3,
        reconnect: { baseDelay: 20, maxDelay: 200 }
      })
      const amounts = Array.from({ length: 2000 }, (_, i) => 1 + (i % 5))
      const burst = yield* Effect.forkChild(
        Effect.forEach(amounts, (amount) => Effect.exit(redis.execute(["INCRBY", "restart-ledger", amount])), {
          concurrency: 32
        })
      )
      yield* Effect.sleep(40)
      yield* server.kill
      yield* Effect.sleep(100)
      yield* server.restart
      const exits = yield* Fiber.join(burst)
      yield* untilOnline(redis)
      const ledger = ledgerOf(exits, amounts)
      // The handshake's probe holds user commands while the restarted server loads its
      // append-only file: none of them meets -LOADING.
      assert.notInclude(ledger.failures, "Reply:LOADING")
      const value = yield* redis.execute(["GET", "restart-ledger"])
      const final = value === null ? 0 : Number(text(value))
      assert.isAtLeast(final, ledger.acknowledged)
      assert.isAtMost(final, ledger.acknowledged + ledger.unknown)
      yield* aligned(redis, "after-restart")
      assert.isAbove(
        engines.reduce((n, engine) => n + engine.connects, 0),
        engines.length
      )
      // Re-handshake: SELECT 3 was applied again (the key is in db 3, not db 0).
      const { service: db0 } = yield* build("single", server.url)
      assert.strictEqual(yield* db0.execute(["EXISTS", "restart-ledger"]), 0)
    })
  )

  it.live(
    "a server loading its dataset: the handshake holds user commands until the probe stops answering LOADING",
    () =>
      Effect.gen(function* () {
        // Every connection's server "loads" for its first three PINGs and refuses INCR meanwhile.
        let loadingPings = 3
        const left = new Map<number, number>()
        const received = new Map<number, Array<string>>()
        const loading = "-LOADING Redis is loading the dataset in memory\r\n"
        const fake = yield* FakeServer.make((command, connection) => {
          if (!received.has(connection)) {
            received.set(connection, [])
            left.set(connection, loadingPings)
          }
          received.get(connection)!.push(command.join(" "))
          const remaining = left.get(connection)!
          if (command[0] === "SELECT" || command[0] === "CLIENT") return "+OK\r\n"
          if (command[0] === "PING") {
            if (remaining > 0) {
              left.set(connection, remaining - 1)
              return loading
            }
            return "+PONG\r\n"
          }
          if (command[0] === "INCR") return remaining > 0 ? loading : ":1\r\n"
          return "-ERR unknown\r\n"
        })
        for (const kind of ["single", "pooled8", "multiplexed1", "multiplexed8"] as const) {
          received.clear()
          // Each client closes before the next: a pool still handshaking would blur the record.
          yield* Effect.scoped(check(kind))
        }
        function check(kind: "single" | "pooled8" | "multiplexed1" | "multiplexed8") {
          return Effect.gen(function* () {
            const { service: redis, engines } = yield* build(kind, fake.url, { database: 2, clientName: "held" })
            const replies = yield* Effect.forEach(
              Array.from({ length: 16 }, () => ["INCR", "n"]),
              (command) => redis.execute(command),
              { concurrency: "unbounded" }
            )
            assert.deepStrictEqual(
              replies,
              Array.from({ length: 16 }, () => 1)
            )
            assert.isAbove(received.size, 0)
            // SELECT and CLIENT SETNAME (allowed while loading), then PING until it answers PONG;
            // user commands only after that. (A pool may still be handshaking its other connections.)
            let served = 0
            for (const commands of received.values()) {
              const handshake = ["SELECT 2", "CLIENT SETNAME held", "PING", "PING", "PING", "PING"]
              assert.deepStrictEqual(commands.slice(0, handshake.length), handshake.slice(0, commands.length))
              const incrs = commands.filter((command) => command === "INCR n").length
              assert.deepStrictEqual(commands.slice(handshake.length), Array(incrs).fill("INCR n"))
              served += incrs
            }
            assert.strictEqual(served, 16)
            for (const engine of engines) assert.strictEqual(engine.loadingProbes, 3)
          })
        }
        // A server that keeps loading past connectTimeout: the connect fails, saying why.
        loadingPings = Number.POSITIVE_INFINITY
        const error = yield* Effect.flip(build("single", fake.url, { connectTimeout: 1500 }))
        assert.strictEqual(error.reason._tag, "Offline")
        assert.include(error.message, "still loading its dataset after 1500 ms")
      })
  )

  it.live("a transient error reply (LOADING, BUSY, MASTERDOWN, TRYAGAIN) is retryable and marked not executed", () =>
    Effect.gen(function* () {
      const fake = yield* FakeServer.make((command) => {
        if (command[0] === "PING") return "+PONG\r\n"
        if (command[0] === "FAIL") return `-${command[1]} the server says no\r\n`
        return "-ERR unknown\r\n"
      })
      const { service: redis } = yield* build("single", fake.url)
      for (const code of ["LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "ERR", "WRONGTYPE"]) {
        const error = yield* Effect.flip(redis.execute(["FAIL", code]))
        assert.strictEqual(error.reason._tag, "Reply")
        if (error.reason._tag !== "Reply") continue
        const transient = code !== "ERR" && code !== "WRONGTYPE"
        assert.strictEqual(error.reason.code, code)
        assert.strictEqual(error.reason.notExecuted, transient, code)
        assert.strictEqual(error.isRetryable, transient, code)
        if (transient) assert.include(error.hint, "did not run")
      }
    })
  )

  it.live("SIGSTOP/SIGCONT: timeouts fire with written: true, late replies are read and dropped", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const { service: redis, engines } = yield* build("single", server.url)
      yield* redis.execute(["SET", "stopped", "before"])
      yield* server.signal("SIGSTOP")
      const timedOut = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i) => Effect.flip(redis.execute(["SET", `stopped-${i}`, "late"], { timeout: 100 })),
        { concurrency: "unbounded" }
      )
      for (const error of timedOut) {
        assert.strictEqual(error.reason._tag, "Timeout")
        assert.isTrue(error.written)
      }
      // Owed replies keep their permits until they arrive.
      assert.strictEqual(engines[0].window.inUse, 50)
      yield* server.signal("SIGCONT")
      yield* aligned(redis, "after-sigcont")
      assert.strictEqual(engines[0].window.inUse, 0)
      const late = yield* redis.execute(["GET", "stopped-49"])
      assert.strictEqual(text(late), "late")
      assert.strictEqual(engines[0].connects, 1)
    })
  )

  it.live("stall detector: a stopped server's connection is replaced; its late bytes never reach new requests", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const { service: redis, engines } = yield* build("single", server.url, {
        commandTimeout: 100,
        stallTimeout: 300,
        connectTimeout: 200,
        reconnect: { baseDelay: 20, maxDelay: 50 }
      })
      yield* server.signal("SIGSTOP")
      const owed = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => Effect.forkChild(Effect.flip(redis.execute(["ECHO", `stale-${i}`], { timeout: 250 }))),
        { discard: false }
      )
      const errors = yield* Effect.forEach(owed, Fiber.join)
      for (const error of errors) {
        assert.strictEqual(error.reason._tag, "Timeout")
        assert.isTrue(error.written)
      }
      // The detector tears the connection down while the server is stopped (polled for up to 10 s:
      // a loaded machine may run the sweep late; the assertion is that it happens at all).
      for (let i = 0; i < 1000 && engines[0].online; i++) yield* Effect.sleep(10)
      assert.isFalse(engines[0].online)
      yield* server.signal("SIGCONT")
      yield* untilOnline(redis)
      yield* aligned(redis, "fresh")
      assert.isAtLeast(engines[0].connects, 2)
      assert.strictEqual(engines[0].window.inUse, 0)
      // A timeout above stallTimeout is diverted to a connection of its own.
      assert.strictEqual(yield* redis.execute(["PING"], { timeout: 1000 }), "PONG")
      const refused = yield* Effect.flip(redis.submit(["PING"], { timeout: 1000 }))
      assert.strictEqual(refused.reason._tag, "NotMultiplexable")
    })
  )

  it.live("a proxy that writes one byte at a time: every reply still lands on its own caller", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const proxy = yield* TcpProxy.make({ targetPort: server.port, oneByteWrites: true })
      const { service: redis } = yield* build("multiplexed1", proxy.url)
      yield* aligned(redis, "rechunked")
      const big = "v".repeat(5000)
      yield* redis.execute(["SET", "big", big])
      assert.strictEqual(text(yield* redis.execute(["GET", "big"])), big)
      const replies = yield* redis.pipeline([
        ["INCR", "n"],
        ["LPUSH", "big", "x"],
        ["MGET", "n", "none"]
      ])
      assert.strictEqual(replies[0], 1)
      assert.match((replies[1] as { message: string }).message, /^WRONGTYPE/)
      assert.deepStrictEqual(
        (replies[2] as Array<unknown>).map((r) => (r === null ? null : text(r))),
        ["1", null]
      )
    })
  )

  it.live("a proxy that drops the connection inside a 1 MiB reply: written: true, then a clean reconnect", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const proxy = yield* TcpProxy.make({ targetPort: server.port })
      const { service: redis } = yield* build("single", proxy.url, { reconnect: { baseDelay: 10, maxDelay: 50 } })
      const value = "m".repeat(1024 * 1024)
      yield* redis.execute(["SET", "mib", value])
      proxy.cutAfter(300_000)
      const lost = yield* Effect.flip(redis.execute(["GET", "mib"]))
      assert.strictEqual(lost.reason._tag, "ConnectionLost")
      assert.isTrue(lost.written)
      assert.strictEqual(proxy.cuts(), 1)
      yield* untilOnline(redis)
      assert.strictEqual(text(yield* redis.execute(["GET", "mib"])), value)
    })
  )

  it.live("a peer that sends a malformed frame: protocol error for everything in flight, nothing misattributed", () =>
    Effect.gen(function* () {
      let poisoned = false
      const fake = yield* FakeServer.make((command) => {
        if (command[0] === "PING") return "+PONG\r\n"
        if (command[0] === "ECHO") return `$${command[1].length}\r\n${command[1]}\r\n`
        if (command[0] === "POISON") {
          poisoned = true
          return "$5\r\nabc" // the rest follows with the next reply, breaking the frame
        }
        if (command[0] === "HOLD") return poisoned ? "XYZ\r\n" : undefined
        return "-ERR unknown\r\n"
      })
      const { service: redis } = yield* build("single", fake.url, { reconnect: { baseDelay: 10, maxDelay: 50 } })
      assert.strictEqual(text(yield* redis.execute(["ECHO", "fine"])), "fine")
      const poison = yield* Effect.forkChild(Effect.flip(redis.execute(["POISON"])), { startImmediately: true })
      const held = yield* Effect.forkChild(Effect.flip(redis.execute(["HOLD"])), { startImmediately: true })
      const errors = [yield* Fiber.join(poison), yield* Fiber.join(held)]
      for (const error of errors) assert.strictEqual(error.reason._tag, "Protocol")
      yield* untilOnline(redis)
      assert.strictEqual(text(yield* redis.execute(["ECHO", "after"])), "after")
      assert.isAtLeast(fake.connections(), 2)
    })
  )

  it.live(
    "a chunk that answers a caller and then breaks the connection: what the caller sent meanwhile goes out on the next connection",
    () =>
      Effect.gen(function* () {
        const { received, redis } = yield* recordingPeer((command) => {
          // One write: the reply, then bytes no RESP reply starts with.
          if (command[0] === "BREAK") return "+broken\r\n!!!\r\n"
          if (command[0] === "ECHO") return `$${command[1]!.length}\r\n${command[1]}\r\n`
          return "-ERR unknown\r\n"
        })
        // The caller is woken by the chunk that then turns out malformed, and sends at once:
        // its ECHO was never written, so it is sent on the next connection, exactly once.
        const after = yield* redis.execute(["BREAK"]).pipe(Effect.andThen(redis.execute(["ECHO", "next"])))
        assert.strictEqual(text(after), "next")
        assert.deepStrictEqual(received, ["BREAK @1", "ECHO next @2"])
      })
  )

  it.live(
    "a caller's own code tears the connection down while its chunk wakes other callers: what they sent was never written, fails as not sent, and replies stay aligned",
    () =>
      Effect.gen(function* () {
        const { received, redis, engines } = yield* recordingPeer((command) => {
          if (command[0] !== "ECHO") return "-ERR unknown\r\n"
          // "first" is answered together with "second": one write, so one chunk wakes both callers.
          if (command[1] === "first") return undefined
          if (command[1] === "second") return "$5\r\nfirst\r\n$6\r\nsecond\r\n"
          return `$${command[1]!.length}\r\n${command[1]}\r\n`
        })
        // Woken first, this caller sends at once; the second caller, woken next by the same
        // chunk, resets the connection before the chunk's commands are written.
        const first = yield* Effect.forkChild(
          redis.execute(["ECHO", "first"]).pipe(Effect.andThen(Effect.flip(redis.execute(["ECHO", "meanwhile"])))),
          { startImmediately: true }
        )
        const second = yield* Effect.forkChild(
          redis
            .execute(["ECHO", "second"])
            .pipe(Effect.andThen(Effect.sync(() => engines[0]!.reset("reset by a caller")))),
          { startImmediately: true }
        )
        yield* Fiber.join(second)
        const error = yield* Fiber.join(first)
        assert.strictEqual(error.reason._tag, "ConnectionLost")
        if (error.reason._tag === "ConnectionLost") assert.isFalse(error.reason.written)
        assert.include(error.message, "before the command was written; it was not sent")
        yield* untilOnline(redis)
        yield* aligned(redis, "after-reset")
        assert.isFalse(
          received.some((line) => line.startsWith("ECHO meanwhile")),
          "never sent on any connection"
        )
      })
  )

  it.live("a peer that sends an extra reply: the connection is reset, later replies stay aligned", () =>
    Effect.gen(function* () {
      const fake = yield* FakeServer.make((command, connection) => {
        if (command[0] === "PING") return "+PONG\r\n"
        if (command[0] === "ECHO") {
          const reply = `$${command[1].length}\r\n${command[1]}\r\n`
          // The first connection answers the first ECHO twice.
          return connection === 1 && command[1] === "twice" ? reply + reply : reply
        }
        return "-ERR unknown\r\n"
      })
      const { service: redis, engines } = yield* build("single", fake.url, {
        reconnect: { baseDelay: 10, maxDelay: 50 }
      })
      assert.strictEqual(text(yield* redis.execute(["ECHO", "twice"])), "twice")
      yield* untilOnline(redis)
      yield* aligned(redis, "after-extra")
      assert.strictEqual(fake.connections(), 2)
      assert.strictEqual(engines[0].connects, 2)
    })
  )

  it.live("a 20 MiB SET and GET pipelined on one engine complete (no TCP deadlock)", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const { service: redis } = yield* build("multiplexed1", server.url, { commandTimeout: "30 seconds" })
      const value = new Uint8Array(20 * 1024 * 1024).fill(0x61)
      const replies = yield* redis.pipeline([
        ["SET", "twenty", value],
        ["GET", "twenty"],
        ["SET", "twenty-b", value],
        ["GET", "twenty-b"]
      ])
      assert.strictEqual(replies[0], "OK")
      assert.strictEqual((replies[1] as Uint8Array).length, value.length)
      assert.strictEqual((replies[3] as Uint8Array)[value.length - 1], 0x61)
    })
  )

  it.live("wrong port fails fast at construction with a clear error", () =>
    Effect.gen(function* () {
      // Port 1 on loopback: nothing listens (it is privileged and unused).
      const silentPeer = yield* FakeServer.make(() => undefined)
      const port = silentPeer.port
      const error = yield* Effect.flip(build("single", `redis://127.0.0.1:1`))
      assert.strictEqual(error.reason._tag, "Offline")
      assert.include(error.message, "127.0.0.1:1/0")
      assert.include(error.message, "nothing listens there")
      // A peer that accepts but never answers the handshake: bounded by connectTimeout.
      const silent = yield* Effect.flip(build("single", `redis://127.0.0.1:${port}`, { connectTimeout: 200 }))
      assert.strictEqual(silent.reason._tag, "Offline")
      assert.include(silent.message, "did not answer the handshake within 200 ms")
    })
  )

  it.live("TLS against a plain server fails fast and says so", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const error = yield* Effect.flip(
        build("single", `rediss://127.0.0.1:${server.port}`, {
          connectTimeout: 500,
          tls: { rejectUnauthorized: false }
        })
      )
      assert.strictEqual(error.reason._tag, "Offline")
      assert.match(error.message, /TLS/)
    })
  )

  it.live("a wrong password fails the handshake with the server's reason", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ args: ["--requirepass", "s3cret"] })
      const error = yield* Effect.flip(build("single", `redis://:wrong@127.0.0.1:${server.port}`))
      assert.strictEqual(error.reason._tag, "Reply")
      assert.include(error.message, "AUTH")
      assert.notInclude(error.message, "wrong")
      const { service: redis } = yield* build("single", `redis://:s3cret@127.0.0.1:${server.port}/2`)
      assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
    })
  )

  it.live("offlineQueue failFast: commands fail with reason Offline while disconnected, never sent", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const { service: redis } = yield* build("single", server.url, {
        offlineQueue: "failFast",
        reconnect: { baseDelay: 50, maxDelay: 100 }
      })
      yield* server.kill
      yield* Effect.sleep(50)
      const error = yield* Effect.flip(redis.execute(["SET", "offline", "x"]))
      assert.strictEqual(error.reason._tag, "Offline")
      yield* server.restart
      yield* untilOnline(redis)
      assert.strictEqual(yield* redis.execute(["EXISTS", "offline"]), 0)
    })
  )

  it.live("offlineQueue queue (default): unwritten commands wait for the reconnect and run once", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const { service: redis } = yield* build("single", server.url, { reconnect: { baseDelay: 20, maxDelay: 50 } })
      yield* server.kill
      yield* Effect.sleep(50)
      const queued = yield* Effect.forkChild(redis.execute(["INCR", "queued"]), { startImmediately: true })
      yield* Effect.sleep(100)
      yield* server.restart
      assert.strictEqual(yield* Fiber.join(queued), 1)
      assert.strictEqual(text(yield* redis.execute(["GET", "queued"])), "1")
    })
  )
})
