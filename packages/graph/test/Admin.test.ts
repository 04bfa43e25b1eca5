// GRAPH.CONFIG and GRAPH.MEMORY through the client over the recorded exchanges.
import { ErrorReply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FalkorDB from "../src/FalkorDB.ts"
import { decodeReply, loadScenarios, versions } from "./fixtures.ts"
import { bulk, replay, resp, scripted } from "./helpers.ts"
import { serverMessageOf } from "./helpers.ts"

describe("admin commands over recorded replies", () => {
  for (const version of versions) {
    for (const scenario of ["admin-config", "resp3"]) {
      it.effect(`${version} ${scenario}: every GRAPH.CONFIG exchange`, () => {
        const s = loadScenarios(version).find((x) => x.scenario === scenario)!
        const conn = replay(s)
        return Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          let checked = 0
          for (const e of s.exchanges) {
            if (e.pass !== "compact" || e.request[0] !== "GRAPH.CONFIG" || e.request.length < 3) continue
            const recorded = decodeReply(e.reply_base64)
            const [, sub, name, value] = e.request
            if (sub === "GET" && e.request.length === 3) {
              const result = yield* Effect.result(db.configGet(name!))
              if (recorded instanceof ErrorReply) {
                assert.strictEqual(
                  result._tag === "Failure" ? serverMessageOf(result.failure) : undefined,
                  recorded.message
                )
              } else {
                if (result._tag === "Failure") assert.fail(`${e.request}: ${result.failure.message}`)
                const pairs = result.success
                assert.isAbove(pairs.length, 0)
                if (name === "*") assert.isAtLeast(pairs.length, 18)
                else assert.strictEqual(pairs[0]![0].toUpperCase(), name!.toUpperCase())
              }
              checked++
            } else if (sub === "SET" && e.request.length === 5) {
              const result = yield* Effect.result(db.configSet(name!, value!))
              assert.strictEqual(
                result._tag,
                recorded instanceof ErrorReply ? "Failure" : "Success",
                JSON.stringify(e.request)
              )
              checked++
            }
          }
          assert.isAtLeast(checked, scenario === "resp3" ? 1 : 5)
        }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
      })
    }
  }

  it.effect("GRAPH.CONFIG GET * reads RESP3 booleans and bulk values (byte-exact per the 4.18.11 README)", () => {
    const conn = scripted(() =>
      Effect.succeed(
        resp(
          `*3\n*2\n${bulk("ASYNC_DELETE")}#t\n*2\n${bulk("IMPORT_FOLDER")}${bulk("/var/lib/FalkorDB/import/")}*2\n${bulk("JS_HEAP_SIZE")}:268435456\n`
        )
      )
    )
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      assert.deepStrictEqual(yield* db.configGet("*"), [
        ["ASYNC_DELETE", true],
        ["IMPORT_FOLDER", "/var/lib/FalkorDB/import/"],
        ["JS_HEAP_SIZE", 268435456]
      ])
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("GRAPH.MEMORY USAGE with and without SAMPLES (4.18.11); Unsupported on 4.4.0", () =>
    Effect.gen(function* () {
      const s = loadScenarios("falkordb-4.18.11").find((x) => x.scenario === "memory")!
      const conn = replay(s)
      yield* Effect.gen(function* () {
        const g = (yield* FalkorDB.FalkorDB).graph("memory")
        const usage = yield* g.memoryUsage({ samples: 1 })
        assert.strictEqual(usage.total_graph_sz_mb, 7)
        assert.deepStrictEqual(usage.amortized_node_attributes_by_label_sz_mb, { M: 0, N: 0, Big: 1, Tail: 0 })
        assert.strictEqual(Object.keys(usage).length, 9)
      }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
      assert.deepStrictEqual(conn.calls[0], ["GRAPH.MEMORY", "USAGE", "memory", "SAMPLES", "1"])
      const old = loadScenarios("falkordb-4.4.0").find((x) => x.scenario === "admin-info-memory")!
      const oldConn = replay(old)
      const e = yield* Effect.flip(
        Effect.flatMap(FalkorDB.FalkorDB, (db) => db.graph("admin-info-memory").memoryUsage()).pipe(
          Effect.provide(FalkorDB.layerFromRedis),
          Effect.provide(oldConn.layer)
        )
      )
      assert.strictEqual(e.reason._tag, "Unsupported")
    })
  )
})
