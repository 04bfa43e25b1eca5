// The graph README's "In one screen" program, verbatim (type-checked by `pnpm check`).
import { cypher } from "@effect-falkordb/graph/Cypher"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { Config, Console, Effect, Option, Schema } from "effect"

const Live = FalkorDB.layerConfig({
  url: Config.String("FALKORDB_URL").pipe(Config.withDefault("redis://localhost:6379")),
  strategy: Config.Literals(["single", "pooled", "multiplexed"], "FALKORDB_STRATEGY").pipe(
    Config.withDefault("multiplexed")
  )
})

const Movie = Schema.Struct({ title: Schema.String, year: Schema.Int })

const program = Effect.gen(function* () {
  const movies = (yield* FalkorDB.FalkorDB).graph("movies")
  yield* movies.query(cypher`MERGE (m:Movie {title: ${"Alien"}}) SET m.year = ${1979}`)
  const all = yield* movies.findAll(Movie, "MATCH (m:Movie) RETURN m.title AS title, m.year AS year")
  const alien = yield* movies.findOneOption(
    Movie,
    cypher`MATCH (m:Movie {title: ${"Alien"}}) RETURN m.title AS title, m.year AS year`
  )
  yield* Console.log(
    all,
    Option.map(alien, (m) => m.year)
  )
}).pipe(
  // One error type, FalkorError, with a tagged reason per failure (Syntax, Timeout, RowDecode, ModuleMissing …).
  Effect.catchReason("FalkorError", "ModuleMissing", (reason) => Console.error(reason.hint))
)

Effect.runPromise(program.pipe(Effect.provide(Live)))
