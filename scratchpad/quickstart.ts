// The program of the top-level README, verbatim between the markers (type-checked by `pnpm check`).
// Run: node --conditions=@effect-falkordb/source scratchpad/quickstart.ts (FALKORDB_URL, default localhost:6379)
// README: quickstart
import { cypher } from "@effect-falkordb/graph/Cypher"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { nodeProperties } from "@effect-falkordb/graph/Value"
import { Config, Console, Effect, Schema, Stream } from "effect"

const Movie = Schema.Struct({ title: Schema.String, year: Schema.Number })
const MovieRow = Schema.Struct({ m: nodeProperties(Movie) })

const program = Effect.gen(function* () {
  const movies = (yield* FalkorDB.FalkorDB).graph("movies")
  // Values travel as bound parameters, never spliced into the query text.
  yield* movies.query(cypher`MERGE (m:Movie {title: ${"Alien"}}) SET m.year = ${1979}`)
  // Rows arrive as a Stream, each decoded with the Schema (a typed error if one does not fit).
  yield* movies
    .readOnlyStreamAs(MovieRow, cypher`MATCH (m:Movie) WHERE m.year < ${1990} RETURN m`)
    .pipe(Stream.runForEach(({ m }) => Console.log(`${m.title} (${m.year})`)))
}).pipe(
  // Every failure is a FalkorError; pick reasons by name, each with its own fields.
  Effect.catchReason("FalkorError", "ModuleMissing", (reason) => Console.error(reason.hint)),
  Effect.catchTag("FalkorError", (error) => Console.error(`${error.reason._tag}: ${error.message}`))
)

// The server's URL from the environment (FALKORDB_URL), through Config.
const Live = FalkorDB.layerConfig({
  url: Config.String("FALKORDB_URL").pipe(Config.withDefault("redis://localhost:6379"))
})
Effect.runPromise(program.pipe(Effect.provide(Live)))
// README: end
