/**
 * Sentinel on real processes: one primary, two replicas and three sentinels on loopback
 * (data AUTH and sentinel AUTH with different passwords), started and stopped by the test.
 * Reads from replicas, then a burst of INCRBY transactions from many fibers through every
 * strategy across `SENTINEL FAILOVER` and across a `kill -9` of the primary, with the ledger.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { ErrorReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisPubSub from "../src/RedisPubSub.ts"
import type { RedisError } from "../src/RedisError.ts"
import * as Ledger from "./fixtures/Ledger.ts"

type Service = RedisConnection.RedisConnection["Service"]

const NAME = "effectfalkor"
const DATA_PASSWORD = "data-secret"
const SENTINEL_PASSWORD = "sentinel-secret"

const text = (reply: Reply): string => replyToString(reply) ?? String(reply)

const infoField = (info: Reply, field: string): string | undefined =>
  new RegExp(`^${field}:(.*)$`, "m").exec(text(info))?.[1]?.trim()

/** Polls `check` every 50 ms until it holds, at most `attempts` times. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, attempts = 400) =>
  Effect.gen(function* () {
    for (let i = 0; i < attempts; i++) {
      const ok = yield* Effect.orElseSucceed(check, () => false)
      if (ok) return
      yield* Effect.sleep(50)
    }
    assert.fail(`timed out waiting for ${what}`)
  })

/** 1 primary + 2 replicas + 3 sentinels, all stopped with the scope. */
const topology = Effect.gen(function* () {
  const dataArgs = ["--masterauth", DATA_PASSWORD, "--repl-ping-replica-period", "1"]
  const password = Redacted.make(DATA_PASSWORD)
  const primary = yield* Embedded.make({ password, args: dataArgs })
  const replicas = [
    yield* Embedded.make({ password, args: [...dataArgs, "--replicaof", "127.0.0.1", String(primary.port)] }),
    yield* Embedded.make({ password, args: [...dataArgs, "--replicaof", "127.0.0.1", String(primary.port)] })
  ]
  const servers = [primary, ...replicas]
  const config = [
    `sentinel monitor ${NAME} 127.0.0.1 ${primary.port} 2`,
    `sentinel auth-pass ${NAME} ${DATA_PASSWORD}`,
    `sentinel down-after-milliseconds ${NAME} 1000`,
    `sentinel failover-timeout ${NAME} 3000`,
    `sentinel parallel-syncs ${NAME} 2`,
    `requirepass ${SENTINEL_PASSWORD}`,
    ""
  ].join("\n")
  const sentinels = [
    yield* Embedded.make({ sentinel: true, config }),
    yield* Embedded.make({ sentinel: true, config }),
    yield* Embedded.make({ sentinel: true, config })
  ]
  const admin = yield* Effect.forEach(sentinels, (s) =>
    RedisConnection.makeSingle({ port: s.port, password: SENTINEL_PASSWORD, commandTimeout: 2_000 })
  )
  // Ready when every sentinel knows the other two and both replicas with their link up.
  yield* eventually(
    "the sentinels to discover each other and the replicas",
    Effect.gen(function* () {
      for (const a of admin) {
        const others = yield* a.execute(["SENTINEL", "SENTINELS", NAME])
        const known = yield* a.execute(["SENTINEL", "REPLICAS", NAME])
        if (!Array.isArray(others) || others.length !== 2) return false
        if (!Array.isArray(known) || known.length !== 2) return false
        for (const entry of known as ReadonlyArray<ReadonlyArray<Reply>>) {
          const fields = entry.map(text)
          if (fields[fields.indexOf("master-link-status") + 1] !== "ok") return false
        }
      }
      return true
    })
  )
  /** Both replicas report the replica role with their link to the primary up (a demoted primary converted). */
  const settled = eventually(
    "the replicas to follow the new primary",
    Effect.gen(function* () {
      const known = yield* admin[0]!.execute(["SENTINEL", "REPLICAS", NAME])
      if (!Array.isArray(known)) return false
      let following = 0
      for (const entry of known as ReadonlyArray<ReadonlyArray<Reply>>) {
        const fields = entry.map(text)
        const field = (name: string) => fields[fields.indexOf(name) + 1]
        const down = (field("flags") ?? "").includes("down")
        if (!down && field("role-reported") === "slave" && field("master-link-status") === "ok") following++
      }
      return following >= 2
    }),
    600
  )
  const primaryPort = Effect.map(admin[0]!.execute(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME]), (reply) =>
    Number(text((reply as ReadonlyArray<Reply>)[1]!))
  )
  return { servers, sentinels, admin, primaryPort, settled }
})

const sentinelConfig = (sentinels: ReadonlyArray<Embedded.EmbeddedServer["Service"]>) => ({
  sentinels: sentinels.map((s) => `127.0.0.1:${s.port}`),
  name: NAME,
  sentinelPassword: SENTINEL_PASSWORD
})

const failureOf = (exit: Exit.Exit<unknown, RedisError>): RedisError => {
  assert.isTrue(Exit.isFailure(exit), "the call must fail")
  if (Exit.isSuccess(exit)) throw new Error("unreachable")
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") throw new Error(`a typed failure, not ${reason?._tag}`)
  return reason.error
}

describe("sentinel", { timeout: 120_000 }, () => {
  it.effect("options: a read preference needs replicas; a sentinel URL must name the monitored name", () =>
    Effect.gen(function* () {
      const noReplicas = failureOf(
        yield* Effect.exit(RedisConnection.makeFromOptions({ port: 1, readPreference: "replica" }))
      )
      assert.strictEqual(noReplicas.reason._tag, "Config")
      assert.include(noReplicas.message, "needs replicas")
      const badUrl = failureOf(
        yield* Effect.exit(RedisConnection.makeFromOptions({ url: "redis+sentinel://127.0.0.1:26379" }))
      )
      assert.strictEqual(badUrl.reason._tag, "Config")
      assert.include(badUrl.message, "redis+sentinel://host:port,host:port/name")
      const badPreference = failureOf(
        yield* Effect.exit(
          RedisConnection.makeFromOptions({ port: 1, readPreference: "nearest" as unknown as "replica" })
        )
      )
      assert.strictEqual(badPreference.reason._tag, "Config")
      const noSentinels = failureOf(
        yield* Effect.exit(RedisConnection.makeFromOptions({ sentinel: { sentinels: [], name: NAME } }))
      )
      assert.strictEqual(noSentinels.reason._tag, "Config")
      assert.include(noSentinels.message, "at least one sentinel")
      const withHost = failureOf(
        yield* Effect.exit(
          RedisConnection.makeFromOptions({ host: "127.0.0.1", sentinel: { sentinels: ["127.0.0.1"], name: NAME } })
        )
      )
      assert.include(withHost.message, "do not apply with a sentinel")
    })
  )

  it.live("no sentinel answers: the error names every address tried", () =>
    Effect.gen(function* () {
      // Two servers that are not sentinels, and one closed port.
      const plain = yield* Embedded.make()
      const closed = yield* Embedded.make()
      const closedPort = closed.port
      yield* closed.kill
      const exit = yield* Effect.exit(
        RedisConnection.makeFromOptions({
          url: `redis+sentinel://127.0.0.1:${plain.port},127.0.0.1:${closedPort}/${NAME}`,
          connectTimeout: "1 second"
        })
      )
      const error = failureOf(exit)
      assert.strictEqual(error.reason._tag, "NoSentinel")
      if (error.reason._tag !== "NoSentinel") return
      assert.strictEqual(error.reason.tried.length, 2)
      assert.include(error.reason.tried[0], `127.0.0.1:${plain.port}`)
      assert.include(error.reason.tried[1], `127.0.0.1:${closedPort}`)
      assert.include(error.message, `127.0.0.1:${closedPort}`)
      assert.isTrue(error.isRetryable)
    })
  )

  it.live(
    "reads from replicas; a burst of INCRBY through every strategy across SENTINEL FAILOVER and kill -9 of the primary: every call settles and the ledger holds",
    () =>
      Effect.gen(function* () {
        const { servers, sentinels, admin, primaryPort, settled } = yield* topology
        const config = sentinelConfig(sentinels)
        const common: RedisConnection.LayerOptions = {
          password: DATA_PASSWORD,
          commandTimeout: "2 seconds",
          offlineTimeout: "15 seconds",
          reconnect: { baseDelay: 20, maxDelay: 200 }
        }

        // --- sentinel AUTH is separate from data AUTH
        const wrongSentinelAuth = failureOf(
          yield* Effect.exit(
            RedisConnection.makeFromOptions({
              ...common,
              sentinel: { ...config, sentinels: config.sentinels.slice(0, 1), sentinelPassword: DATA_PASSWORD }
            })
          )
        )
        assert.strictEqual(wrongSentinelAuth.reason._tag, "NoSentinel")
        assert.match(wrongSentinelAuth.message, /WRONGPASS|invalid password/i)

        // --- reads from replicas, per client and per call; writes never go there
        const reader = yield* RedisConnection.makeFromOptions({
          ...common,
          url: `redis+sentinel://:${DATA_PASSWORD}@${config.sentinels.join(",")}/${NAME}?sentinelPassword=${SENTINEL_PASSWORD}`,
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          readPreference: "replica"
        })
        assert.strictEqual(reader.info.target, `sentinel:${NAME}/0`)
        assert.strictEqual(yield* reader.execute(["SET", "replicated", "v1"]), "OK")
        assert.strictEqual(
          infoField(yield* reader.execute(["INFO", "replication"]), "role"),
          "slave",
          "a read goes to a replica"
        )
        assert.strictEqual(
          infoField(yield* reader.execute(["INFO", "replication"], { readPreference: "primary" }), "role"),
          "master",
          "a call may ask for the primary"
        )
        yield* eventually(
          "the write to reach the replicas",
          Effect.map(reader.execute(["GET", "replicated"]), (v) => v !== null && text(v) === "v1")
        )
        // A command marked readOnly that writes reaches a replica: a typed reason, not executed.
        const readOnly = failureOf(yield* Effect.exit(reader.execute(["SET", "replicated", "v2"], { readOnly: true })))
        assert.strictEqual(readOnly.reason._tag, "ReadOnlyReplica")
        assert.isFalse(readOnly.written)

        // preferReplica serves reads from a replica while one is connected.
        const preferring = yield* RedisConnection.makeFromOptions({
          ...common,
          strategy: "pooled",
          size: 2,
          sentinel: config,
          readPreference: "preferReplica"
        })
        yield* eventually(
          "preferReplica to read from a replica",
          Effect.map(preferring.execute(["INFO", "replication"]), (info) => infoField(info, "role") === "slave")
        )
        // Configured replicas, no sentinel: the primary by address, reads from the listed replica.
        const first = yield* primaryPort
        const replica = servers.find((s) => s.port !== first)!
        const configured = yield* RedisConnection.makeFromOptions({
          ...common,
          strategy: "single",
          port: first,
          replicas: [`127.0.0.1:${replica.port}`],
          readPreference: "replica"
        })
        assert.strictEqual(Number(infoField(yield* configured.execute(["INFO", "server"]), "tcp_port")), replica.port)
        assert.strictEqual(yield* configured.execute(["SET", "configured", "1"]), "OK")

        // --- the burst, one client per strategy, across two failovers
        const clients = {
          single: yield* RedisConnection.makeFromOptions({ ...common, strategy: "single", sentinel: config }),
          multiplexed: yield* RedisConnection.makeFromOptions({
            ...common,
            strategy: "multiplexed",
            connections: 4,
            routing: "spread",
            sentinel: config
          }),
          pooled: yield* RedisConnection.makeFromOptions({ ...common, strategy: "pooled", size: 8, sentinel: config })
        }
        const labels = Object.keys(clients) as Array<keyof typeof clients>
        // A subscriber that follows the primary across both failovers.
        const pubsub = yield* RedisPubSub.make({ password: DATA_PASSWORD, sentinel: config }).pipe(
          Effect.provideService(RedisConnection.RedisConnection, clients.multiplexed)
        )
        const received: Array<string> = []
        yield* Effect.forkChild(
          Stream.runForEach(yield* pubsub.subscribe("events"), (m) => Effect.sync(() => received.push(m.message))),
          { startImmediately: true }
        )
        /** The subscriber is on `port` (PUBSUB NUMSUB counts the server's own subscribers) and gets messages. */
        const subscribedAt = (port: number) =>
          Effect.gen(function* () {
            const direct = yield* RedisConnection.makeSingle({ port, password: DATA_PASSWORD })
            yield* eventually(
              `the subscriber to move to the primary on port ${port}`,
              Effect.map(
                direct.execute(["PUBSUB", "NUMSUB", "events"]),
                (r) => Number((r as ReadonlyArray<Reply>)[1]) === 1
              )
            )
            let n = 0
            yield* eventually(
              `a message through the primary on port ${port}`,
              Effect.gen(function* () {
                const text = `on ${port} #${n++}`
                yield* direct.execute(["PUBLISH", "events", text])
                yield* Effect.sleep(20)
                return received.includes(text)
              })
            )
          })
        let stopped = false
        let phase = 0
        const running = yield* Effect.forkChild(
          Effect.forEach(
            labels,
            (label) =>
              Ledger.burst(
                clients[label],
                { counter: `ledger:${label}`, ids: `ids:${label}` },
                16,
                () => stopped,
                () => phase
              ),
            {
              concurrency: "unbounded"
            }
          ),
          { startImmediately: true }
        )
        const servedBy = (redis: Service) =>
          Effect.map(redis.execute(["INFO", "server"]), (info) => Number(infoField(info, "tcp_port")))
        const serving = (port: number) =>
          eventually(
            `every client to serve from the primary on port ${port}`,
            Effect.gen(function* () {
              for (const label of labels) if ((yield* servedBy(clients[label])) !== port) return false
              return true
            })
          )
        yield* Effect.sleep(500)

        // Failover 1: SENTINEL FAILOVER (the primary is healthy and demoted).
        const epochBefore = clients.multiplexed.info.primaryEpoch?.()
        phase = 1
        yield* admin[0]!.execute(["SENTINEL", "FAILOVER", NAME])
        yield* eventually(
          "the sentinels to name a new primary",
          Effect.map(primaryPort, (port) => port !== first)
        )
        const second = yield* primaryPort
        yield* serving(second)
        yield* subscribedAt(second)
        // The client says its primary changed (the graph schema cache re-validates on it).
        assert.isAbove(clients.multiplexed.info.primaryEpoch!(), epochBefore ?? -1)
        // Sentinel converts the demoted primary into a replica a few seconds later; a kill -9
        // before that could promote it, and every write to the second primary would be lost.
        const settling = performance.now()
        yield* settled
        console.log(
          `sentinel: replicas followed the second primary after ${Math.round(performance.now() - settling)} ms`
        )

        // Failover 2: kill -9 of the current primary.
        const victim = servers.find((s) => s.port === second)!
        phase = 2
        yield* victim.kill
        yield* eventually(
          "the sentinels to promote a replica after kill -9",
          Effect.map(primaryPort, (port) => port !== second),
          600
        )
        const third = yield* primaryPort
        yield* serving(third)
        yield* subscribedAt(third)
        yield* Effect.sleep(500)
        stopped = true
        const results = yield* Fiber.join(running)

        // The ledger, read from the final primary.
        // Reading the ledger is not under test: a loaded machine must not fail it at the default 5 s.
        const final = yield* RedisConnection.makeSingle({
          port: third,
          password: DATA_PASSWORD,
          commandTimeout: "30 seconds"
        })
        assert.strictEqual(infoField(yield* final.execute(["INFO", "replication"]), "role"), "master")
        for (let i = 0; i < labels.length; i++) {
          const label = labels[i]!
          const value = yield* final.execute(["GET", `ledger:${label}`])
          const members = yield* final.execute(["SMEMBERS", `ids:${label}`])
          assert.notInstanceOf(members, ErrorReply)
          Ledger.check(
            `sentinel ${label}`,
            results[i]!,
            value === null ? 0 : Number(text(value)),
            Ledger.members(members, text)
          )
        }
        console.log(`sentinel primaries: ${first} -> ${second} (SENTINEL FAILOVER) -> ${third} (kill -9)`)
      })
  )
})
