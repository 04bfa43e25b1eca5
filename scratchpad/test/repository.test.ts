// Testing application code that uses the graph client and plain Redis, with FalkorDBMock over
// RedisMock: the real graph client runs (parameters, compact replies, schema refresh, typed
// rows) on scripted graph answers, and every other command reaches an in-memory Redis.
import { Node } from "@effect-falkordb/graph/Value"
import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import * as RedisMock from "@effect-falkordb/testing/RedisMock"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Repository from "../repository.ts"

const alien = new Node(0, ["Movie"], { title: "Alien", year: 1979 })
const aliens = new Node(1, ["Movie"], { title: "Aliens", year: 1986 })

const FIND = "MATCH (m:Movie {title: $p0}) RETURN m LIMIT 1"
const BETWEEN = "MATCH (m:Movie) WHERE m.year >= $p0 AND m.year <= $p1 RETURN m ORDER BY m.year"
const ADD = "MERGE (m:Movie {title: $p0}) SET m.year = $p1 RETURN m"
const DIRECTED =
  "MATCH (m:Movie {title: $p0}) MERGE (p:Person {name: $p1}) MERGE (p)-[:DIRECTED]->(m) RETURN count(m) AS linked"

/**
 * The repository on the real client over the scripted graph and an in-memory Redis, plus the
 * mock's controls and the one `RedisConnection` both run on.
 */
const testLayer = (scripts: ReadonlyArray<FalkorDBMock.Script>) =>
  Repository.layer().pipe(
    Layer.provideMerge(FalkorDBMock.layerFromRedis(scripts)),
    Layer.provideMerge(RedisMock.layer())
  )

describe("MovieRepository with FalkorDBMock", () => {
  it.effect("findByTitle returns the movie for a scripted node, None for no rows", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const mock = yield* FalkorDBMock.FalkorDBMock
      assert.deepStrictEqual(yield* repository.findByTitle("Alien"), Option.some({ title: "Alien", year: 1979 }))
      assert.deepStrictEqual(yield* repository.findByTitle("Prometheus"), Option.none())
      yield* mock.expectCalled(FIND, { times: 1, graph: "movies", parameters: { p0: "Alien" } })
      yield* mock.expectCalled(FIND, { times: 1, parameters: { p0: "Prometheus" } })
      // Read-only lookups use GRAPH.RO_QUERY.
      assert.isTrue((yield* mock.calls).every((call) => call.readOnly))
    }).pipe(
      Effect.provide(
        testLayer([
          {
            query: FIND,
            respond: (call) =>
              call.parameters.p0 === "Alien" ? { rows: [{ m: alien }] } : { rows: [], columns: ["m"] }
          }
        ])
      )
    )
  )

  it.effect("a title with quotes and backslashes is a parameter, never query text", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const mock = yield* FalkorDBMock.FalkorDBMock
      const sneaky = "x'}) MATCH (n) DETACH DELETE n //\\"
      assert.deepStrictEqual(yield* repository.findByTitle(sneaky), Option.none())
      const [call] = yield* mock.calls
      assert.strictEqual(call!.query, FIND)
      assert.deepStrictEqual(call!.parameters, { p0: sneaky })
    }).pipe(Effect.provide(testLayer([{ query: FIND, rows: [], columns: ["m"] }])))
  )

  it.effect("releasedBetween decodes every row, in the scripted order", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const movies = yield* repository.releasedBetween(1970, 1990)
      assert.deepStrictEqual(movies, [
        { title: "Alien", year: 1979 },
        { title: "Aliens", year: 1986 }
      ])
    }).pipe(Effect.provide(testLayer([{ query: BETWEEN, rows: [{ m: alien }, { m: aliens }] }])))
  )

  it.effect("add writes with GRAPH.QUERY and returns the stored movie", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const mock = yield* FalkorDBMock.FalkorDBMock
      const stored = yield* repository.add({ title: "Alien", year: 1979 })
      assert.deepStrictEqual(stored, { title: "Alien", year: 1979 })
      const [call] = yield* mock.calls
      assert.strictEqual(call!.command, "GRAPH.QUERY")
      assert.deepStrictEqual(call!.parameters, { p0: "Alien", p1: 1979 })
    }).pipe(
      Effect.provide(
        testLayer([
          {
            query: ADD,
            readOnly: false,
            respond: (call) => ({
              rows: [
                { m: new Node(5, ["Movie"], { title: call.parameters.p0 ?? null, year: call.parameters.p1 ?? null }) }
              ],
              statistics: { nodesCreated: 1, propertiesSet: 2, labelsAdded: 1 }
            })
          }
        ])
      )
    )
  )

  it.effect("a stored node that does not fit Movie is a typed RowDecode error naming the column", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const error = yield* Effect.flip(repository.findByTitle("Broken"))
      assert.strictEqual(error._tag, "FalkorError")
      assert.deepInclude(error._tag === "FalkorError" ? error.reason : undefined, { _tag: "RowDecode", column: "m" })
    }).pipe(
      Effect.provide(
        testLayer([{ query: FIND, rows: [{ m: new Node(3, ["Movie"], { title: "Broken", year: "n/a" }) }] }])
      )
    )
  )

  it.effect("server errors reach the caller classified", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      const error = yield* Effect.flip(repository.releasedBetween(1900, 2000))
      assert.strictEqual(error.reason._tag, "Timeout")
    }).pipe(Effect.provide(testLayer([{ query: BETWEEN, error: "Query timed out" }])))
  )

  it.effect("directedBy links the nodes; an unscripted query fails loudly", () =>
    Effect.gen(function* () {
      const repository = yield* Repository.MovieRepository
      assert.isTrue(yield* repository.directedBy("Alien", "Ridley Scott"))
      const error = yield* Effect.flip(repository.add({ title: "Alien", year: 1979 }))
      assert.include(error.message, "query not scripted: GRAPH.QUERY")
    }).pipe(
      Effect.provide(
        testLayer([
          { query: DIRECTED, rows: [{ linked: 1 }], statistics: { nodesCreated: 1, relationshipsCreated: 1 } }
        ])
      )
    )
  )

  for (const [how, compose] of [
    [
      "provide",
      (scripts: ReadonlyArray<FalkorDBMock.Script>) =>
        Repository.layer().pipe(
          Layer.provideMerge(FalkorDBMock.layerFromRedis(scripts).pipe(Layer.provide(RedisMock.layer())))
        )
    ],
    ["provideMerge", testLayer]
  ] as const) {
    it.effect(
      `graph and plain Redis in one repository: FalkorDBMock answers graph commands, RedisMock the rest (${how})`,
      () =>
        Effect.gen(function* () {
          const repository = yield* Repository.MovieRepository
          const mock = yield* FalkorDBMock.FalkorDBMock
          assert.deepStrictEqual(yield* repository.findByTitle("Alien"), Option.some({ title: "Alien", year: 1979 }))
          assert.deepStrictEqual(yield* repository.findByTitle("Alien"), Option.some({ title: "Alien", year: 1979 }))
          assert.deepStrictEqual(yield* repository.findByTitle("Prometheus"), Option.none())
          assert.strictEqual(yield* repository.viewsOf("Alien"), 2)
          assert.strictEqual(yield* repository.viewsOf("Prometheus"), 0)
          // The application's own RedisConnection is the same combination: INCR reaches RedisMock.
          const redis = yield* RedisConnection
          assert.strictEqual(yield* redis.execute(["INCR", "movies:views:Alien"]), 3)
          // Only graph commands were the mock's.
          assert.deepStrictEqual(
            (yield* mock.calls).map((call) => call.parameters.p0),
            ["Alien", "Alien", "Prometheus"]
          )
        }).pipe(
          Effect.provide(
            compose([
              {
                query: FIND,
                respond: (call) =>
                  call.parameters.p0 === "Alien" ? { rows: [{ m: alien }] } : { rows: [], columns: ["m"] }
              }
            ])
          )
        )
    )
  }
})
