// FalkorDB.layer on a Sentinel configuration, through real sockets: one primary, one replica and
// one sentinel (plain redis-server, no module: graph commands fail with ModuleMissing, which is
// enough to see where they were sent).
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as FalkorDB from "../src/FalkorDB.ts"

const errorReplies = (info: unknown) =>
  Number(/^total_error_replies:(\d+)/m.exec(replyToString(info as string) ?? "")?.[1])

const role = (info: unknown) => /^role:(\w+)/m.exec(replyToString(info as string) ?? "")?.[1]

describe("FalkorDB over Sentinel", { timeout: 60_000 }, () => {
  it.live(
    "FalkorDB.layer takes a redis+sentinel:// URL and a read preference; roQuery goes to the replica, query to the primary",
    () =>
      Effect.gen(function* () {
        const primary = yield* Embedded.make({ module: false })
        const replica = yield* Embedded.make({
          module: false,
          args: ["--replicaof", "127.0.0.1", String(primary.port)]
        })
        const sentinel = yield* Embedded.make({
          sentinel: true,
          config: `sentinel monitor graphs 127.0.0.1 ${primary.port} 1\n`
        })
        const layer = FalkorDB.layer({
          url: `redis+sentinel://127.0.0.1:${sentinel.port}/graphs`,
          readPreference: "preferReplica"
        })
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          assert.strictEqual(db.connection.info.target, "sentinel:graphs/0")
          assert.strictEqual(db.connection.info.connections, 8, "the graph client's defaults apply")
          // Writes go to the primary; read-only calls to the replica once one is connected.
          assert.strictEqual(
            role(yield* db.connection.execute(["INFO", "replication"], { readPreference: "primary" })),
            "master"
          )
          for (let i = 0; i < 200; i++) {
            if (role(yield* db.connection.execute(["INFO", "replication"])) === "slave") break
            yield* Effect.sleep(50)
          }
          assert.strictEqual(role(yield* db.connection.execute(["INFO", "replication"])), "slave")
          // Which server refused the graph command is told by its error counter.
          const onReplica = yield* RedisConnection.makeSingle({ port: replica.port })
          const onPrimary = yield* RedisConnection.makeSingle({ port: primary.port })
          const counts = Effect.all([
            Effect.map(onReplica.execute(["INFO", "stats"]), errorReplies),
            Effect.map(onPrimary.execute(["INFO", "stats"]), errorReplies)
          ])
          const [replicaBefore, primaryBefore] = yield* counts
          const ro = yield* Effect.flip(db.graph("g").roQuery("RETURN 1"))
          assert.strictEqual(ro.reason._tag, "ModuleMissing")
          const [replicaAfterRead, primaryAfterRead] = yield* counts
          assert.deepStrictEqual([replicaAfterRead - replicaBefore, primaryAfterRead - primaryBefore], [1, 0])
          // Per call: this read asks for the primary.
          yield* Effect.flip(db.graph("g").roQuery("RETURN 1", undefined, { readPreference: "primary" }))
          const [replicaAfterPrimaryRead, primaryAfterPrimaryRead] = yield* counts
          assert.deepStrictEqual(
            [replicaAfterPrimaryRead - replicaAfterRead, primaryAfterPrimaryRead - primaryAfterRead],
            [0, 1]
          )
          const write = yield* Effect.flip(db.graph("g").query("CREATE ()"))
          assert.strictEqual(write.reason._tag, "ModuleMissing")
          const [replicaAfterWrite, primaryAfterWrite] = yield* counts
          assert.deepStrictEqual(
            [replicaAfterWrite - replicaAfterPrimaryRead, primaryAfterWrite - primaryAfterPrimaryRead],
            [0, 1],
            "a write goes to the primary"
          )
        }).pipe(Effect.provide(layer))
      })
  )
})
