/**
 * The data-access toolkit: the examples of the graph README's "Resolvers, schema queries and
 * model repositories" section, here so that CI type-checks them (`pnpm check` covers every
 * scratchpad file).
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
import * as GraphSchema from "@effect-falkordb/graph/GraphSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// README: GraphResolver
const User = Schema.Struct({ id: Schema.String, name: Schema.String })

/** Looks users up by id: the lookups of every fiber in the same tick become one query. */
export const makeUserById = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("social")
  const resolver = GraphResolver.findById({
    name: "UserById",
    Id: Schema.String,
    Result: User,
    ResultId: (user) => user.id,
    RowId: (row: { readonly id: string }) => row.id, // a row that fails to decode fails only its caller
    execute: (ids) =>
      graph.roQuery("UNWIND $requests AS r MATCH (u:User {id: r}) RETURN u.id AS id, u.name AS name", {
        requests: ids
      })
  })
  return GraphResolver.request(resolver)
})

export const friendsOfMany = Effect.gen(function* () {
  const userById = yield* makeUserById
  // 500 lookups, one GRAPH.RO_QUERY; a missing id fails its own caller with NoSuchElementError.
  return yield* Effect.forEach(
    Array.from({ length: 500 }, (_, i) => `u${i}`),
    (id) => userById(id).pipe(Effect.option),
    { concurrency: "unbounded" }
  )
})

// README: GraphSchema
export const peopleBornAfter = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("social")
  const find = GraphSchema.findAll({
    Request: Schema.Struct({ year: Schema.Int }),
    Result: Schema.Struct({ name: Schema.String, born: Schema.Int }),
    execute: (request) =>
      graph.roQuery("MATCH (p:Person) WHERE p.born > $year RETURN p.name AS name, p.born AS born", request)
  })
  return yield* find({ year: 1900 })
})
