// Against a real FalkorDB: set FALKORDB_URL to run; skipped otherwise. GraphModel repositories and
// resolvers from an effect/schema Model: values round-trip through FalkorDB's own types (typeOf on
// the server says so), bad models fail at construction, bad ids fail with InvalidParameter, and
// the batched resolvers send one query for many callers (counted on the graph handed to them).
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { Model } from "effect/schema"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { Graph } from "../src/Graph.ts"
import * as GraphModel from "../src/GraphModel.ts"
import * as GraphResolver from "../src/GraphResolver.ts"
import * as Temporal from "../src/Temporal.ts"
import * as Value from "../src/Value.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-it23m:${name}:${process.pid}`

class Person extends Model.Class<Person>("Person")({
  id: Model.GeneratedByApp(Schema.String),
  name: Schema.String,
  bornAt: Value.DateTimeSchema,
  birthday: Value.DateSchema,
  wakesAt: Value.TimeSchema,
  sleep: Value.DurationSchema,
  home: Value.PointSchema,
  embedding: Value.VectorSchema,
  sketch: Schema.optional(Value.VectorSchema),
  followers: Schema.BigInt,
  stars: Schema.BigInt,
  tags: Schema.Array(Schema.String),
  nick: Schema.NullOr(Schema.String),
  age: Schema.optional(Schema.Int)
}) {}

class Post extends Schema.Class<Post>("Post")({ slug: Schema.String, title: Schema.String }) {}

const ada = {
  id: "ada",
  name: "Ada",
  bornAt: new Temporal.DateTime(-4850582400 + 3600),
  birthday: new Temporal.Date(-4850582400),
  wakesAt: Temporal.timeOf(6, 30, 0),
  sleep: new Temporal.Duration(8 * 3600),
  home: new Value.Point(51.5, -0.12),
  embedding: new Float32Array([0.5, 0.25, -1]),
  followers: 12n,
  stars: 2n ** 60n + 1n,
  tags: ["math", "engines"],
  nick: null,
  age: undefined
}

/** The graph's query and roQuery, counted. */
const counting = (graph: Graph) => {
  const calls: Array<string> = []
  const queries: GraphModel.Queries = {
    query: (query, parameters, options) => {
      calls.push(typeof query === "string" ? query : query.text)
      return graph.query(query, parameters, options)
    },
    roQuery: (query, parameters, options) => {
      calls.push(typeof query === "string" ? query : query.text)
      return graph.roQuery(query, parameters, options)
    }
  }
  return { calls, queries }
}

const failureOf = (exit: Exit.Exit<unknown, unknown>) => Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)

describe.skipIf(!url)("GraphModel against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("insert, findById, update, delete: values round-trip through FalkorDB types", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("crud"))
        const people = yield* GraphModel.makeRepository(Person, { graph, label: "Person", idColumn: "id" })
        const inserted = yield* people.insert(ada)
        assert.instanceOf(inserted, Person)
        const found = yield* people.findById("ada")
        for (const value of [inserted, found]) {
          assert.deepStrictEqual(value.bornAt, ada.bornAt)
          assert.deepStrictEqual(value.birthday, ada.birthday)
          assert.strictEqual(value.wakesAt.toString(), "06:30:00")
          assert.strictEqual(value.sleep.seconds, 8 * 3600)
          assert.deepStrictEqual(value.home, ada.home)
          assert.deepStrictEqual(Array.from(value.embedding), [0.5, 0.25, -1])
          assert.strictEqual(value.followers, 12n)
          assert.strictEqual(value.stars, 2n ** 60n + 1n)
          assert.deepStrictEqual(value.tags, ["math", "engines"])
          assert.strictEqual(value.nick, null)
          assert.strictEqual(value.age, undefined)
          assert.strictEqual(value.sketch, undefined) // vecf32(null) stores nothing
        }
        // The server holds its own types, not strings or lists.
        const types = yield* graph.roQuery(
          "MATCH (p:Person {id: 'ada'}) RETURN typeOf(p.bornAt) AS a, typeOf(p.birthday) AS b, typeOf(p.wakesAt) AS c, typeOf(p.sleep) AS d, typeOf(p.home) AS e, typeOf(p.embedding) AS f, typeOf(p.stars) AS g"
        )
        assert.deepStrictEqual(Object.values(types.rows[0]!.toObject()), [
          "Datetime",
          "Date",
          "Time",
          "Duration",
          "Point",
          "Vectorf32",
          "Integer"
        ])

        const updated = yield* people.update({ ...ada, name: "Ada Lovelace", nick: "Enchantress", age: 36 })
        assert.strictEqual(updated.name, "Ada Lovelace")
        assert.strictEqual(updated.nick, "Enchantress")
        assert.strictEqual(updated.age, 36)
        const sketched = yield* people.update({ ...ada, sketch: new Float32Array([1, 2]) })
        assert.deepStrictEqual(Array.from(sketched.sketch ?? []), [1, 2])
        yield* people.updateVoid({ ...ada, name: "A. L." })
        const again = yield* people.findById("ada")
        assert.strictEqual(again.name, "A. L.")
        assert.strictEqual(again.age, undefined) // a field left out of an update is removed

        const missing = yield* Effect.flip(people.update({ ...ada, id: "nobody" }))
        assert.isTrue(Cause.isNoSuchElementError(missing))
        yield* people.delete("ada")
        const gone = yield* Effect.flip(people.findById("ada"))
        assert.isTrue(Cause.isNoSuchElementError(gone))
        assert.include((gone as Error).message, "no Person node has this id")
        const wrongId = (yield* Effect.flip(people.findById(42 as unknown as string))) as FalkorError
        assert.strictEqual(wrongId.reason._tag, "InvalidParameter")
        assert.include(wrongId.message, "PersonRepository.findById(42)")
      })
    )
  )

  it.live("a model FalkorDB cannot store fails at construction, naming the field; nothing is sent", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const { calls, queries } = counting(db.graph(graphName("refused")))
        const refuse = <S extends GraphModel.Any>(model: S, idColumn: keyof S["Type"] & keyof S["fields"] & string) =>
          Effect.flip(GraphModel.makeRepository(model, { graph: queries, label: "Thing", idColumn }))
        const nested = yield* refuse(
          Schema.Struct({ id: Schema.String, address: Schema.Struct({ city: Schema.String }) }),
          "id"
        )
        assert.strictEqual(nested.reason._tag, "InvalidArgument")
        assert.include(nested.message, "Thing.address")
        assert.include(nested.message, "nested object")
        const listOfMaps = yield* refuse(
          Schema.Struct({ id: Schema.String, items: Schema.Array(Schema.Struct({ n: Schema.Number })) }),
          "id"
        )
        assert.include(listOfMaps.message, "Thing.items")
        const date = yield* refuse(Schema.Struct({ id: Schema.String, at: Schema.Date }), "id")
        assert.include(date.message, "Thing.at")
        const fn = yield* refuse(
          Schema.Struct({ id: Schema.String, f: Schema.declare((u): u is () => void => typeof u === "function") }),
          "id"
        )
        assert.include(fn.message, "Thing.f")
        const mixed = yield* refuse(
          Schema.Struct({ id: Schema.String, when: Schema.Union([Value.DateSchema, Schema.String]) }),
          "id"
        )
        assert.include(mixed.message, "Thing.when")
        assert.include(mixed.message, "a union of date values and plain values")
        class Generated extends Model.Class<Generated>("Generated")({
          id: Model.GeneratedByDb(Schema.Number),
          name: Schema.String
        }) {}
        const generated = yield* refuse(Generated, "id")
        assert.include(generated.message, "GeneratedByDb", generated.message)
        const badLabel = yield* Effect.flip(
          GraphModel.makeRepository(Post, { graph: queries, label: "Bad`Label", idColumn: "slug" })
        )
        assert.strictEqual(badLabel.reason._tag, "InvalidIdentifier")
        assert.deepStrictEqual(calls, [])
      })
    )
  )

  it.live("makeResolvers (maxBatchSize 256): 200 concurrent findById are one query; batched inserts and deletes", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("resolvers"))
        const { calls, queries } = counting(graph)
        const resolvers = yield* GraphModel.makeResolvers(Person, {
          graph: queries,
          label: "Person",
          idColumn: "id",
          maxBatchSize: 256
        })
        const insert = GraphResolver.request(resolvers.insert)
        const ids = Array.from({ length: 200 }, (_, i) => `p${i}`)
        const inserted = yield* Effect.forEach(ids, (id, i) => insert({ ...ada, id, name: `P ${i}` }), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          inserted.map((p) => p.name),
          ids.map((_, i) => `P ${i}`)
        )
        assert.strictEqual(calls.length, 1)

        calls.length = 0
        const findById = GraphResolver.request(resolvers.findById)
        const exits = yield* Effect.forEach([...ids, "nobody"], (id) => Effect.exit(findById(id)), {
          concurrency: "unbounded"
        })
        assert.strictEqual(calls.length, 1)
        exits.slice(0, 200).forEach((exit, i) => {
          assert.isTrue(Exit.isSuccess(exit))
          const person = (exit as Exit.Success<Person>).value
          assert.strictEqual(person.id, ids[i])
          assert.strictEqual(person.stars, 2n ** 60n + 1n)
        })
        assert.isTrue(Cause.isNoSuchElementError(failureOf(exits[200]!)))

        calls.length = 0
        const remove = GraphResolver.request(resolvers.delete)
        yield* Effect.forEach(ids.slice(0, 150), remove, { concurrency: "unbounded" })
        assert.strictEqual(calls.length, 1)
        const left = yield* graph.roQuery("MATCH (p:Person) RETURN count(p) AS n")
        assert.strictEqual(left.rows[0]!.get("n"), 50)
      })
    )
  )

  it.live("relate and related: within a label and to another repository's label", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("relations"))
        const people = yield* GraphModel.makeRepository(Person, { graph, label: "Person", idColumn: "id" })
        const posts = yield* GraphModel.makeRepository(Post, { graph, label: "Post", idColumn: "slug" })
        yield* people.insert(ada)
        yield* people.insert({ ...ada, id: "charles", name: "Charles" })
        yield* posts.insert({ slug: "notes", title: "Notes on the Engine" })
        yield* people.relate("ada", "KNOWS", "charles", { properties: { since: 1833 } })
        yield* people.relate("ada", "WROTE", "notes", { target: posts })
        const known = yield* people.related("ada", "KNOWS")
        assert.deepStrictEqual(
          known.map((p) => p.name),
          ["Charles"]
        )
        const knownBy = yield* people.related("charles", "KNOWS", { direction: "in" })
        assert.deepStrictEqual(
          knownBy.map((p) => p.id),
          ["ada"]
        )
        const wrote = yield* people.related("ada", "WROTE", { target: posts })
        assert.instanceOf(wrote[0], Post)
        assert.strictEqual(wrote[0]!.title, "Notes on the Engine")
        const since = yield* graph.roQuery("MATCH (:Person {id: 'ada'})-[k:KNOWS]->() RETURN k.since AS since")
        assert.strictEqual(since.rows[0]!.get("since"), 1833)
        const missing = yield* Effect.flip(people.relate("ada", "KNOWS", "nobody"))
        assert.isTrue(Cause.isNoSuchElementError(missing))
        const badType = (yield* Effect.flip(people.relate("ada", "A`B", "charles"))) as FalkorError
        assert.strictEqual(badType.reason._tag, "InvalidIdentifier")
      })
    )
  )
})
