// The graph client over a real Redis Cluster and a real Sentinel set-up, with the FalkorDB module
// loaded in every node (Embedded, `requireModule: true`): graphs live on several cluster nodes;
// queries keep running through a Sentinel failover and every call settles, typed.
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { redisCli } from "../../redis/test/fixtures/RedisCli.ts"
import { until } from "../../redis/test/fixtures/Until.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { Node } from "../src/Value.ts"

const text = (reply: Reply): string => replyToString(reply) ?? String(reply)

/** Polls `check` (a failed check counts as not yet) every 10 ms, at most `attempts` times. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, attempts = 2000) =>
  until(
    Effect.orElseSucceed(check, () => false),
    what,
    attempts
  )

describe("live topologies with the module in every node", { timeout: 120_000 }, () => {
  it.live("layerCluster: graphs on each of three primaries, queried, streamed, copied and deleted", () =>
    Effect.gen(function* () {
      const nodes = yield* Effect.forEach([0, 1, 2], () =>
        Embedded.make({ cluster: true, requireModule: true, args: ["--cluster-node-timeout", "1000"] })
      )
      assert.isTrue(nodes.every((n) => n.falkordb !== undefined))
      yield* redisCli(["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-yes"])
      const admins = yield* Effect.forEach(nodes, (n) => RedisConnection.makeSingle({ port: n.port }))
      yield* eventually(
        "the cluster to be ok on every node",
        Effect.forEach(admins, (a) =>
          Effect.map(a.execute(["CLUSTER", "INFO"]), (r) => text(r).includes("cluster_state:ok"))
        ).pipe(Effect.map((oks) => oks.every(Boolean)))
      )
      // One graph name per primary: names whose slots fall in each node's range.
      const owner = (name: string) =>
        Effect.map(admins[0]!.execute(["CLUSTER", "KEYSLOT", name]), (slot) => Math.floor((Number(slot) * 3) / 16384))
      const names: Array<string> = []
      for (let i = 0; names.length < 3; i++) {
        const name = `graph-${i}`
        if ((yield* owner(name)) === names.length) names.push(name)
      }
      yield* Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        yield* Effect.forEach(
          names,
          (name, i) =>
            Effect.gen(function* () {
              const g = db.graph(name)
              yield* g.query("UNWIND range(1, 3000) AS k CREATE (:Item {k: k, owner: $i})", { i })
              const sum = yield* g.roQuery("MATCH (n:Item) RETURN sum(n.k) AS s, min(n.owner) AS o")
              assert.deepStrictEqual(sum.rows[0]!.values, [4501500, i])
              // Streamed from the node owning the graph's slot, on a cold schema.
              const streamed = yield* g.roStream("MATCH (n:Item) RETURN n").pipe(
                Stream.map((row) => (row.get("n") as Node).properties.k as number),
                Stream.runFold(
                  () => 0,
                  (a, k) => a + k
                )
              )
              assert.strictEqual(streamed, 4501500)
            }),
          { concurrency: "unbounded", discard: true }
        )
        // Each primary holds exactly its graph.
        const held = yield* Effect.forEach(admins, (a) =>
          Effect.map(a.execute(["GRAPH.LIST"]), (r) => (r as ReadonlyArray<Reply>).map(text))
        )
        assert.deepStrictEqual(
          held,
          names.map((n) => [n])
        )
        // A copy stays in its slot through a hash tag; across slots the cluster refuses it, typed.
        const tagged = db.graph("{tag}source")
        yield* tagged.query("CREATE (:T {v: 1})")
        const copy = yield* tagged.copy("{tag}copy")
        assert.strictEqual((yield* copy.roQuery("MATCH (t:T) RETURN t.v AS v")).rows[0]!.get("v"), 1)
        const crossSlot = yield* Effect.flip(db.graph(names[0]!).copy(names[1]!))
        // Refused by the client before sending: the keys name two slots.
        assert.include(crossSlot.message, "hash to different slots")
        for (const name of [...names, "{tag}source", "{tag}copy"]) yield* db.graph(name).delete()
        const left = yield* Effect.forEach(admins, (a) => Effect.map(a.execute(["DBSIZE"]), Number))
        assert.deepStrictEqual(left, [0, 0, 0])
      }).pipe(
        Effect.provide(Layer.fresh(FalkorDB.layer({ cluster: { nodes: nodes.map((n) => `127.0.0.1:${n.port}`) } })))
      )
    })
  )

  it.live(
    "layerSentinel: a failover while queries run; every call settles typed, no write twice, none lost on the new primary",
    () =>
      Effect.gen(function* () {
        const args = ["--repl-ping-replica-period", "1", "--repl-diskless-sync-delay", "0"]
        const primary = yield* Embedded.make({ requireModule: true, args })
        const replica = yield* Embedded.make({
          requireModule: true,
          args: [...args, "--replicaof", "127.0.0.1", String(primary.port)]
        })
        const name = "graphs"
        const sentinel = yield* Embedded.make({
          sentinel: true,
          config: [
            `sentinel monitor ${name} 127.0.0.1 ${primary.port} 1`,
            `sentinel down-after-milliseconds ${name} 1000`,
            `sentinel failover-timeout ${name} 3000`,
            ""
          ].join("\n")
        })
        const admin = yield* RedisConnection.makeSingle({ port: sentinel.port, commandTimeout: 2_000 })
        const primaryPort = Effect.map(admin.execute(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name]), (r) =>
          Number(text((r as ReadonlyArray<Reply>)[1]!))
        )
        yield* eventually(
          "the sentinel to see the replica linked",
          Effect.map(admin.execute(["SENTINEL", "REPLICAS", name]), (r) => {
            const entries = r as ReadonlyArray<ReadonlyArray<Reply>>
            if (entries.length !== 1) return false
            const fields = entries[0]!.map(text)
            return fields[fields.indexOf("master-link-status") + 1] === "ok"
          })
        )
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = db.graph("ledger")
          yield* g.query("CREATE (:Start)")
          const epoch = () => db.connection.info.primaryEpoch!()
          const firstEpoch = epoch()
          const acknowledged = new Set<number>()
          // Writes sent once the client follows the new primary: replication cannot lose those.
          const afterSwitch = new Set<number>()
          const failures: Array<string> = []
          let next = 0
          let stop = false
          // Writers and readers while the primary changes; each call settles, success or typed.
          const writer = Effect.gen(function* () {
            while (!stop) {
              const i = next++
              const switched = epoch() !== firstEpoch
              const result = yield* Effect.result(g.query("CREATE (:W {i: $i})", { i }))
              if (result._tag === "Success") {
                acknowledged.add(i)
                if (switched) afterSwitch.add(i)
              } else failures.push((result.failure as FalkorError).reason._tag)
              yield* Effect.sleep(5)
            }
          })
          const reader = Effect.gen(function* () {
            while (!stop) {
              const result = yield* Effect.result(g.roQuery("MATCH (w:W) RETURN count(w) AS n"))
              if (result._tag === "Failure") failures.push((result.failure as FalkorError).reason._tag)
              yield* Effect.sleep(5)
            }
          })
          const fibers = yield* Effect.forEach([writer, writer, reader], (f) => Effect.forkChild(f))
          yield* Effect.sleep(300)
          const before = yield* primaryPort
          yield* admin.execute(["SENTINEL", "FAILOVER", name])
          yield* eventually(
            "the sentinel to name the new primary",
            Effect.map(primaryPort, (port) => port !== before)
          )
          // Writes go on against the new primary.
          yield* eventually(
            "writes acknowledged by the new primary",
            Effect.sync(() => afterSwitch.size > 20),
            600
          )
          stop = true
          yield* Effect.forEach(fibers, Fiber.join, { discard: true })
          assert.strictEqual(yield* primaryPort, replica.port)
          // Only connection-level reasons: nothing was mis-decoded or refused for its content.
          for (const tag of failures) assert.include(["Connection", "Timeout"], tag)
          const present = yield* g.roQuery("MATCH (w:W) RETURN w.i AS i", undefined, { readPreference: "primary" })
          const ids = present.rows.map((r) => r.get("i") as number)
          assert.strictEqual(new Set(ids).size, ids.length, "no write applied twice")
          assert.isTrue(
            ids.every((i) => i < next),
            "nothing the client never sent"
          )
          // Replication is asynchronous: a write the old primary acknowledged just before it was
          // demoted may be gone (Redis Sentinel's documented loss window); none sent afterwards is.
          for (const i of afterSwitch) assert.isTrue(ids.includes(i), `write ${i}, acknowledged by the new primary`)
          assert.isAbove(ids.filter((i) => acknowledged.has(i)).length, afterSwitch.size)
        }).pipe(
          Effect.provide(
            Layer.fresh(
              FalkorDB.layer({
                url: `redis+sentinel://127.0.0.1:${sentinel.port}/${name}`,
                commandTimeout: "10 seconds"
              })
            )
          )
        )
      })
  )
})
