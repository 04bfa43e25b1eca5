/**
 * A user's program against the published packages, compiled by the consumer check
 * (`scripts/consumer-check.mjs`) with an emitting tsc and strict flags, then run with plain Node.
 *
 * 1. plain Redis commands through `RedisConnection` on an embedded `redis-server`;
 * 2. a graph call on that server (no FalkorDB module): a typed `FalkorError`;
 * 3. typed rows from `FalkorDBMock` (the real client over a scripted connection).
 *
 * Error handling stays generic (`_tag`, and `reason` when there is one) so the check does not
 * depend on how reasons are spelled.
 */
import { Embedded } from "@effect-falkordb/embedded"
import { cypher } from "@effect-falkordb/graph/Cypher"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { Node, nodeProperties } from "@effect-falkordb/graph/Value"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { Console, Effect, Schema, Stream } from "effect"

const check = (condition: boolean, what: string): Effect.Effect<void, Error> =>
  condition ? Console.log(`ok: ${what}`) : Effect.fail(new Error(`consumer check failed: ${what}`))

/** `_tag`, then the reason's `_tag` (or the reason itself when it is a string). */
const describeError = (error: { readonly _tag: string }): string => {
  const reason: unknown = "reason" in error ? error.reason : undefined
  const name =
    typeof reason === "string"
      ? reason
      : typeof reason === "object" && reason !== null && "_tag" in reason
        ? String(reason._tag)
        : undefined
  return name === undefined ? error._tag : `${error._tag}/${name}`
}

const text = (reply: unknown): string => (reply instanceof Uint8Array ? new TextDecoder().decode(reply) : String(reply))

const plainRedis = Effect.gen(function* () {
  const redis = yield* RedisConnection.RedisConnection
  yield* redis.execute(["SET", "consumer:greeting", "hello"])
  const value = text(yield* redis.execute(["GET", "consumer:greeting"]))
  yield* check(value === "hello", `SET then GET through RedisConnection answered "${value}"`)
  const counted = yield* redis.execute(["INCRBY", "consumer:counter", 41])
  yield* check(counted === 41, `INCRBY answered the integer ${String(counted)}`)
  // An error reply is a typed failure of the command, not a defect.
  const failure = yield* Effect.flip(redis.execute(["INCR", "consumer:greeting"]))
  yield* check(
    describeError(failure).startsWith("Redis"),
    `INCR on a string fails with a typed error: ${describeError(failure)}`
  )
})

const graphWithoutModule = Effect.gen(function* () {
  const db = yield* FalkorDB.FalkorDB
  const outcome = yield* db
    .graph("consumer")
    .roQuery("RETURN 1")
    .pipe(
      Effect.map(() => "a result"),
      Effect.catchTag("FalkorError", (error) => Effect.succeed(describeError(error)))
    )
  yield* check(
    outcome.startsWith("FalkorError/") && outcome.includes("Module"),
    `a graph query on a server without the module fails with ${outcome}`
  )
  // The same failure picked out by its reason, with the reason's typed fields.
  const hint = yield* db
    .graph("consumer")
    .roQuery("RETURN 1")
    .pipe(
      Effect.map(() => "a result"),
      Effect.catchReason("FalkorError", "ModuleMissing", (reason) => Effect.succeed(reason.hint))
    )
  yield* check(hint.includes("loadmodule"), `Effect.catchReason(FalkorError, ModuleMissing) gives the hint "${hint}"`)
})

const Movie = Schema.Struct({ title: Schema.String, year: Schema.Number })
const MovieRow = Schema.Struct({ m: nodeProperties(Movie), rank: Schema.Number })

const mockedRows = Effect.gen(function* () {
  const graph = (yield* FalkorDB.FalkorDB).graph("movies")
  const rows = yield* graph
    .roQueryAs(MovieRow, cypher`MATCH (m:Movie) WHERE m.year < ${1990} RETURN m, ${1} AS rank`)
    .pipe(Stream.runCollect)
  const first = rows[0]
  // `first` is `{ m: { title: string; year: number }; rank: number } | undefined` here.
  yield* check(
    rows.length === 2 && first !== undefined && first.m.title === "Alien" && first.m.year + first.rank === 1980,
    `FalkorDBMock rows decoded with a Schema: ${JSON.stringify(rows)}`
  )
  const mock = yield* FalkorDBMock.FalkorDBMock
  yield* mock.expectCalled("MATCH (m:Movie) WHERE m.year < $p0 RETURN m, $p1 AS rank", { times: 1 })
})

const scripts: ReadonlyArray<FalkorDBMock.Script> = [
  {
    query: "MATCH (m:Movie) WHERE m.year < $p0 RETURN m, $p1 AS rank",
    rows: [
      { m: new Node(0, ["Movie"], { title: "Alien", year: 1979 }), rank: 1 },
      { m: new Node(1, ["Movie"], { title: "Aliens", year: 1986 }), rank: 1 }
    ]
  }
]

const program = Effect.gen(function* () {
  const server = yield* Embedded.EmbeddedServer
  yield* Console.log(`redis-server ${server.version} on ${server.url}, module loaded: ${server.moduleLoaded}`)
  yield* plainRedis.pipe(Effect.provide(RedisConnection.layerSingle({ url: server.url })))
  if (server.moduleLoaded) {
    yield* Console.log("skipped: the embedded server has the FalkorDB module, so a graph call would succeed")
  } else {
    yield* graphWithoutModule.pipe(Effect.provide(FalkorDB.layer({ url: server.url, connections: 2 })))
  }
  yield* mockedRows.pipe(Effect.provide(FalkorDBMock.layer(scripts)))
})

Effect.runPromise(program.pipe(Effect.provide(Embedded.layer()))).then(
  () => console.log("consumer program passed"),
  (error: unknown) => {
    console.error("consumer program failed:", error)
    process.exitCode = 1
  }
)
