/**
 * Redis Cluster on real processes: three primaries with one replica each on loopback
 * (`--cluster-enabled yes`, `redis-cli --cluster create … --cluster-replicas 1`).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { ErrorReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ChildProcess from "node:child_process"
import * as CommandKeys from "../src/CommandKeys.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import type { RedisError } from "../src/RedisError.ts"

const text = (reply: Reply): string => replyToString(reply) ?? String(reply)

const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, attempts = 400) =>
  Effect.gen(function* () {
    for (let i = 0; i < attempts; i++) {
      if (yield* Effect.orElseSucceed(check, () => false)) return
      yield* Effect.sleep(50)
    }
    assert.fail(`timed out waiting for ${what}`)
  })

const redisCli = (args: ReadonlyArray<string>) =>
  Effect.callback<string, Error>((resume) => {
    ChildProcess.execFile("redis-cli", args, { timeout: 30_000 }, (error, stdout, stderr) =>
      resume(error ? Effect.fail(new Error(`${error.message}\n${stdout}\n${stderr}`)) : Effect.succeed(String(stdout)))
    )
  })

const failureOf = (exit: Exit.Exit<unknown, RedisError>): RedisError => {
  if (Exit.isSuccess(exit)) throw new Error("the call must fail")
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") throw new Error(`a typed failure, not ${reason?._tag}`)
  return reason.error
}

const cluster = Effect.gen(function* () {
  const servers = yield* Effect.forEach([0, 1, 2, 3, 4, 5], () =>
    Embedded.make({
      args: [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "1000",
        "--cluster-replica-validity-factor",
        "0"
      ]
    })
  )
  yield* redisCli([
    "--cluster",
    "create",
    ...servers.map((s) => `127.0.0.1:${s.port}`),
    "--cluster-replicas",
    "1",
    "--cluster-yes"
  ])
  const admins = yield* Effect.forEach(servers, (s) => RedisConnection.makeSingle({ port: s.port }))
  yield* eventually(
    "the cluster to be ok on every node",
    Effect.gen(function* () {
      for (const admin of admins) {
        const info = text(yield* admin.execute(["CLUSTER", "INFO"]))
        if (!info.includes("cluster_state:ok")) return false
      }
      return true
    })
  )
  return { servers, admins }
})

describe("cluster", { timeout: 120_000 }, () => {
  it.live(
    "keys over all slots through every strategy; pipelines across nodes; cross-slot refused; GRAPH.* by name",
    () =>
      Effect.gen(function* () {
        const { servers, admins } = yield* cluster
        const seed = `127.0.0.1:${servers[0]!.port}`
        for (const options of [
          { strategy: "single" },
          { strategy: "multiplexed", connections: 2, routing: "spread" },
          { strategy: "pooled", size: 2 }
        ] as const) {
          const redis = yield* RedisConnection.makeFromOptions({ ...options, cluster: { nodes: [seed] } })
          const label = options.strategy
          yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) => i),
            (i) => redis.execute(["SET", `${label}:key:${i}`, String(i)]),
            { concurrency: 32 }
          )
          const values = yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) => i),
            (i) => redis.execute(["GET", `${label}:key:${i}`])
          )
          assert.deepStrictEqual(
            values.map(text),
            Array.from({ length: 300 }, (_, i) => String(i))
          )
          // Every primary holds some of them.
          let holders = 0
          for (const admin of admins) {
            const role = text(yield* admin.execute(["ROLE"]).pipe(Effect.map((r) => (r as ReadonlyArray<Reply>)[0]!)))
            if (role === "master" && Number(yield* admin.execute(["DBSIZE"])) > 0) holders++
          }
          assert.strictEqual(holders, 3)
          // A pipeline over several nodes comes back in order.
          const commands = Array.from({ length: 40 }, (_, i) => ["GET", `${label}:key:${i}`] as const)
          const replies = yield* redis.pipeline(commands)
          assert.deepStrictEqual(
            replies.map(text),
            Array.from({ length: 40 }, (_, i) => String(i))
          )
          // Cross-slot: refused before sending; hash tags keep keys together.
          const cross = failureOf(yield* Effect.exit(redis.execute(["MSET", "a", "1", "b", "2"])))
          assert.strictEqual(cross.reason._tag, "CrossSlot")
          assert.isFalse(cross.written)
          assert.strictEqual(yield* redis.execute(["MSET", `{${label}}a`, "1", `{${label}}b`, "2"]), "OK")
        }
        // GRAPH.* commands route by the graph name: the slot the server computes for it.
        for (const name of ["movies", "{tenant1}social", "g:42"]) {
          const expected = Number(yield* admins[0]!.execute(["CLUSTER", "KEYSLOT", name]))
          assert.strictEqual(CommandKeys.firstKeySlot(["GRAPH.QUERY", name, "RETURN 1"]), expected)
          assert.strictEqual(CommandKeys.firstKeySlot(["GRAPH.RO_QUERY", name, "RETURN 1"]), expected)
        }
        assert.notInstanceOf(yield* admins[0]!.execute(["PING"]), ErrorReply)

        // --- a slot migrated under load: ASK while it migrates, MOVED after
        const redis = yield* RedisConnection.makeFromOptions({
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          cluster: { nodes: [seed] }
        })
        const key = "{migrating}k"
        const slot = Number(yield* admins[0]!.execute(["CLUSTER", "KEYSLOT", key]))
        const owners = (yield* admins[0]!.execute(["CLUSTER", "SLOTS"])) as ReadonlyArray<ReadonlyArray<Reply>>
        const range = owners.find((r) => Number(r[0]) <= slot && slot <= Number(r[1]))!
        const sourcePort = Number((range[2] as ReadonlyArray<Reply>)[1])
        const primaryPorts = owners.map((r) => Number((r[2] as ReadonlyArray<Reply>)[1]))
        const targetPort = primaryPorts.find((p) => p !== sourcePort)!
        const adminOf = (port: number) => admins[servers.findIndex((s) => s.port === port)]!
        const idOf = (port: number) => Effect.map(adminOf(port).execute(["CLUSTER", "MYID"]), text)
        const sourceId = yield* idOf(sourcePort)
        const targetId = yield* idOf(targetPort)
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => redis.execute(["SET", `{migrating}${i}`, String(i)])
        )
        assert.strictEqual(yield* redis.execute(["SET", key, "before"]), "OK")
        let stop = false
        let reads = 0
        const load = yield* Effect.forkChild(
          Effect.forEach(
            Array.from({ length: 8 }, (_, f) => f),
            (f) =>
              Effect.gen(function* () {
                while (!stop) {
                  const i = (f * 7 + reads) % 20
                  const value = yield* redis.execute(["GET", `{migrating}${i}`])
                  assert.strictEqual(text(value), String(i))
                  reads++
                  yield* Effect.sleep(2)
                }
              }),
            { concurrency: "unbounded" }
          ),
          { startImmediately: true }
        )
        yield* adminOf(targetPort).execute(["CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId])
        yield* adminOf(sourcePort).execute(["CLUSTER", "SETSLOT", slot, "MIGRATING", targetId])
        yield* adminOf(sourcePort).execute(["MIGRATE", "127.0.0.1", targetPort, "", 0, 5000, "KEYS", key])
        // The key has left the source: the source answers ASK, the client asks the target.
        assert.strictEqual(text(yield* redis.execute(["GET", key])), "before")
        const rest = Array.from({ length: 20 }, (_, i) => `{migrating}${i}`)
        yield* adminOf(sourcePort).execute(["MIGRATE", "127.0.0.1", targetPort, "", 0, 5000, "KEYS", ...rest])
        for (const admin of admins) yield* Effect.ignore(admin.execute(["CLUSTER", "SETSLOT", slot, "NODE", targetId]))
        // The slot is the target's now: the source answers MOVED, the client re-reads the map.
        assert.strictEqual(yield* redis.execute(["SET", key, "after"]), "OK")
        assert.strictEqual(text(yield* adminOf(targetPort).execute(["GET", key])), "after")
        yield* Effect.sleep(200)
        stop = true
        yield* Fiber.join(load)
        assert.isAbove(reads, 0)
        console.log(
          `cluster: slot ${slot} moved from :${sourcePort} to :${targetPort} under load; ${reads} reads, all correct`
        )

        // --- a primary killed: its replica is promoted and the client follows the new owner.
        const victim = servers.find((s) => s.port === targetPort)!
        yield* victim.kill
        const ownerOf = Effect.gen(function* () {
          const alive = adminOf(sourcePort)
          const map = (yield* alive.execute(["CLUSTER", "SLOTS"])) as ReadonlyArray<ReadonlyArray<Reply>>
          const owner = map.find((r) => Number(r[0]) <= slot && slot <= Number(r[1]))
          return owner === undefined ? undefined : Number((owner[2] as ReadonlyArray<Reply>)[1])
        })
        yield* eventually(
          "a replica to be promoted",
          Effect.map(ownerOf, (port) => port !== undefined && port !== targetPort),
          600
        )
        const promoted = (yield* ownerOf)!
        // What the promoted replica holds of the last write before the kill (asynchronous replication).
        const held = yield* adminOf(promoted).execute(["GET", key])
        console.log(
          `cluster: before the kill "${key}" was "after"; the promoted replica holds ${held === null ? "nothing" : `"${text(held)}"`}`
        )
        // Writes through the client land on the promoted node.
        yield* eventually(
          "the client to write to the promoted node",
          Effect.map(redis.execute(["SET", key, "promoted"], { timeout: 500 }), (reply) => text(reply) === "OK"),
          600
        )
        assert.strictEqual(text(yield* adminOf(promoted).execute(["GET", key])), "promoted")
        assert.strictEqual(text(yield* redis.execute(["GET", key])), "promoted")
        console.log(`cluster: primary :${targetPort} killed, replica :${promoted} promoted, the client writes there`)
      })
  )
})
