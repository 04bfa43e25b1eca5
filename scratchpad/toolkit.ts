/**
 * The data-access toolkit: the examples of the graph README's "Resolvers, schema queries and
 * model repositories" section, here so that CI type-checks them (`pnpm check` covers every
 * scratchpad file).
 */
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import * as GraphModel from "@effect-falkordb/graph/GraphModel"
import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
import * as GraphSchema from "@effect-falkordb/graph/GraphSchema"
import * as Temporal from "@effect-falkordb/graph/Temporal"
import * as Value from "@effect-falkordb/graph/Value"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Model } from "effect/schema"

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
  // 500 lookups in one tick: 4 queries (maxBatchSize 128), not 500; a missing id fails its own caller.
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

// README: GraphModel
class Person extends Model.Class<Person>("Person")({
  id: Model.GeneratedByApp(Schema.String),
  name: Schema.String,
  born: Value.DateSchema, // stored as a FalkorDB date
  embedding: Schema.NullOr(Value.VectorSchema), // stored as vecf32
  followers: Schema.BigInt // stored as an integer, read back as a bigint
}) {}

export const people = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("social")
  const repository = yield* GraphModel.makeRepository(Person, { graph, label: "Person", idColumn: "id" })
  const ada = yield* repository.insert({
    id: "ada",
    name: "Ada",
    born: new Temporal.Date(-4850582400),
    embedding: new Float32Array([0.1, 0.2]),
    followers: 12n
  })
  yield* repository.update({ ...ada, name: "Ada Lovelace" })
  yield* repository.relate("ada", "KNOWS", "charles", { properties: { since: 1833 } })
  const known = yield* repository.related("ada", "KNOWS") // Array<Person>

  // Batched: the calls of many fibers in one tick are one UNWIND query.
  const resolvers = yield* GraphModel.makeResolvers(Person, { graph, label: "Person", idColumn: "id" })
  const findById = GraphResolver.request(resolvers.findById)
  const found = yield* Effect.forEach(["ada", "charles"], findById, { concurrency: "unbounded" })
  return { known, found }
})
