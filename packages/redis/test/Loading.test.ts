/**
 * A real server loading its dataset after a restart, on the server of the project (the server
 * matrix runs it on Redis 8.2 and Valkey 9.1 too): while it loads, every server answers `PING`
 * and user commands with `-LOADING` (Redis: "Redis is loading …", Valkey: "Valkey is loading …")
 * and accepts `HELLO`, `SELECT` and `CLIENT SETNAME`, which is what the handshake's probe relies
 * on. `key-load-delay` (a server setting, microseconds per key) stretches the load of a few
 * thousand keys so the client reconnects in the middle of it. (With the default
 * `loading-process-events-interval-bytes` of 2 MiB, a small dataset is loaded without serving
 * events at all: a connection is accepted and simply waits, bounded by `connectTimeout`.)
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as RedisConnection from "../src/RedisConnection.ts"
import { assertMatrixServer } from "./fixtures/Matrix.ts"
import { build } from "./fixtures/Strategies.ts"
import { until } from "./fixtures/Until.ts"

describe("a server loading its dataset", { timeout: 60_000 }, () => {
  for (const protocol of [2, 3] as const) {
    it.live(
      `RESP${protocol}: calls made during the restart and the load wait for it (the probe meets LOADING); none fails`,
      () =>
        Effect.gen(function* () {
          const server = yield* Embedded.make({
            args: [
              "--enable-debug-command",
              "yes",
              "--key-load-delay",
              "200",
              // Events (and so connections) are served every 1 KiB of the file read, not every 2 MiB.
              "--loading-process-events-interval-bytes",
              "1024"
            ]
          })
          const name = assertMatrixServer(server.server)
          const admin = yield* RedisConnection.makeSingle({ url: server.url, database: 1 })
          yield* admin.execute(["DEBUG", "POPULATE", 3000, "key", 8])
          yield* admin.execute(["SET", "marker", "saved"])
          yield* admin.execute(["SAVE"])
          const { service: redis, engines } = yield* build("multiplexed2", server.url, {
            protocol,
            database: 1,
            clientName: "loading",
            reconnect: { baseDelay: 10, maxDelay: 40 },
            offlineTimeout: "30 seconds"
          })
          assert.strictEqual(replyToString(yield* redis.execute(["GET", "marker"])), "saved")
          yield* server.kill
          // Until both engines saw their connection go: a call written to a dying socket would be
          // lost with `written: true`, which is the Faults tests' subject, not this one's.
          yield* until(
            Effect.sync(() => engines.every((engine) => !engine.online)),
            "the engines saw the server go"
          )
          const restarted = yield* Effect.forkChild(server.restart, { startImmediately: true })
          // Sent while the server is down and then loading: each waits (unsent) for a handshake
          // whose probe answers PONG, so none meets -LOADING.
          const exits = yield* Effect.forEach(
            Array.from({ length: 40 }, (_, i) => i),
            (i) => Effect.exit(redis.execute(i % 2 === 0 ? ["GET", "marker"] : ["EXISTS", `key:${i}`])),
            { concurrency: "unbounded" }
          )
          yield* Fiber.join(restarted)
          const failures = exits.filter(Exit.isFailure).map((exit) => String(exit.cause))
          assert.deepStrictEqual(failures, [], `${name}: calls failed across the restart`)
          exits.forEach((exit, i) => {
            if (Exit.isSuccess(exit)) {
              assert.deepStrictEqual(i % 2 === 0 ? replyToString(exit.value) : exit.value, i % 2 === 0 ? "saved" : 1)
            }
          })
          const probes = engines.reduce((n, engine) => n + engine.loadingProbes, 0)
          console.log(`${name} RESP${protocol}: the handshake's probe met LOADING ${probes} times`)
          assert.isAbove(probes, 0, `${name}: the client never reconnected while the server was loading`)
          // The server loaded what it saved (the load was real, into database 1).
          assert.strictEqual(yield* redis.execute(["DBSIZE"]), 3001)
        })
    )
  }
})
