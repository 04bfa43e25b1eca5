// The graph client's layers through real loopback sockets: they provide RedisConnection too (the
// same connection), a query never inherits the engine's 5 s commandTimeout on any layer path,
// and the mock alone says plainly how to add plain Redis commands.
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CompactEncoder from "../src/CompactEncoder.ts"
import * as FalkorDBMock from "../src/FalkorDBMock.ts"
import * as RedisMock from "../src/RedisMock.ts"
import * as RespTestServer from "../src/RespTestServer.ts"

const tables = new CompactEncoder.SchemaTables()
const answer = (text: string): Reply => CompactEncoder.encodeResult({ columns: ["probe"], rows: [[text]] }, tables)

/** A graph server whose `RETURN 'slow'` answers after `delay`; `INCR` counts. */
const graphServer = (delay: Duration.Input) => {
  let counter = 0
  return RespTestServer.make({
    handler: (request) => {
      if (request.name === "INCR") return ++counter
      if (request.name !== "GRAPH.QUERY" && request.name !== "GRAPH.RO_QUERY") return undefined
      const text = request.command[2]!
      return text.includes("'slow'")
        ? RespTestServer.steps({ delay }, { reply: answer("slow") })
        : answer(text.slice(8, -10))
    }
  })
}

describe("FalkorDB layers", () => {
  it.live("FalkorDB.layer provides RedisConnection too: the very connection the client uses", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* graphServer("0 millis")
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const redis = yield* RedisConnection.RedisConnection
          assert.strictEqual(redis, db.connection)
          assert.strictEqual(yield* redis.execute(["INCR", "n"]), 1)
          const result = yield* db.graph("g").roQuery("RETURN 'fast' AS probe")
          assert.deepStrictEqual(result.rows[0]!.values, ["fast"])
        }).pipe(Effect.provide(FalkorDB.layer({ url: server.url, connections: 2 })))
      })
    )
  )

  it.live("FalkorDB.layerConfig reads every option layer takes: connection and client options alike", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* graphServer("0 millis")
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          assert.strictEqual(yield* RedisConnection.RedisConnection, db.connection)
          assert.deepInclude(db.connection.info, { strategy: "pooled", connections: 3 })
          yield* db.graph("g").roQuery("RETURN 'configured' AS probe")
          const received = yield* server.received
          // clientName reached the handshake; schemaVersionCheck (a client option) the query.
          assert.isTrue(received.some((r) => r.command.join(" ") === "CLIENT SETNAME from-config"))
          const query = received.find((r) => r.name === "GRAPH.RO_QUERY")!
          assert.deepStrictEqual(query.command.slice(-2), ["version", "0"])
        }).pipe(
          Effect.provide(
            FalkorDB.layerConfig({
              url: Config.succeed(server.url),
              strategy: Config.succeed("pooled" as const),
              size: Config.succeed(3),
              clientName: Config.succeed("from-config"),
              schemaVersionCheck: Config.succeed(true)
            })
          )
        )
      })
    )
  )

  // Each path is built with the engine defaults (commandTimeout 5 s); the reply comes at 6 s.
  it.live(
    "a query waits past the engine's 5 s commandTimeout over every layer path",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* graphServer("6 seconds")
          const url = server.url
          const paths: ReadonlyArray<readonly [string, Layer.Layer<FalkorDB.FalkorDB, unknown>]> = [
            ["FalkorDB.layer", FalkorDB.layer({ url })],
            ...(["single", "pooled", "multiplexed"] as const).map(
              (strategy) =>
                [
                  `FalkorDB.layerConfig (${strategy})`,
                  FalkorDB.layerConfig({ url: Config.succeed(url), strategy: Config.succeed(strategy) })
                ] as const
            ),
            [
              "layerFromRedis over a default RedisConnection.layerSingle",
              FalkorDB.layerFromRedis.pipe(Layer.provide(RedisConnection.layerSingle({ url })))
            ],
            [
              "layerFromRedis over a default RedisConnection.layerPooled",
              FalkorDB.layerFromRedis.pipe(Layer.provide(RedisConnection.layerPooled({ url, size: 2 })))
            ]
          ]
          const results = yield* Effect.forEach(
            paths,
            ([name, layer]) =>
              Effect.gen(function* () {
                const db = yield* FalkorDB.FalkorDB
                const result = yield* Effect.result(db.graph("g").roQuery("RETURN 'slow' AS probe"))
                return [name, result._tag === "Success" ? result.success.rows[0]!.values[0] : result.failure] as const
              }).pipe(Effect.provide(layer)),
            { concurrency: "unbounded" }
          )
          for (const [name, value] of results) assert.strictEqual(value, "slow", name)
        })
      ),
    20_000
  )
})

describe("a connection that owes the reply of a query its caller gave up on", () => {
  it.live("gets no new queries while others are free: they are steered to the other connections", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* RespTestServer.make({
          handler: (request) => {
            if (request.name !== "GRAPH.QUERY" && request.name !== "GRAPH.RO_QUERY") return undefined
            const text = request.command[2]!
            // The stuck query holds its connection 1.5 s, like a long FalkorDB query; the others take 50 ms.
            if (text.includes("'stuck'"))
              return RespTestServer.steps({ delay: "1500 millis" }, { reply: answer("stuck") })
            return RespTestServer.steps({ delay: "50 millis" }, { reply: answer(text.slice(8, -10)) })
          }
        })
        yield* Effect.gen(function* () {
          const g = (yield* FalkorDB.FalkorDB).graph("g")
          const gaveUp = yield* Effect.flip(
            g.roQuery("RETURN 'stuck' AS probe", undefined, { clientTimeout: "20 millis" })
          )
          assert.deepInclude(gaveUp.reason, { _tag: "Timeout", origin: "client", stillRunning: true })
          // Eight concurrent queries: without steering, ties would send some to the busy connection.
          const texts = Array.from({ length: 8 }, (_, i) => `q${i}`)
          const results = yield* Effect.forEach(texts, (t) => g.roQuery(`RETURN '${t}' AS probe`), {
            concurrency: "unbounded"
          })
          assert.deepStrictEqual(
            results.map((r) => r.rows[0]!.values[0]),
            texts
          )
          const received = yield* server.received
          const stuckOn = received.find((r) => r.command[2]?.includes("'stuck'"))!.connection
          const others = received.filter((r) => r.name === "GRAPH.RO_QUERY" && r.command[2]!.includes("'q"))
          assert.strictEqual(others.length, 8)
          assert.isTrue(
            others.every((r) => r.connection !== stuckOn),
            `queries sent to the busy connection ${stuckOn}: ${others.map((r) => r.connection).join(",")}`
          )
        }).pipe(Effect.provide(FalkorDB.layer({ url: server.url, connections: 2 })))
      })
    )
  )
})

describe("FalkorDBMock layers", () => {
  it.effect("alone, it answers graph commands and says how to add the others", () =>
    Effect.gen(function* () {
      const redis = yield* RedisConnection.RedisConnection
      const failed = yield* Effect.flip(redis.execute(["INCR", "n"]))
      assert.include(failed.message, "FalkorDBMock.layerFromRedis")
      assert.include(failed.message, "RedisMock.layer()")
    }).pipe(Effect.provide(FalkorDBMock.layer()))
  )

  it.effect("over RedisMock: pipelines and withExclusive send each command to its side, in order", () =>
    Effect.gen(function* () {
      const redis = yield* RedisConnection.RedisConnection
      const replies = yield* redis.pipeline([
        ["SET", "k", "1"],
        ["GRAPH.RO_QUERY", "g", "RETURN 1 AS one", "--compact"],
        ["INCR", "k"]
      ])
      assert.strictEqual(replies.length, 3)
      assert.strictEqual(replies[2], 2)
      assert.isTrue(Array.isArray(replies[1]), "the graph reply is a compact result")
      const inTransaction = yield* redis.withExclusive((connection) =>
        Effect.gen(function* () {
          yield* connection.execute(["MULTI"])
          yield* connection.execute(["INCR", "k"])
          const exec = yield* connection.execute(["EXEC"])
          const graph = yield* connection.execute(["GRAPH.RO_QUERY", "g", "RETURN 1 AS one", "--compact"])
          return [exec, Array.isArray(graph)] as const
        })
      )
      assert.deepStrictEqual(inTransaction, [[3], true])
      // executeAll: graph commands answered by the mock, the others by RedisMock, results in order.
      const all = yield* redis.executeAll(
        [
          ["INCR", "k"],
          ["GRAPH.RO_QUERY", "g", "RETURN 1 AS one", "--compact"],
          ["LPUSH", "k", "x"],
          ["GRAPH.RO_QUERY", "g", "RETURN 2", "--compact"]
        ],
        { mode: "result" }
      )
      assert.deepStrictEqual(
        all.map((result) => result._tag),
        ["Success", "Success", "Failure", "Failure"]
      )
      assert.strictEqual(all[0]?._tag === "Success" && all[0].success, 4)
      const mock = yield* FalkorDBMock.FalkorDBMock
      assert.strictEqual((yield* mock.calls).length, 4)
    }).pipe(
      Effect.provide(
        FalkorDBMock.layerFromRedis([{ query: "RETURN 1 AS one", rows: [{ one: 1 }] }]).pipe(
          Layer.provide(RedisMock.layer())
        )
      )
    )
  )
})
