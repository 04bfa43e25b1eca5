/**
 * A small repository-style service on the graph client: what application code looks like,
 * and (in `test/repository.test.ts`) how it is tested with `FalkorDBMock` — no server.
 * It uses both services: the graph for movies, plain Redis (`INCR`/`GET`) for view counts.
 * In production one `FalkorDB.layer` provides both (the same connection); in tests
 * `FalkorDBMock.layerFromRedis(scripts)` over `RedisMock.layer()` does.
 *
 * Every query goes through the `cypher` template, so titles and years travel as bound
 * parameters, never spliced into the query text.
 */
import * as Cypher from "@effect-falkordb/graph/Cypher"
import type { FalkorError } from "@effect-falkordb/graph/FalkorError"
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { RedisError } from "@effect-falkordb/redis/RedisError"
import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
import * as Value from "@effect-falkordb/graph/Value"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const { cypher } = Cypher

/** A movie as the application sees it. */
export const Movie = Schema.Struct({
  title: Schema.String,
  year: Schema.Number
})
export type Movie = typeof Movie.Type

/** A row whose column `m` is a `:Movie` node, decoded into its properties. */
const MovieRow = Schema.Struct({ m: Value.nodeProperties(Movie) })

export class MovieRepository extends Context.Service<
  MovieRepository,
  {
    readonly findByTitle: (title: string) => Effect.Effect<Option.Option<Movie>, FalkorError | RedisError>
    readonly releasedBetween: (from: number, to: number) => Effect.Effect<ReadonlyArray<Movie>, FalkorError>
    readonly add: (movie: Movie) => Effect.Effect<Movie, FalkorError>
    readonly directedBy: (title: string, director: string) => Effect.Effect<boolean, FalkorError>
    /** How many times `findByTitle` found the movie (a plain Redis counter). */
    readonly viewsOf: (title: string) => Effect.Effect<number, RedisError>
  }
>()("@effect-falkordb/scratchpad/MovieRepository") {}

export const make = Effect.fn("MovieRepository.make")(function* (graphName = "movies") {
  const graph = (yield* FalkorDB).graph(graphName)
  const redis = yield* RedisConnection
  const viewsKey = (title: string) => `${graphName}:views:${title}`

  const findByTitle = Effect.fn("MovieRepository.findByTitle")(function* (title: string) {
    const row = yield* graph.findOneOption(MovieRow, cypher`MATCH (m:Movie {title: ${title}}) RETURN m LIMIT 1`)
    const found = Option.map(row, (r) => r.m)
    if (Option.isSome(found)) yield* redis.execute(["INCR", viewsKey(title)])
    return found
  })

  const viewsOf = Effect.fn("MovieRepository.viewsOf")(function* (title: string) {
    const views = yield* redis.executeAs(Schema.NullOr(ReplySchema.NumberFromText), ["GET", viewsKey(title)])
    return views ?? 0
  })

  const releasedBetween = Effect.fn("MovieRepository.releasedBetween")(function* (from: number, to: number) {
    const rows = yield* graph.findAll(
      MovieRow,
      cypher`MATCH (m:Movie) WHERE m.year >= ${from} AND m.year <= ${to} RETURN m ORDER BY m.year`
    )
    return rows.map((row) => row.m)
  })

  const add = Effect.fn("MovieRepository.add")(function* (movie: Movie) {
    // MERGE keeps the title unique; the write returns the stored node.
    const rows = yield* graph
      .streamAs(MovieRow, cypher`MERGE (m:Movie {title: ${movie.title}}) SET m.year = ${movie.year} RETURN m`)
      .pipe(Stream.runCollect)
    const [stored] = rows
    if (stored === undefined) {
      return yield* Effect.die(new Error(`MERGE of "${movie.title}" returned no row`))
    }
    return stored.m
  })

  const directedBy = Effect.fn("MovieRepository.directedBy")(function* (title: string, director: string) {
    const result = yield* graph.query(
      cypher`MATCH (m:Movie {title: ${title}}) MERGE (p:Person {name: ${director}}) MERGE (p)-[:DIRECTED]->(m) RETURN count(m) AS linked`
    )
    return result.rows[0]?.get("linked") === 1
  })

  return MovieRepository.of({ findByTitle, releasedBetween, add, directedBy, viewsOf })
})

export const layer = (graphName = "movies"): Layer.Layer<MovieRepository, never, FalkorDB | RedisConnection> =>
  Layer.effect(MovieRepository, make(graphName))
