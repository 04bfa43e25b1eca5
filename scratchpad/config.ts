/**
 * The graph client from configuration: the example of the graph README's "Configuration"
 * section, here so that CI type-checks it. `FalkorDB.layerConfig` reads every option
 * `FalkorDB.layer` takes and provides `FalkorDB` and `RedisConnection` (one connection).
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"

export const Live = FalkorDB.layerConfig({
  url: Config.String("FALKORDB_URL"),
  password: Config.Redacted("FALKORDB_PASSWORD").pipe(Config.withDefault(undefined)),
  strategy: Config.Literals(["single", "pooled", "multiplexed"], "FALKORDB_STRATEGY").pipe(
    Config.withDefault("multiplexed")
  ),
  connections: Config.Int("FALKORDB_CONNECTIONS").pipe(Config.withDefault(8)),
  offlineTimeout: Config.Duration("FALKORDB_OFFLINE_TIMEOUT").pipe(Config.withDefault("5 seconds")),
  schemaVersionCheck: Config.Boolean("FALKORDB_VERSION_CHECK").pipe(Config.withDefault(false)),
  retry: { times: Config.Int("FALKORDB_RETRIES").pipe(Config.withDefault(3)) }
})

/** Graph and plain Redis through the one configured connection. */
export const program = Effect.gen(function* () {
  const db = yield* FalkorDB.FalkorDB
  const redis = yield* RedisConnection.RedisConnection
  yield* redis.execute(["INCR", "app:starts"])
  return yield* db.graph("movies").roQuery("MATCH (m:Movie) RETURN count(m) AS movies")
}).pipe(Effect.provide(Live))
