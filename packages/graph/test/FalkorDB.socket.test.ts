// Through real sockets: the default multiplexed layer against a plain redis-server (started
// with module: false), which has no FalkorDB module.
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FalkorDB from "../src/FalkorDB.ts"
import { serverMessageOf } from "./helpers.ts"

const TestLayer = Layer.unwrap(
  Effect.map(Embedded.EmbeddedServer, (server) => FalkorDB.layer({ url: server.url, connections: 2 }))
).pipe(Layer.provide(Embedded.layer({ module: false })))

layer(TestLayer, { timeout: "30 seconds", excludeTestServices: true })(
  "FalkorDB over a real redis-server without the module",
  (it) => {
    it.effect("graph commands fail with ModuleMissing and a hint to load the module", () =>
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const query = yield* Effect.flip(db.graph("g").query("RETURN 1"))
        assert.strictEqual(query.reason._tag, "ModuleMissing")
        assert.include(serverMessageOf(query) ?? "", "unknown command 'GRAPH.QUERY'")
        assert.include(query.hint, "--loadmodule")
        const ro = yield* Effect.flip(db.graph("g").roQuery("RETURN 1"))
        assert.strictEqual(ro.reason._tag, "ModuleMissing")
        const list = yield* Effect.flip(db.list())
        assert.strictEqual(list.reason._tag, "ModuleMissing")
      })
    )

    it.effect("the connection underneath still serves plain Redis commands", () =>
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const pong = yield* db.connection.execute(["PING"])
        assert.strictEqual(pong, "PONG")
        assert.strictEqual(db.connection.info.strategy, "multiplexed")
        assert.strictEqual(db.connection.info.connections, 2)
      })
    )
  }
)
