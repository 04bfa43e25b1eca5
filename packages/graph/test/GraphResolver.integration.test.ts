// Against a real FalkorDB: set FALKORDB_URL to run; skipped otherwise. GraphResolver batches the
// requests of many fibers into one GRAPH.RO_QUERY (counted by the server: the `tot-cmds` of the
// client's own named connections in CLIENT LIST), hands each caller its own row or its own error,
// and GraphSchema encodes requests and decodes rows.
import { assert, describe, it } from "@effect/vitest"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as RequestResolver from "effect/RequestResolver"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { Graph } from "../src/Graph.ts"
import * as GraphResolver from "../src/GraphResolver.ts"
import * as GraphSchema from "../src/GraphSchema.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-it23:${name}:${process.pid}`
const clientName = `toolkit-it23-${process.pid}`

const User = Schema.Struct({ id: Schema.String, name: Schema.String })

/** Commands the server has counted on the connections named `name` (CLIENT LIST `tot-cmds`). */
const commandsOf = (name: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* RedisConnection.makeSingle({ url: url!, clientName: `${name}-admin` })
      const list = new TextDecoder().decode((yield* admin.execute(["CLIENT", "LIST"])) as Uint8Array)
      return list
        .split("\n")
        .filter((line) => line.includes(` name=${name} `))
        .reduce((sum, line) => sum + Number(/tot-cmds=(\d+)/.exec(line)?.[1] ?? Number.NaN), 0)
    })
  )

const seedUsers = (graph: Graph, count: number) =>
  graph.query("UNWIND range(0, $n - 1) AS i CREATE (:User {id: 'u' + toString(i), name: 'name ' + toString(i)})", {
    n: count
  })

const userById = (graph: Graph, batches?: Array<number>, options?: GraphResolver.BatchOptions) =>
  GraphResolver.findById({
    ...options,
    name: "UserById",
    Id: Schema.String,
    Result: User,
    ResultId: (user) => user.id,
    RowId: (row: { readonly id: string }) => row.id,
    execute: (ids) => {
      batches?.push(ids.length)
      return graph.roQuery("UNWIND $requests AS r MATCH (u:User {id: r}) RETURN u.id AS id, u.name AS name", {
        requests: ids
      })
    }
  })

describe.skipIf(!url)("GraphResolver against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("500 concurrent findById: one GRAPH.RO_QUERY, each caller its own row, a missing id fails alone", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("findById"))
        yield* seedUsers(graph, 600)
        const find = GraphResolver.request(userById(graph, undefined, { maxBatchSize: 500 }))
        // Warm the schema cache so that the batch below is the only command sent.
        yield* find("u0")
        const before = yield* commandsOf(clientName)
        const ids = Array.from({ length: 500 }, (_, i) => (i === 250 ? "nobody" : `u${(i * 7) % 600}`))
        const exits = yield* Effect.forEach(ids, (id) => Effect.exit(find(id)), { concurrency: "unbounded" })
        const after = yield* commandsOf(clientName)
        assert.strictEqual(after - before, 1)
        exits.forEach((exit, i) => {
          if (i === 250) {
            assert.isTrue(Exit.isFailure(exit))
            const error = Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)
            assert.isTrue(Cause.isNoSuchElementError(error))
            assert.include(String((error as Error).message), 'UserById("nobody")')
          } else {
            assert.deepStrictEqual(exit, Exit.succeed({ id: ids[i]!, name: `name ${(i * 7) % 600}` }))
          }
        })
      }),
      { clientName }
    )
  )

  it.live("a wrong-typed id and an undecodable row fail only their own callers; the rest share one query", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("errors"))
        yield* seedUsers(graph, 5)
        yield* graph.query("CREATE (:User {id: 'odd', name: 42})")
        const batches: Array<number> = []
        const find = GraphResolver.request(userById(graph, batches))
        const [good, wrongType, odd, missing] = yield* Effect.all(
          [
            Effect.exit(find("u1")),
            Effect.exit(find(42 as unknown as string)),
            Effect.exit(find("odd")),
            Effect.exit(find("u9"))
          ],
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(good, Exit.succeed({ id: "u1", name: "name 1" }))
        assert.deepStrictEqual(batches, [3]) // the wrong-typed id never reached the query
        const invalid = Cause.squash((wrongType as Exit.Failure<unknown, FalkorError>).cause) as FalkorError
        assert.strictEqual(invalid.reason._tag, "InvalidParameter")
        assert.include(invalid.message, "UserById(42)")
        const decode = Cause.squash((odd as Exit.Failure<unknown, FalkorError>).cause) as FalkorError
        assert.strictEqual(decode.reason._tag, "RowDecode")
        assert.include(decode.message, 'UserById("odd")')
        assert.include(decode.message, 'column "name"')
        assert.isTrue(Cause.isNoSuchElementError(Cause.squash((missing as Exit.Failure<unknown, unknown>).cause)))
      })
    )
  )

  it.live("duplicates are sent once, batches split at maxBatchSize, Stream.mapEffect and withCache batch too", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("batching"))
        yield* seedUsers(graph, 300)
        const batches: Array<number> = []
        const find = GraphResolver.request(userById(graph, batches, { maxBatchSize: 100 }))
        const ids = Array.from({ length: 250 }, (_, i) => `u${i}`)
        const users = yield* Effect.forEach(["u1", "u1", ...ids], find, { concurrency: "unbounded" })
        assert.strictEqual(users.length, 252)
        assert.deepStrictEqual(users[0], { id: "u1", name: "name 1" })
        assert.deepStrictEqual(users[251], { id: "u249", name: "name 249" })
        // 252 requests (u1 three times within the first 100), 250 distinct ids: three queries.
        assert.deepStrictEqual(
          batches.reduce((a, b) => a + b, 0),
          250
        )
        assert.isTrue(batches.length === 3 && batches.every((size) => size <= 100))

        batches.length = 0
        const streamed = yield* Stream.fromIterable(ids.slice(0, 40)).pipe(
          Stream.mapEffect(find, { concurrency: 40 }),
          Stream.runCollect
        )
        assert.deepStrictEqual(
          streamed.map((user) => user.id),
          ids.slice(0, 40)
        )
        assert.isBelow(batches.length, 40)

        batches.length = 0
        const cached = yield* RequestResolver.withCache(userById(graph, batches), { capacity: 100 })
        const findCached = GraphResolver.request(cached)
        yield* Effect.forEach(["u1", "u2"], findCached, { concurrency: "unbounded" })
        yield* Effect.forEach(["u1", "u2"], findCached, { concurrency: "unbounded" })
        assert.deepStrictEqual(batches, [2])
      })
    )
  )

  it.live("ordered, grouped and void over UNWIND", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("kinds"))
        const create = GraphResolver.request(
          GraphResolver.ordered({
            Request: Schema.Struct({ id: Schema.String, team: Schema.String }),
            Result: Schema.Struct({ id: Schema.String, team: Schema.String }),
            execute: (requests) =>
              graph.query(
                "UNWIND $requests AS r CREATE (u:Member {id: r.id, team: r.team}) RETURN u.id AS id, u.team AS team",
                { requests }
              )
          })
        )
        const created = yield* Effect.forEach(
          ["a", "b", "c", "d"],
          (id, i) => create({ id, team: i % 2 === 0 ? "red" : "blue" }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          created.map((m) => m.id),
          ["a", "b", "c", "d"]
        )
        const byTeam = GraphResolver.request(
          GraphResolver.grouped({
            Request: Schema.String,
            RequestGroupKey: (team) => team,
            Result: Schema.Struct({ id: Schema.String, team: Schema.String }),
            ResultGroupKey: (member) => member.team,
            execute: (teams) =>
              graph.roQuery(
                "UNWIND $requests AS r MATCH (u:Member {team: r}) RETURN u.id AS id, u.team AS team ORDER BY id",
                { requests: teams }
              )
          })
        )
        const [red, blue, green] = yield* Effect.all([byTeam("red"), byTeam("blue"), Effect.exit(byTeam("green"))], {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          red.map((m) => m.id),
          ["a", "c"]
        )
        assert.deepStrictEqual(
          blue.map((m) => m.id),
          ["b", "d"]
        )
        assert.isTrue(Exit.isFailure(green))
        const remove = GraphResolver.request(
          GraphResolver.void({
            Request: Schema.String,
            execute: (ids) => graph.query("UNWIND $requests AS r MATCH (u:Member {id: r}) DELETE u", { requests: ids })
          })
        )
        yield* Effect.forEach(["a", "b"], remove, { concurrency: "unbounded" })
        const left = yield* graph.roQuery("MATCH (u:Member) RETURN u.id AS id ORDER BY id")
        assert.deepStrictEqual(
          left.rows.map((row) => row.get("id")),
          ["c", "d"]
        )
      })
    )
  )

  it.live("GraphSchema: findAll, findNonEmpty, findOne, findOneOption and void encode and decode", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("schema"))
        yield* seedUsers(graph, 3)
        const Request = Schema.Struct({ prefix: Schema.String })
        const execute = (request: { readonly prefix: string }) =>
          graph.roQuery(
            "MATCH (u:User) WHERE u.id STARTS WITH $prefix RETURN u.id AS id, u.name AS name ORDER BY id",
            request
          )
        const all = yield* GraphSchema.findAll({ Request, Result: User, execute })({ prefix: "u" })
        assert.deepStrictEqual(
          all.map((u) => u.id),
          ["u0", "u1", "u2"]
        )
        assert.deepStrictEqual(yield* GraphSchema.findAll({ Request, Result: User, execute })({ prefix: "x" }), [])
        const none = yield* Effect.flip(GraphSchema.findNonEmpty({ Request, Result: User, execute })({ prefix: "x" }))
        assert.isTrue(Cause.isNoSuchElementError(none))
        assert.deepStrictEqual(yield* GraphSchema.findOne({ Request, Result: User, execute })({ prefix: "u1" }), {
          id: "u1",
          name: "name 1"
        })
        assert.deepStrictEqual(
          yield* GraphSchema.findOneOption({ Request, Result: User, execute })({ prefix: "zz" }),
          Option.none()
        )
        const rename = GraphSchema.void({
          Request: Schema.Struct({ id: Schema.String, name: Schema.String }),
          execute: (request) => graph.query("MATCH (u:User {id: $id}) SET u.name = $name", request)
        })
        yield* rename({ id: "u2", name: "renamed" })
        assert.deepStrictEqual(
          (yield* GraphSchema.findOne({ Request, Result: User, execute })({ prefix: "u2" })).name,
          "renamed"
        )
        const refused = yield* Effect.flip(
          GraphSchema.findAll({ Request, Result: User, execute })({ prefix: 7 as unknown as string })
        )
        assert.strictEqual((refused as FalkorError).reason._tag, "InvalidParameter")
        const wrongResult = yield* Effect.flip(
          GraphSchema.findAll({ Request, Result: Schema.Struct({ id: Schema.Number }), execute })({ prefix: "u" })
        )
        assert.strictEqual((wrongResult as FalkorError).reason._tag, "RowDecode")
        assert.include((wrongResult as FalkorError).message, 'row 0, column "id"')
      })
    )
  )
})
