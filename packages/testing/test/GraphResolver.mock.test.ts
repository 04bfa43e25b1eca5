// GraphResolver and GraphSchema on FalkorDBMock: the mock answers the resolver's UNWIND query from
// its `requests` parameter, so a test counts the queries (mock.calls) and checks who got what.
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import type { FalkorError } from "@effect-falkordb/graph/FalkorError"
import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
import * as GraphSchema from "@effect-falkordb/graph/GraphSchema"

const findQuery = "UNWIND $requests AS r MATCH (u:User {id: r}) RETURN u.id AS id, u.name AS name"
const known = (id: string) => id !== "nobody"

const TestDb = FalkorDBMock.layer([
  {
    query: findQuery,
    readOnly: true,
    respond: (call) => ({
      columns: ["id", "name"],
      rows: (call.parameters.requests as ReadonlyArray<string>)
        .filter(known)
        .map((id) => ({ id, name: id === "odd" ? 42 : `name of ${id}` }))
    })
  },
  {
    query: "MATCH (u:User) WHERE u.id STARTS WITH $prefix RETURN u.id AS id, u.name AS name",
    respond: (call) => ({
      columns: ["id", "name"],
      rows: call.parameters.prefix === "u" ? [{ id: "u1", name: "one" }] : []
    })
  }
])

const User = Schema.Struct({ id: Schema.String, name: Schema.String })

const userById = Effect.map(FalkorDB, (db) => {
  const graph = db.graph("users")
  return GraphResolver.request(
    GraphResolver.findById({
      name: "UserById",
      maxBatchSize: 500,
      Id: Schema.String,
      Result: User,
      ResultId: (user) => user.id,
      RowId: (row: { readonly id: string }) => row.id,
      execute: (ids) => graph.roQuery(findQuery, { requests: ids })
    })
  )
})

const failureOf = (exit: Exit.Exit<unknown, unknown>) => Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)

describe("GraphResolver on FalkorDBMock", () => {
  it.effect("500 concurrent findById: one query, right values to the right callers, a missing id fails alone", () =>
    Effect.gen(function* () {
      const find = yield* userById
      const ids = Array.from({ length: 500 }, (_, i) => (i === 123 ? "nobody" : `u${i}`))
      const exits = yield* Effect.forEach(ids, (id) => Effect.exit(find(id)), { concurrency: "unbounded" })
      const mock = yield* FalkorDBMock.FalkorDBMock
      yield* mock.expectCalled(findQuery, { times: 1 })
      assert.strictEqual((yield* mock.calls).length, 1)
      exits.forEach((exit, i) => {
        if (i === 123) assert.isTrue(Cause.isNoSuchElementError(failureOf(exit)))
        else assert.deepStrictEqual(exit, Exit.succeed({ id: ids[i]!, name: `name of ${ids[i]}` }))
      })
    }).pipe(Effect.provide(TestDb))
  )

  it.effect("a wrong-typed id fails with InvalidParameter naming it; an undecodable row fails its own caller", () =>
    Effect.gen(function* () {
      const find = yield* userById
      const [good, wrong, odd] = yield* Effect.all(
        [Effect.exit(find("u1")), Effect.exit(find(7 as unknown as string)), Effect.exit(find("odd"))],
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(good, Exit.succeed({ id: "u1", name: "name of u1" }))
      const invalid = failureOf(wrong) as FalkorError
      assert.strictEqual(invalid.reason._tag, "InvalidParameter")
      assert.include(invalid.message, "UserById(7)")
      const decode = failureOf(odd) as FalkorError
      assert.strictEqual(decode.reason._tag, "RowDecode")
      assert.include(decode.message, 'UserById("odd")')
      const mock = yield* FalkorDBMock.FalkorDBMock
      yield* mock.expectCalled(findQuery, { times: 1, parameters: { requests: ["u1", "odd"] } })
    }).pipe(Effect.provide(TestDb))
  )

  it.effect("GraphSchema.findOne and findOneOption decode the mock's rows", () =>
    Effect.gen(function* () {
      const graph = (yield* FalkorDB).graph("users")
      const options = {
        Request: Schema.Struct({ prefix: Schema.String }),
        Result: User,
        execute: (request: { readonly prefix: string }) =>
          graph.roQuery("MATCH (u:User) WHERE u.id STARTS WITH $prefix RETURN u.id AS id, u.name AS name", request)
      }
      assert.deepStrictEqual(yield* GraphSchema.findOne(options)({ prefix: "u" }), { id: "u1", name: "one" })
      const none = yield* GraphSchema.findOneOption(options)({ prefix: "x" })
      assert.strictEqual(none._tag, "None")
    }).pipe(Effect.provide(TestDb))
  )

  it.effect("ordered: equal requests are each sent; a row count that is not one per request fails the batch", () =>
    Effect.gen(function* () {
      const mock = yield* FalkorDBMock.FalkorDBMock
      yield* mock.script(
        {
          query: "UNWIND $requests AS r CREATE (t:Tag {name: r}) RETURN t.name AS name",
          respond: (call) => ({
            columns: ["name"],
            rows: (call.parameters.requests as ReadonlyArray<string>).map((name) => ({ name }))
          })
        },
        {
          query: "UNWIND $requests AS r MATCH (t:Tag {name: r}) RETURN t.name AS name",
          respond: () => ({ columns: ["name"], rows: [{ name: "only one" }] })
        }
      )
      const graph = (yield* FalkorDB).graph("tags")
      /** One tag per request, in order, from `text` run by `run`. */
      const tags = (run: typeof graph.query, text: string) =>
        GraphResolver.request(
          GraphResolver.ordered({
            Request: Schema.String,
            Result: Schema.Struct({ name: Schema.String }),
            execute: (requests) => run(text, { requests })
          })
        )
      const create = tags(graph.query, "UNWIND $requests AS r CREATE (t:Tag {name: r}) RETURN t.name AS name")
      const created = yield* Effect.all([create("a"), create("a"), create("b")], { concurrency: "unbounded" })
      assert.deepStrictEqual(
        created.map((tag) => tag.name),
        ["a", "a", "b"]
      )
      yield* mock.expectCalled("UNWIND $requests AS r CREATE (t:Tag {name: r}) RETURN t.name AS name", {
        times: 1,
        parameters: { requests: ["a", "a", "b"] }
      })
      const find = tags(graph.roQuery, "UNWIND $requests AS r MATCH (t:Tag {name: r}) RETURN t.name AS name")
      const exits = yield* Effect.all([Effect.exit(find("a")), Effect.exit(find("b"))], { concurrency: "unbounded" })
      for (const exit of exits) {
        const error = failureOf(exit) as FalkorError
        assert.strictEqual(error.reason._tag, "Decode")
        assert.include(error.message, "expected one row per request (2), got 1")
      }
    }).pipe(Effect.provide(TestDb))
  )

  it.effect(
    "grouped without RowGroupKey: an undecodable row fails the requests left without rows, not the others",
    () =>
      Effect.gen(function* () {
        const mock = yield* FalkorDBMock.FalkorDBMock
        const query = "UNWIND $requests AS r MATCH (u:User {team: r}) RETURN u.team AS team, u.name AS name"
        yield* mock.script({
          query,
          respond: () => ({
            columns: ["team", "name"],
            rows: [
              { team: "red", name: "ann" },
              { team: "red", name: "bob" },
              { team: "blue", name: 7 }
            ]
          })
        })
        const graph = (yield* FalkorDB).graph("users")
        const byTeam = GraphResolver.request(
          GraphResolver.grouped({
            name: "ByTeam",
            Request: Schema.String,
            RequestGroupKey: (team) => team,
            Result: Schema.Struct({ team: Schema.String, name: Schema.String }),
            ResultGroupKey: (user) => user.team,
            execute: (teams) => graph.roQuery(query, { requests: teams })
          })
        )
        const [red, blue] = yield* Effect.all([Effect.exit(byTeam("red")), Effect.exit(byTeam("blue"))], {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(Exit.isSuccess(red) ? red.value.map((u) => u.name) : [], ["ann", "bob"])
        const error = failureOf(blue) as FalkorError
        assert.strictEqual(error.reason._tag, "RowDecode")
        assert.include(error.message, 'ByTeam("blue"): row 2, column "name"')
      }).pipe(Effect.provide(TestDb))
  )
})
