import * as Cypher from "@effect-falkordb/graph/Cypher"
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import * as FalkorDBModule from "@effect-falkordb/graph/FalkorDB"
import { Edge, Node, Path, Point } from "@effect-falkordb/graph/Value"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import * as fc from "fast-check"
import * as CypherPrefix from "../src/internal/CypherPrefix.ts"

const { cypher } = Cypher

const run = <A, E>(
  scripts: ReadonlyArray<FalkorDBMock.Script>,
  body: Effect.Effect<A, E, FalkorDB | FalkorDBMock.FalkorDBMock>,
  options?: FalkorDBMock.MockOptions & FalkorDBModule.ClientOptions
) => Effect.provide(body, FalkorDBMock.layer(scripts, options))

describe("FalkorDBMock", () => {
  it.effect("answers a scripted query with rows through the real client", () =>
    run(
      [{ query: "MATCH (m:Movie) RETURN m.title AS title, m.year AS year", rows: [{ title: "Alien", year: 1979 }] }],
      Effect.gen(function* () {
        const db = yield* FalkorDB
        const result = yield* db.graph("movies").roQuery("MATCH (m:Movie) RETURN m.title AS title, m.year AS year")
        assert.deepStrictEqual(result.columns, ["title", "year"])
        assert.strictEqual(result.rows[0]!.get("title"), "Alien")
        assert.strictEqual(result.rows[0]!.get("year"), 1979)
        const mock = yield* FalkorDBMock.FalkorDBMock
        const calls = yield* mock.calls
        assert.strictEqual(calls.length, 1)
        assert.strictEqual(calls[0]!.command, "GRAPH.RO_QUERY")
        assert.strictEqual(calls[0]!.graph, "movies")
        assert.isTrue(calls[0]!.readOnly)
      })
    )
  )

  it.effect("cypher-template parameters are matched by text and recorded as values", () =>
    run(
      [{ query: "MATCH (m:Movie {title: $p0}) RETURN m.year AS year", rows: [{ year: 1979 }] }],
      Effect.gen(function* () {
        const db = yield* FalkorDB
        const title = "Alien's \\ \"Director's cut\"\n"
        const result = yield* db
          .graph("movies")
          .roQuery(cypher`MATCH (m:Movie {title: ${title}}) RETURN m.year AS year`)
        assert.strictEqual(result.rows[0]!.get("year"), 1979)
        const mock = yield* FalkorDBMock.FalkorDBMock
        const [call] = yield* mock.calls
        assert.deepStrictEqual(call!.parameters, { p0: title })
        assert.isTrue(call!.text.startsWith("CYPHER "))
        yield* mock.expectCalled("MATCH (m:Movie {title: $p0}) RETURN m.year AS year", { parameters: { p0: title } })
        const wrong = yield* Effect.flip(
          mock.expectCalled("MATCH (m:Movie {title: $p0}) RETURN m.year AS year", { parameters: { p0: "Aliens" } })
        )
        assert.strictEqual(wrong.reason, "ExpectationFailed")
        assert.include(wrong.message, "found 0")
        assert.include(wrong.message, "MATCH (m:Movie {title: $p0})")
      })
    )
  )

  it.effect("nodes, edges and paths decode with their names via the schema procedures", () => {
    const alien = new Node(0, ["Movie"], { title: "Alien", released: 1979 })
    const scott = new Node(1, ["Person", "Director"], { name: "Ridley Scott" })
    const directed = new Edge(0, "DIRECTED", 1, 0, { credited: true })
    return run(
      [
        {
          query: "MATCH p = (d)-[r:DIRECTED]->(m) RETURN d, r, m, p",
          rows: [{ d: scott, r: directed, m: alien, p: new Path([scott, alien], [directed]) }]
        },
        { query: "MATCH (m:Movie) RETURN m", rows: [{ m: alien }] },
        {
          query: "MATCH (s:Studio) RETURN s",
          rows: [{ s: new Node(9, ["Studio"], { name: "Fox", location: new Point(34, -118) }) }]
        }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("movies")
        const mock = yield* FalkorDBMock.FalkorDBMock
        const first = yield* graph.roQuery("MATCH p = (d)-[r:DIRECTED]->(m) RETURN d, r, m, p")
        const [d, r, m, p] = first.rows[0]!.values
        assert.deepStrictEqual(d, scott)
        assert.deepStrictEqual(r, directed)
        assert.deepStrictEqual(m, alien)
        assert.deepStrictEqual(p, new Path([scott, alien], [directed]))
        const afterFirst = yield* mock.schemaFetches
        assert.isAbove(afterFirst, 0)
        // Every name is cached now: the next query needs no refresh.
        yield* graph.roQuery("MATCH (m:Movie) RETURN m")
        assert.strictEqual(yield* mock.schemaFetches, afterFirst)
        // A new label and new keys: the client refreshes only what is missing.
        const studio = yield* graph.roQuery("MATCH (s:Studio) RETURN s")
        const s = studio.rows[0]!.get("s") as Node
        assert.deepStrictEqual(s.labels, ["Studio"])
        assert.strictEqual(s.properties.name, "Fox")
        assert.isAbove(yield* mock.schemaFetches, afterFirst)
        assert.deepStrictEqual((yield* mock.schema("movies")).labels, ["Person", "Director", "Movie", "Studio"])
        assert.strictEqual((yield* mock.calls).length, 3)
      })
    )
  })

  it.effect("respond computes the answer from the call; times limits a script", () =>
    run(
      [
        {
          query: "RETURN $p0 AS echo",
          times: 1,
          respond: (call) => ({ rows: [{ echo: call.parameters.p0 ?? null }] })
        },
        { query: "RETURN $p0 AS echo", rows: [{ echo: "later" }] }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const first = yield* graph.roQuery(cypher`RETURN ${[1, 2n ** 60n, { k: "v" }]} AS echo`)
        assert.deepStrictEqual(first.rows[0]!.get("echo"), [1, 2n ** 60n, { k: "v" }])
        const second = yield* graph.roQuery(cypher`RETURN ${"x"} AS echo`)
        assert.strictEqual(second.rows[0]!.get("echo"), "later")
      })
    )
  )

  it.effect("scripted errors are classified like server errors", () =>
    run(
      [
        { query: "MATCH (n) RETURN count(n)", error: "Query timed out" },
        { query: (call) => call.query.startsWith("RETURN nosuch"), error: "Unknown function 'nosuch'" }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const timeout = yield* Effect.flip(graph.roQuery("MATCH (n) RETURN count(n)", undefined, { timeout: 10 }))
        assert.deepInclude(timeout.reason, { _tag: "Timeout", origin: "server", timeout: 10 })
        const unknown = yield* Effect.flip(graph.query("RETURN nosuch()"))
        assert.strictEqual(unknown.reason._tag, "UnknownFunction")
        const [call] = yield* (yield* FalkorDBMock.FalkorDBMock).calls
        assert.strictEqual(call!.timeout, 10)
      })
    )
  )

  it.effect("an unmatched query fails with a message naming it and listing the scripts", () =>
    run(
      [
        { query: "MATCH (m:Movie) RETURN m", graph: "movies", readOnly: true },
        { query: () => false, description: "never" }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("movies")
        const error = yield* Effect.flip(graph.query("MATCH (m:Movie) RETURN m"))
        assert.include(error.message, 'query not scripted: GRAPH.QUERY on graph "movies": "MATCH (m:Movie) RETURN m"')
        // The script of the same text says why it did not answer.
        assert.include(
          error.message,
          'Script 1. "MATCH (m:Movie) RETURN m" (graph "movies", roQuery) has this text but answers roQuery only'
        )
        assert.include(error.message, "2. <predicate: never>")
        const mock = yield* FalkorDBMock.FalkorDBMock
        assert.strictEqual((yield* mock.unmatched).length, 1)
      })
    )
  )

  it.effect("an unscripted query names the closest scripted text and where they part", () =>
    run(
      [
        { query: "MATCH (p:Person) RETURN p.name AS name", rows: [] },
        { query: "MATCH (m:Movie {title: $title}) RETURN m.year AS year", rows: [{ year: 1979 }] },
        { query: "RETURN 1 AS one", rows: [{ one: 1 }] }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("movies")
        const error = yield* Effect.flip(
          graph.roQuery("MATCH (m:Movie {name: $title}) RETURN m.year AS year", { title: "Alien" })
        )
        assert.include(error.message, "query not scripted")
        assert.include(
          error.message,
          'Closest scripted: "MATCH (m:Movie {title: $title}) RETURN m.year AS year"; they differ at character 16: "…H (m:Movie {name: $title…" where the script has "…H (m:Movie {title: $titl…"'
        )
        // A script used up its `times`.
        yield* (yield* FalkorDBMock.FalkorDBMock).script({ query: "RETURN 2 AS two", rows: [{ two: 2 }], times: 1 })
        yield* graph.roQuery("RETURN 2 AS two")
        const spent = yield* Effect.flip(graph.roQuery("RETURN 2 AS two"))
        assert.include(spent.message, "has this text but has answered its 1 time(s)")
      })
    )
  )

  it.effect("a $name with no value is answered 'Missing parameters', as the server answers it", () =>
    run(
      [{ query: (call) => call.query.includes("$"), rows: [{ v: 1 }] }],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const missing = yield* Effect.flip(graph.query("MATCH (m:Movie {title: $title}) RETURN 1 AS v"))
        assert.strictEqual(missing.reason._tag, "InvalidParameter")
        assert.include(missing.message, "Missing parameters")
        // Names are case-sensitive; extra parameters are fine.
        const wrongCase = yield* Effect.flip(graph.query("RETURN $a AS v", { A: 1 }))
        assert.include(wrongCase.message, "Missing parameters")
        const ok = yield* graph.query("RETURN $a AS v", { a: 1, unused: 2 })
        assert.strictEqual(ok.rows.length, 1)
        // `$` inside strings, backtick names and comments is no parameter.
        yield* graph.query("RETURN '$a' AS v, `$b` AS w // $c\n /* $d */")
        // A backtick-quoted parameter name.
        yield* graph.query("RETURN $`odd name` AS v", { "odd name": 1 })
        const calls = yield* (yield* FalkorDBMock.FalkorDBMock).calls
        assert.strictEqual(calls.length, 5)
      })
    )
  )

  it.effect("roQuery of a write is refused with the server's read-only error", () =>
    run(
      [{ query: (call) => call.query.startsWith("CREATE"), rows: [] }],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const error = yield* Effect.flip(graph.roQuery("CREATE (:Movie {title: 'x'})"))
        assert.strictEqual(error.reason._tag, "ReadOnlyQuery")
        // A write keyword inside a string literal is not a write.
        yield* (yield* FalkorDBMock.FalkorDBMock).script({
          query: "RETURN 'CREATE' AS word",
          rows: [{ word: "CREATE" }]
        })
        const word = yield* graph.roQuery("RETURN 'CREATE' AS word")
        assert.strictEqual(word.rows[0]!.get("word"), "CREATE")
      })
    )
  )

  it.effect("a write answers statistics; GRAPH.LIST, COPY and DELETE follow the writes", () =>
    run(
      [{ query: "CREATE (:Movie {title: $p0})", statistics: { labelsAdded: 1, nodesCreated: 1, propertiesSet: 1 } }],
      Effect.gen(function* () {
        const db = yield* FalkorDB
        const result = yield* db.graph("movies").query(cypher`CREATE (:Movie {title: ${"Alien"}})`)
        assert.strictEqual(result.statistics.nodesCreated, 1)
        assert.strictEqual(result.statistics.propertiesSet, 1)
        assert.deepStrictEqual(result.rows, [])
        assert.deepStrictEqual(yield* db.list(), ["movies"])
        yield* db.graph("movies").copy("movies:copy")
        assert.deepStrictEqual([...(yield* db.list())].sort(), ["movies", "movies:copy"])
        yield* db.graph("movies").delete()
        assert.deepStrictEqual(yield* db.list(), ["movies:copy"])
        const missing = yield* Effect.flip(db.graph("movies").delete())
        assert.strictEqual(missing.reason._tag, "UnknownGraph")
      })
    )
  )

  it.effect("typed rows with Schema and lazy streams work on scripted rows", () =>
    run(
      [
        {
          query: "MATCH (m:Movie) RETURN m.title AS title, m.year AS year",
          rows: [
            { title: "Alien", year: 1979 },
            { title: "Aliens", year: 1986 },
            { title: "Alien 3", year: "unknown" }
          ]
        }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("movies")
        const Movie = Schema.Struct({ title: Schema.String, year: Schema.Number })
        const movies = () => graph.roQueryAs(Movie, "MATCH (m:Movie) RETURN m.title AS title, m.year AS year")
        const firstTwo = yield* Stream.runCollect(Stream.take(movies(), 2))
        assert.deepStrictEqual(firstTwo, [
          { title: "Alien", year: 1979 },
          { title: "Aliens", year: 1986 }
        ])
        const error = yield* Effect.flip(Stream.runCollect(movies()))
        assert.deepInclude(error.reason, { _tag: "RowDecode", row: 2, column: "year" })
      })
    )
  )

  it.effect("with the schema version check on, new names cause a mismatch the client recovers from", () =>
    run(
      [
        { query: "MATCH (a:A) RETURN a", rows: [{ a: new Node(0, ["A"], { x: 1 }) }] },
        { query: "MATCH (b:B) RETURN b", rows: [{ b: new Node(1, ["B"], { y: 2 }) }] }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const a = yield* graph.roQuery("MATCH (a:A) RETURN a")
        assert.deepStrictEqual((a.rows[0]!.get("a") as Node).labels, ["A"])
        const b = yield* graph.roQuery("MATCH (b:B) RETURN b")
        assert.deepStrictEqual((b.rows[0]!.get("b") as Node).properties, { y: 2 })
      }),
      { schemaVersionCheck: true, graphs: ["g"] }
    )
  )

  it.effect("rows whose keys disagree and values without a compact form are reported", () =>
    run(
      [
        { query: "RETURN 1", rows: [{ a: 1 }, { b: 2 }] },
        { query: "RETURN 2", rows: [{ a: (() => 1) as never }] }
      ],
      Effect.gen(function* () {
        const graph = (yield* FalkorDB).graph("g")
        const keys = yield* Effect.flip(graph.roQuery("RETURN 1"))
        assert.include(keys.message, "row 1 has columns [b] but the columns are [a]")
        const value = yield* Effect.flip(graph.roQuery("RETURN 2"))
        assert.include(value.message, "a function has no FalkorDB value")
      })
    )
  )

  it.effect("expectNotCalled and reset", () =>
    run(
      [{ query: "RETURN 1 AS one", rows: [{ one: 1 }] }],
      Effect.gen(function* () {
        const mock = yield* FalkorDBMock.FalkorDBMock
        yield* mock.expectNotCalled("RETURN 1 AS one")
        yield* (yield* FalkorDB).graph("g").roQuery("RETURN 1 AS one")
        const error = yield* Effect.flip(mock.expectNotCalled("RETURN 1 AS one"))
        assert.include(error.message, "not to be called, found 1")
        yield* mock.expectCalled("RETURN 1 AS one", { times: 1, graph: "g" })
        yield* mock.reset
        assert.deepStrictEqual(yield* mock.calls, [])
      })
    )
  )

  it.effect("the same scripts served over a real socket and RedisConnection.layerSingle", () =>
    Effect.gen(function* () {
      const mock = yield* FalkorDBMock.make([
        { query: "MATCH (m:Movie) RETURN m", rows: [{ m: new Node(0, ["Movie"], { title: "Alien" }) }] }
      ])
      const server = yield* RespTestServer.make({ handler: FalkorDBMock.handler(mock) })
      const client = FalkorDBModule.layerFromRedis.pipe(
        Layer.provide(RedisConnection.layerSingle({ url: server.url, commandTimeout: "10 seconds" }))
      )
      const result = yield* Effect.provide(
        Effect.gen(function* () {
          const db = yield* FalkorDB
          return yield* db.graph("movies").roQuery("MATCH (m:Movie) RETURN m")
        }),
        client
      )
      assert.deepStrictEqual(result.rows[0]!.get("m"), new Node(0, ["Movie"], { title: "Alien" }))
      const received = yield* server.received
      assert.isTrue(received.some((r) => r.name === "GRAPH.RO_QUERY" && r.command[2] === "CALL db.labels()"))
    })
  )
})

describe("exact text through a real socket", () => {
  it.effect("a leading U+FEFF survives the round trip: parameter out, value, label, key and column back", () =>
    Effect.gen(function* () {
      const bom = "\uFEFF"
      const mock = yield* FalkorDBMock.make([
        {
          query: `RETURN $s AS ${bom}col`,
          respond: (call) => ({
            rows: [{ [`${bom}col`]: new Node(0, [`${bom}Label`], { [`${bom}key`]: call.parameters.s as string }) }]
          })
        }
      ])
      const server = yield* RespTestServer.make({ handler: FalkorDBMock.handler(mock) })
      const client = FalkorDBModule.layerFromRedis.pipe(Layer.provide(RedisConnection.layerSingle({ url: server.url })))
      const sent = `${bom}${bom}hello`
      const result = yield* Effect.provide(
        Effect.gen(function* () {
          const db = yield* FalkorDB
          return yield* db.graph("g").roQuery(`RETURN $s AS ${bom}col`, { s: sent })
        }),
        client
      )
      assert.deepStrictEqual(result.columns, [`${bom}col`])
      assert.deepStrictEqual(result.rows[0]!.getAt(0), new Node(0, [`${bom}Label`], { [`${bom}key`]: sent }))
      const [call] = yield* mock.calls
      assert.strictEqual(call!.parameters.s, sent)
    })
  )
})

describe("the CYPHER prefix reader", () => {
  const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)
  const parameter = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).filter((n) => n < -(2n ** 53n) || n > 2n ** 53n),
      fc
        .double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 })
        .filter((d) => !Number.isInteger(d) && (d === 0 || Math.abs(d) > 1e-300)),
      fc.string({ unit: "binary" }).filter((s) => !s.includes("\u0000") && wellFormed(s)),
      fc.array(tie("value"), { maxLength: 4 }),
      fc.dictionary(
        fc.string({ minLength: 1 }).filter((k) => !k.includes("`") && !k.includes("\u0000") && k !== "__proto__"),
        tie("value"),
        { maxKeys: 4 }
      )
    )
  })).value as fc.Arbitrary<Cypher.ParameterValue>

  it.effect("reads back every parameter the graph client's encoder writes", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          fc.dictionary(
            fc.string({ minLength: 1 }).filter((k) => !k.includes("`") && !k.includes("\u0000") && k !== "__proto__"),
            parameter,
            {
              minKeys: 1,
              maxKeys: 4
            }
          ),
          (parameters) => {
            const text = Effect.runSync(Cypher.withParameters("RETURN 1", parameters))
            const split = CypherPrefix.split(text)
            assert.strictEqual(split.query, "RETURN 1")
            assert.deepStrictEqual(split.parameters, parameters)
          }
        ),
        { numRuns: 300 }
      )
    )
  )

  it("keeps unknown escapes verbatim, reads hand-written prefixes and leaves plain queries alone", () => {
    assert.deepStrictEqual(CypherPrefix.split("cypher a=1 b='x\\qy' c=\"d\\n\" RETURN $a"), {
      query: "RETURN $a",
      parameters: { a: 1, b: "x\\qy", c: "d\n" }
    })
    assert.deepStrictEqual(CypherPrefix.split("MATCH (n) RETURN n"), { query: "MATCH (n) RETURN n", parameters: {} })
    assert.throws(() => CypherPrefix.split("CYPHER a='unterminated RETURN 1"))
  })
})
