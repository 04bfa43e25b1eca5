/**
 * The new-user check: a small app as a user writes it in the first hour, compiled by the
 * consumer check with the strict flags and run once per strategy against a real FalkorDB
 * (`FALKORDB_URL`). The strategy comes from configuration (`FALKORDB_STRATEGY`); every other
 * field has a `Config.withDefault`, including options of one strategy only (`connections`,
 * `size`), which a layer must drop for the others.
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
import { Cause, Config, Console, Effect, Option, Schema } from "effect"

const Live = FalkorDB.layerConfig({
  url: Config.String("FALKORDB_URL"),
  strategy: Config.Literals(["single", "pooled", "multiplexed"], "FALKORDB_STRATEGY").pipe(
    Config.withDefault("multiplexed")
  ),
  connections: Config.Int("FALKORDB_CONNECTIONS").pipe(Config.withDefault(4)),
  size: Config.Int("FALKORDB_POOL_SIZE").pipe(Config.withDefault(4)),
  commandTimeout: Config.Duration("FALKORDB_TIMEOUT").pipe(Config.withDefault("5 seconds")),
  metrics: true
})

const Movie = Schema.Struct({ title: Schema.String, year: Schema.Int })

const check = (condition: boolean, what: string): Effect.Effect<void, Error> =>
  condition ? Console.log(`ok: ${what}`) : Effect.fail(new Error(`new-user check failed: ${what}`))

const program = Effect.gen(function* () {
  const expected = yield* Config.String("FALKORDB_STRATEGY")
  const db = yield* FalkorDB.FalkorDB
  const redis = yield* RedisConnection.RedisConnection
  yield* check(redis.info.strategy === expected, `the strategy from Config is ${redis.info.strategy}`)

  const graph = db.graph(`first-hour-${expected}`)
  yield* graph.query("MATCH (n) DETACH DELETE n")
  yield* graph.query("UNWIND $movies AS m CREATE (:Movie {title: m.title, year: m.year})", {
    movies: [
      { title: "Alien", year: 1979 },
      { title: "Aliens", year: 1986 }
    ]
  })
  const all = yield* graph.findAll(Movie, "MATCH (m:Movie) RETURN m.title AS title, m.year AS year ORDER BY m.year")
  yield* check(all.length === 2 && all[0]?.title === "Alien", `findAll: ${JSON.stringify(all)}`)
  const first = yield* graph.findOne(Movie, "MATCH (m:Movie {year: $year}) RETURN m.title AS title, m.year AS year", {
    year: 1986
  })
  yield* check(first.title === "Aliens", `findOne: ${first.title}`)
  const none = yield* graph.findOneOption(Movie, "MATCH (m:Movie {year: 2049}) RETURN m.title AS title, m.year AS year")
  yield* check(Option.isNone(none), "findOneOption: none for no row")
  const missing = yield* Effect.flip(
    graph.findOne(Movie, "MATCH (m:Movie {year: 2049}) RETURN m.title AS title, m.year AS year")
  )
  yield* check(Cause.isNoSuchElementError(missing), "findOne: NoSuchElementError for no row")

  // Plain Redis on the same connection, typed without casts.
  yield* redis.execute(["HSET", `first-hour:${expected}`, "visits", "3", "name", "Ada"])
  const hash = yield* redis.executeAs(ReplySchema.Hash, ["HGETALL", `first-hour:${expected}`])
  yield* check(hash["name"] === "Ada", `HGETALL as a record: ${JSON.stringify(hash)}`)
  const visits = yield* redis.executeAs(ReplySchema.NumberFromText, ["HGET", `first-hour:${expected}`, "visits"])
  yield* check(visits === 3, `HGET as a number: ${visits}`)
  yield* graph.delete()
})

Effect.runPromise(program.pipe(Effect.provide(Live))).then(
  () => console.log("new-user check passed"),
  (error: unknown) => {
    console.error("new-user check failed:", error)
    process.exitCode = 1
  }
)
