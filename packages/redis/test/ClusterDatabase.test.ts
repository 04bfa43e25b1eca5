/**
 * A numbered database on a cluster, where servers differ: Redis refuses `SELECT` in cluster mode
 * (`ERR SELECT is not allowed in cluster mode`, 7.0 and 8.2 alike), Valkey 9 serves numbered
 * databases on a cluster up to its `cluster-databases` (1 by default: `ERR DB index is out of
 * range`). One node holding every slot, on the server of the project (the server matrix).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as RedisConnection from "../src/RedisConnection.ts"
import { until } from "./fixtures/Until.ts"

/** A one-node cluster that owns all 16384 slots. */
const oneNodeCluster = (args: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const server = yield* Embedded.make({ cluster: true, args })
    const admin = yield* RedisConnection.makeSingle({ port: server.port })
    yield* admin.execute(["CLUSTER", "ADDSLOTSRANGE", 0, 16383])
    yield* until(
      Effect.map(admin.execute(["CLUSTER", "INFO"]), (info) =>
        (replyToString(info) ?? "").includes("cluster_state:ok")
      ),
      "the one-node cluster is ok"
    )
    return { server, admin }
  })

describe("cluster: a numbered database", { timeout: 60_000 }, () => {
  it.live("database 0 is served; database 2 is refused with the node's own reason and what each server serves", () =>
    Effect.gen(function* () {
      const { server } = yield* oneNodeCluster()
      const node = `127.0.0.1:${server.port}`
      const db0 = yield* RedisConnection.makeFromOptions({ cluster: { nodes: [node] } })
      assert.strictEqual(yield* db0.execute(["SET", "k", "db0"]), "OK")
      const refused = yield* Effect.flip(RedisConnection.makeFromOptions({ cluster: { nodes: [node] }, database: 2 }))
      console.log(`cluster database 2 on ${server.server.name} ${server.server.version}: ${refused.message}`)
      // The node's own refusal (not "no cluster node answered", hinted "unreachable"), saying why.
      assert.strictEqual(refused.reason._tag, "Reply")
      assert.include(refused.message, `handshake with ${node}/2 failed at SELECT`)
      assert.include(
        refused.message,
        server.server.name === "valkey" ? "ERR DB index is out of range" : "ERR SELECT is not allowed in cluster mode"
      )
      assert.include(refused.message, "a Redis Cluster serves database 0 only")
      assert.isFalse(refused.isRetryable)
    })
  )

  // Only where the project's server is Valkey (the server matrix): Redis has no numbered
  // databases on a cluster, and refuses the cluster-databases option at start.
  it.live.skipIf(!process.env.EFFECT_FALKORDB_MATRIX_SERVER?.startsWith("valkey 9."))(
    "valkey 9.1 with cluster-databases 16: the cluster client serves database 2 on every node connection",
    () =>
      Effect.gen(function* () {
        const { server, admin } = yield* oneNodeCluster(["--cluster-databases", "16"])
        const node = `127.0.0.1:${server.port}`
        const db2 = yield* RedisConnection.makeFromOptions({ cluster: { nodes: [node] }, database: 2 })
        yield* Effect.forEach(
          Array.from({ length: 64 }, (_, i) => i),
          (i) => db2.execute(["SET", `key-${i}`, "in-db-2"]),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(yield* admin.execute(["EXISTS", "key-0"]), 0)
        const direct = yield* RedisConnection.makeSingle({ port: server.port, database: 2 })
        assert.strictEqual(replyToString(yield* direct.execute(["GET", "key-63"])), "in-db-2")
      })
  )
})
