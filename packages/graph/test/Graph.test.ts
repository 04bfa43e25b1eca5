import type { Reply } from "@effect-falkordb/resp/Reply"
import { ErrorReply } from "@effect-falkordb/resp/Reply"
import { ConnectionLost, RedisError } from "@effect-falkordb/redis/RedisError"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { decodeKnown } from "./helpers.ts"
import * as CompactReply from "../src/internal/CompactReply.ts"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import { Node } from "../src/Value.ts"
import * as Value from "../src/Value.ts"
import { decodeReply, fullSchema, loadScenarios, replayable, versions } from "./fixtures.ts"
import { bulk, nameList, replay, resp, scripted } from "./helpers.ts"
import { serverMessageOf } from "./helpers.ts"

const stats = "*2\n$19\nCached execution: 0\n$52\nQuery internal execution time: 0.067516 milliseconds\n"
const okStats = resp(`*1\n${stats}`)

const withClient = <A, E>(
  handler: (command: ReadonlyArray<string>) => Effect.Effect<Reply, never>,
  use: (
    db: FalkorDB.FalkorDB["Service"],
    calls: Array<ReadonlyArray<string>>
  ) => Effect.Effect<A, E, FalkorDB.FalkorDB>,
  options: FalkorDB.ClientOptions = {}
) => {
  const conn = scripted(handler)
  return Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    return yield* use(db, conn.calls)
  }).pipe(Effect.provide(FalkorDB.layerFromRedisWith(options)), Effect.provide(conn.layer))
}

describe("Graph over recorded replies (in-memory replay)", () => {
  for (const version of versions) {
    it.effect(`runs every replayable probe of ${version} with only recorded commands`, () =>
      Effect.gen(function* () {
        let probes = 0
        for (const s of loadScenarios(version)) {
          if (s.scenario === "version-argument") continue
          const conn = replay(s)
          const names = fullSchema(s)
          yield* Effect.gen(function* () {
            const db = yield* FalkorDB.FalkorDB
            for (const e of s.exchanges.filter(replayable)) {
              probes++
              const graph = db.graph(e.request[1]!)
              const run = e.request[0] === "GRAPH.QUERY" ? graph.query : graph.roQuery
              const options = e.request.length === 6 ? { timeout: Number(e.request[5]) } : undefined
              const recorded = decodeReply(e.reply_base64)
              const result = yield* Effect.result(run(e.request[2]!, undefined, options))
              if (recorded instanceof ErrorReply) {
                assert.strictEqual(result._tag, "Failure", `${s.scenario}: ${e.request[2]}`)
                if (result._tag === "Failure") assert.strictEqual(serverMessageOf(result.failure), recorded.message)
                continue
              }
              if (result._tag === "Failure") assert.fail(`${s.scenario}: ${e.request[2]}: ${result.failure.message}`)
              const env = CompactReply.parseEnvelope(recorded, s.graph, e.request[0]!)
              const expected = env.rows.map((r, i) => decodeKnown(r, i, env.columns, names))
              assert.deepStrictEqual(
                result.success.rows.map((r) => r.values),
                expected,
                `${s.scenario}: ${e.request[2]}`
              )
            }
          }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
          // Every command the client sent was a recorded one (refreshes included).
          for (const call of conn.calls) {
            assert.isTrue(
              s.exchanges.some((e) => JSON.stringify(e.request) === JSON.stringify(call)),
              `${s.scenario}: unrecorded ${JSON.stringify(call)}`
            )
          }
        }
        assert.isAbove(probes, 250)
      })
    )
  }
})

describe("Graph", () => {
  it.effect("sends --compact right after the text, then TIMEOUT, with the CYPHER prefix", () =>
    withClient(
      () => Effect.succeed(okStats),
      (db, calls) =>
        Effect.gen(function* () {
          const g = db.graph("g")
          yield* g.query("CREATE (:A)")
          yield* g.roQuery("MATCH (n) RETURN n", { x: "it's" }, { timeout: "1500 millis" })
          const title = "x' RETURN 1 //"
          yield* g.query(cypher`MATCH (m {title: ${title}}) RETURN m`)
          assert.deepStrictEqual(calls, [
            ["GRAPH.QUERY", "g", "CREATE (:A)", "--compact"],
            ["GRAPH.RO_QUERY", "g", "CYPHER `x`='it\\'s' MATCH (n) RETURN n", "--compact", "TIMEOUT", "1500"],
            ["GRAPH.QUERY", "g", "CYPHER `p0`='x\\' RETURN 1 //' MATCH (m {title: $p0}) RETURN m", "--compact"]
          ])
        })
    )
  )

  it.effect("refuses an unencodable parameter before sending anything", () =>
    withClient(
      () => Effect.succeed(okStats),
      (db, calls) =>
        Effect.gen(function* () {
          const e = yield* Effect.flip(db.graph("g").query("RETURN $x", { x: Number.NaN }))
          assert.strictEqual(e.reason._tag, "InvalidParameter")
          const clash = yield* Effect.flip(db.graph("g").query(cypher`RETURN ${1}`, { p0: 2 }))
          assert.strictEqual(clash.reason._tag, "InvalidParameter")
          assert.strictEqual(calls.length, 0)
        })
    )
  )

  it.effect("classifies server errors and keeps the exact text", () =>
    withClient(
      (cmd) =>
        Effect.succeed(
          new ErrorReply(
            cmd[2] === "CREATE (:A)"
              ? "graph.RO_QUERY is to be executed only on read-only queries"
              : "ERR unknown command 'GRAPH.QUERY', with args beginning with: 'g' 'RETURN 1' '--compact' "
          )
        ),
      (db) =>
        Effect.gen(function* () {
          const ro = yield* Effect.flip(db.graph("g").roQuery("CREATE (:A)"))
          assert.strictEqual(ro.reason._tag, "ReadOnlyQuery")
          assert.strictEqual(serverMessageOf(ro), "graph.RO_QUERY is to be executed only on read-only queries")
          const missing = yield* Effect.flip(db.graph("g").query("RETURN 1"))
          assert.strictEqual(missing.reason._tag, "ModuleMissing")
          assert.include(missing.message, "the FalkorDB module is not loaded")
          assert.include(missing.hint, "--loadmodule")
        })
    )
  )

  it.effect("wraps connection-level errors with their cause and retryability", () => {
    const conn = scripted((cmd) =>
      Effect.fail(
        new RedisError({ reason: new ConnectionLost({ written: cmd[0] === "GRAPH.QUERY", message: "socket closed" }) })
      )
    )
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const write = yield* Effect.flip(db.graph("g").query("CREATE ()"))
      assert.strictEqual(write.reason._tag, "Connection")
      assert.isFalse(write.isRetryable)
      assert.include(write.hint, "may have run")
      const read = yield* Effect.flip(db.graph("g").roQuery("RETURN 1"))
      assert.isTrue(read.isRetryable)
      assert.instanceOf(read.reason.cause, RedisError)
      assert.strictEqual((read.reason.cause as RedisError).reason._tag, "ConnectionLost")
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  const fiveRows = (bad: number | undefined) => {
    const row = (i: number) => (i === bad ? "*1\n*2\n:42\n:0\n" : `*1\n*2\n:3\n:${i}\n`)
    return resp(`*3\n*1\n*2\n:1\n$1\nx\n*5\n${[0, 1, 2, 3, 4].map(row).join("")}${stats}`)
  }

  it.effect("streams rows lazily: rows after the ones taken are never decoded", () =>
    withClient(
      () => Effect.succeed(fiveRows(3)),
      (db) =>
        Effect.gen(function* () {
          const g = db.graph("g")
          const firstTwo = yield* g.roStream("UNWIND range(0, 4) AS x RETURN x").pipe(Stream.take(2), Stream.runCollect)
          assert.deepStrictEqual(
            Array.from(firstTwo, (r) => r.get("x")),
            [0, 1]
          )
          const e = yield* Effect.flip(Stream.runCollect(g.roStream("UNWIND range(0, 4) AS x RETURN x")))
          assert.strictEqual(e.reason._tag, "Decode")
          assert.deepInclude(e.reason, { row: 3, column: "x", graph: "g", command: "GRAPH.RO_QUERY" })
        }),
      { chunkSize: 2 }
    )
  )

  it.effect("rows know their header", () =>
    withClient(
      () =>
        Effect.succeed(
          resp(`*3\n*2\n*2\n:1\n$4\nyear\n*2\n:1\n$5\ntitle\n*1\n*2\n*2\n:3\n:1999\n*2\n:2\n$6\nMatrix\n${stats}`)
        ),
      (db) =>
        Effect.gen(function* () {
          const { rows, statistics } = yield* db.graph("g").roQuery("RETURN 1999 AS year, 'Matrix' AS title")
          const row = rows[0]!
          assert.strictEqual(row.get("year"), 1999)
          assert.strictEqual(row.getAt(1), "Matrix")
          assert.strictEqual(row.get("nope"), undefined)
          assert.deepStrictEqual(row.toObject(), { year: 1999, title: "Matrix" })
          assert.strictEqual(statistics.executionTimeMs, 0.067516)
        })
    )
  )

  it.effect("a spread or JSON of the result shows its statistics", () =>
    withClient(
      () => Effect.succeed(resp(`*3\n*1\n*2\n:1\n$3\none\n*1\n*1\n*2\n:3\n:1\n${stats}`)),
      (db) =>
        Effect.gen(function* () {
          const result = yield* db.graph("g").roQuery("RETURN 1 AS one")
          const copy = { ...result }
          assert.deepStrictEqual(copy.statistics, result.statistics)
          assert.strictEqual(copy.statistics.executionTimeMs, 0.067516)
          assert.deepStrictEqual(JSON.parse(JSON.stringify(result)).statistics.entries, [
            ["Cached execution", "0"],
            ["Query internal execution time", "0.067516"]
          ])
        })
    )
  )

  it.effect("a malformed statistic fails the query itself with Decode, not a later read", () =>
    withClient(
      () => Effect.succeed(resp("*1\n*2\n$19\nCached execution: 0\n:7\n")),
      (db) =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(db.graph("g").query("CREATE ()"))
          assert.strictEqual(error.reason._tag, "Decode")
          assert.include(error.message, "a statistic is not a string")
        })
    )
  )

  it.effect("queryAs decodes rows by alias, node properties into a struct, failing per row with the column", () => {
    const node = (name: string) => `*2\n:8\n*3\n:0\n*1\n:0\n*1\n*3\n:0\n:2\n$${name.length}\n${name}\n`
    const rows = resp(
      `*3\n*2\n*2\n:1\n$1\np\n*2\n:1\n$3\nage\n*2\n*2\n${node("Ann")}*2\n:3\n:30\n*2\n${node("Bob")}*2\n:2\n$2\nno\n${stats}`
    )
    return withClient(
      (cmd) =>
        Effect.succeed(
          cmd[2] === "CALL db.labels()"
            ? nameList("label", ["Person"])
            : cmd[2] === "CALL db.propertyKeys()"
              ? nameList("propertyKey", ["name"])
              : rows
        ),
      (db) =>
        Effect.gen(function* () {
          const Person = Schema.Struct({
            p: Value.nodeProperties(Schema.Struct({ name: Schema.String })),
            age: Schema.Number
          })
          const taken = yield* db
            .graph("g")
            .roQueryAs(Person, "MATCH (p) RETURN p, p.age AS age")
            .pipe(Stream.take(1), Stream.runCollect)
          assert.deepStrictEqual(Array.from(taken), [{ p: { name: "Ann" }, age: 30 }])
          const e: FalkorError = yield* Effect.flip(
            Stream.runCollect(db.graph("g").roQueryAs(Person, "MATCH (p) RETURN p, p.age AS age"))
          )
          assert.strictEqual(e.reason._tag, "RowDecode")
          assert.deepInclude(e.reason, { row: 1, column: "age" })
          // One stream value run twice: each run counts its rows from 0.
          const reused = db.graph("g").roQueryAs(Person, "MATCH (p) RETURN p, p.age AS age")
          const first = yield* Effect.flip(Stream.runCollect(reused))
          const second = yield* Effect.flip(Stream.runCollect(reused))
          assert.deepStrictEqual(
            [first.reason, second.reason].map((r) => (r._tag === "RowDecode" ? r.row : -1)),
            [1, 1]
          )
          const full = yield* db
            .graph("g")
            .roQueryAs(Schema.Struct({ p: Value.nodeOf(Schema.Struct({ name: Schema.String })) }), "MATCH (p) RETURN p")
            .pipe(Stream.take(1), Stream.runCollect)
          assert.deepStrictEqual(Array.from(full)[0]!.p, { id: 0, labels: ["Person"], properties: { name: "Ann" } })
          const raw = yield* db.graph("g").roQuery("MATCH (p) RETURN p, p.age AS age")
          assert.instanceOf(raw.rows[0]!.get("p"), Node)
        })
    )
  })

  it.effect("queryAs emits the rows before a failing one, then fails; an asynchronous schema too", () => {
    const int = (n: number) => `*1\n*2\n:3\n:${n}\n`
    const rows = resp(`*3\n*1\n*2\n:1\n$1\nx\n*4\n${int(1)}${int(2)}*1\n*2\n:2\n$2\nno\n${int(4)}${stats}`)
    // Decoding that yields (an Effect, not an Exit, like any asynchronous decoding): row by row.
    const Scaled = Schema.Number.pipe(
      Schema.decodeTo(Schema.Number, {
        decode: SchemaGetter.transformEffect((n: number) => Effect.as(Effect.yieldNow, n * 10)),
        encode: SchemaGetter.transform((n: number) => n)
      })
    )
    return withClient(
      () => Effect.succeed(rows),
      (db) =>
        Effect.gen(function* () {
          const seenBefore = (schema: Schema.Decoder<{ readonly x: number }>) =>
            Effect.gen(function* () {
              const seen: Array<number> = []
              const error = yield* Effect.flip(
                db
                  .graph("g")
                  .roQueryAs(schema, "MATCH (n) RETURN n.x AS x")
                  .pipe(Stream.runForEach((row) => Effect.sync(() => void seen.push(row.x))))
              )
              assert.strictEqual(error.reason._tag, "RowDecode")
              assert.deepInclude(error.reason, { row: 2, column: "x" })
              return seen
            })
          assert.deepStrictEqual(yield* seenBefore(Schema.Struct({ x: Schema.Number })), [1, 2])
          assert.deepStrictEqual(yield* seenBefore(Schema.Struct({ x: Scaled })), [10, 20])
        })
    )
  })

  it.effect("delete and copy answer OK (simple or bulk) and list reads names", () =>
    withClient(
      (cmd) =>
        Effect.succeed(
          cmd[0] === "GRAPH.DELETE" ? "OK" : cmd[0] === "GRAPH.COPY" ? resp("$2\nOK\n") : resp("*2\n$1\na\n$1\nb\n")
        ),
      (db, calls) =>
        Effect.gen(function* () {
          yield* db.graph("g").delete()
          const copy = yield* db.graph("g").copy("g2")
          assert.strictEqual(copy.name, "g2")
          assert.deepStrictEqual(yield* db.list(), ["a", "b"])
          assert.deepStrictEqual(calls, [["GRAPH.DELETE", "g"], ["GRAPH.COPY", "g", "g2"], ["GRAPH.LIST"]])
        })
    )
  )

  it.effect("explain parses plans with (C) and without (Rust) the Results root; profile reads counts", () =>
    withClient(
      (cmd) =>
        Effect.succeed(
          cmd[0] === "GRAPH.EXPLAIN"
            ? cmd[2] === "c"
              ? resp(`*3\n${bulk("Results")}${bulk("    Project")}${bulk("        Node By Label Scan | (a:P)")}`)
              : resp(`*2\n${bulk("Project")}${bulk("    Node By Label Scan | (a:P)")}`)
            : resp(
                `*2\n${bulk("Results | Records produced: 1, Execution time: 0.001449 ms")}${bulk("    Project | Records produced: 1, Execution time: 0.0021 ms")}`
              )
        ),
      (db) =>
        Effect.gen(function* () {
          const c = yield* db.graph("g").explain("c")
          assert.strictEqual(c.roots[0]!.name, "Results")
          assert.strictEqual(c.roots[0]!.children[0]!.children[0]!.details, "(a:P)")
          const rs = yield* db.graph("g").explain("rs")
          assert.strictEqual(rs.roots[0]!.name, "Project")
          assert.strictEqual(rs.roots[0]!.children[0]!.name, "Node By Label Scan")
          const p = yield* db.graph("g").profile("MATCH (a) RETURN a")
          assert.strictEqual(p.roots[0]!.recordsProduced, 1)
          assert.strictEqual(p.roots[0]!.children[0]!.executionTimeMs, 0.0021)
        })
    )
  )

  it.effect("slowlog accepts 4-field (≤ 4.14) and 5-field (≥ 4.16) entries", () =>
    withClient(
      () =>
        Effect.succeed(
          resp(
            `*2\n*4\n${bulk("1796220281")}${bulk("GRAPH.QUERY")}${bulk("RETURN 1")}${bulk("0.123")}*5\n${bulk("1796220282")}${bulk("GRAPH.RO_QUERY")}${bulk("RETURN 2")}${bulk("250")}${bulk("CYPHER n=2 ")}`
          )
        ),
      (db) =>
        Effect.gen(function* () {
          const entries = yield* db.graph("g").slowlog()
          assert.deepStrictEqual(entries, [
            {
              timestamp: 1796220281,
              command: "GRAPH.QUERY",
              query: "RETURN 1",
              latencyMs: 0.123,
              parameters: undefined
            },
            {
              timestamp: 1796220282,
              command: "GRAPH.RO_QUERY",
              query: "RETURN 2",
              latencyMs: 250,
              parameters: "CYPHER n=2 "
            }
          ])
        })
    )
  )
})

// Byte-exact replies of the Rust-based server (protocol reference §1–§7, §12), which neither
// recording has.
describe("Graph against the Rust-based server's reply forms", () => {
  const rust = (cmd: ReadonlyArray<string>): Reply => {
    switch (cmd[0]) {
      case "GRAPH.COPY":
      case "GRAPH.DELETE":
        return resp("+OK\n") // S-rs replies a simple string for COPY too
      case "GRAPH.EXPLAIN":
        return resp(`*2\n${bulk("Project")}${bulk("    Node By Label Scan | (a:actor)")}`) // no Results root
      case "GRAPH.SLOWLOG":
        return resp(
          `*1\n*5\n${bulk("1581932396")}${bulk("GRAPH.QUERY")}${bulk("RETURN $n")}${bulk("12.345")}${bulk("CYPHER n=1 ")}`
        )
    }
    switch (cmd[2]) {
      case "syntax":
        return new ErrorReply("Invalid input 'x': expected a clause, errCtx: x MATCH (n) RETURN, pos 0")
      case "wrongtype":
        return new ErrorReply("Existing key has wrong Redis type")
      case "version":
        return resp("*2\n-ERR invalid graph version\n:7\n")
      case "replaced":
        return new ErrorReply("graph was deleted or replaced while the query was running, aborting")
      default:
        return resp(`*1\n*3\n${bulk("Nodes created: 1")}${bulk("Cached execution: 0")}${bulk("Graph version: 42")}`)
    }
  }

  it.effect("parses and classifies every Rust-only form", () =>
    withClient(
      (cmd) => Effect.succeed(rust(cmd)),
      (db) =>
        Effect.gen(function* () {
          const g = db.graph("g")
          const created = yield* g.query("CREATE ()")
          assert.strictEqual(created.statistics.graphVersion, 42)
          assert.strictEqual(created.statistics.nodesCreated, 1)
          assert.strictEqual((yield* Effect.flip(g.query("syntax"))).reason._tag, "Syntax")
          assert.strictEqual((yield* Effect.flip(g.query("wrongtype"))).reason._tag, "WrongType")
          const mismatch = yield* Effect.flip(g.query("version"))
          assert.strictEqual(mismatch.reason._tag, "VersionMismatch")
          assert.deepInclude(mismatch.reason, { currentVersion: 7 })
          assert.strictEqual((yield* Effect.flip(g.query("replaced"))).reason._tag, "Runtime")
          yield* g.delete()
          assert.strictEqual((yield* g.copy("h")).name, "h")
          assert.strictEqual((yield* g.explain("MATCH (a:actor) RETURN a")).roots[0]!.name, "Project")
          assert.strictEqual((yield* g.slowlog())[0]!.parameters, "CYPHER n=1 ")
        })
    )
  )
})

describe("Graph retry policy", () => {
  const flaky = (failures: number) => {
    let calls = 0
    return scripted(() => {
      calls++
      return calls <= failures
        ? Effect.fail(new RedisError({ reason: new ConnectionLost({ written: false, message: "reconnecting" }) }))
        : Effect.succeed(okStats)
    })
  }

  it.effect("retries read-only queries on retryable errors with backoff (TestClock)", () => {
    const conn = flaky(2)
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const fiber = yield* Effect.forkChild(db.graph("g").roQuery("RETURN 1"))
      // Nothing is retried until the clock moves: the delays are real backoff, not spins.
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow
      assert.strictEqual(conn.calls.length, 1)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.strictEqual(conn.calls.length, 3)
    }).pipe(
      Effect.provide(FalkorDB.layerFromRedisWith({ retry: { times: 3, baseDelay: "100 millis" } })),
      Effect.provide(conn.layer)
    )
  })

  it.effect("never retries query (a possible write), and gives up after `times`", () => {
    const conn = flaky(10)
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const write = yield* Effect.flip(db.graph("g").query("CREATE ()"))
      assert.strictEqual(write.reason._tag, "Connection")
      assert.strictEqual(conn.calls.length, 1)
      const fiber = yield* Effect.forkChild(Effect.flip(db.graph("g").roQuery("RETURN 1")))
      yield* TestClock.adjust("1 minute")
      const read = yield* Fiber.join(fiber)
      assert.strictEqual(read.reason._tag, "Connection")
      assert.strictEqual(conn.calls.length, 1 + 3)
    }).pipe(Effect.provide(FalkorDB.layerFromRedisWith({ retry: { times: 2 } })), Effect.provide(conn.layer))
  })
})
