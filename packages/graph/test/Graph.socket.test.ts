import type { RedisError } from "@effect-falkordb/redis/RedisError"
// The graph client end to end through real loopback sockets. The scriptable RESP test server
// replays the exact bytes recorded from FalkorDB 4.4.0 and 4.18.11 (or plays a small scripted
// graph server), and the client runs over the real connection layers: single and multiplexed.
import { decodeKnown } from "./helpers.ts"
import * as CompactReply from "../src/internal/CompactReply.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import { Node } from "../src/Value.ts"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as CompactEncoder from "@effect-falkordb/testing/CompactEncoder"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { isDeepStrictEqual } from "node:util"
import {
  decodeReply,
  type Exchange,
  fullSchema,
  loadScenarios,
  replayable,
  type Scenario,
  versions
} from "./fixtures.ts"
import { serverMessageOf } from "./helpers.ts"

type Strategy = "single" | "multiplexed"
const strategies: ReadonlyArray<Strategy> = ["single", "multiplexed"]

/** The client over a real connection layer: `layerSingle`, or the default multiplexed layer with 4 sockets. */
const clientLayer = (url: string, strategy: Strategy, protocol: 2 | 3, options: FalkorDB.ClientOptions = {}) =>
  strategy === "single"
    ? FalkorDB.layerFromRedisWith(options).pipe(Layer.provide(RedisConnection.layerSingle({ url, protocol })))
    : FalkorDB.layer({ url, protocol, connections: 4, ...options })

const handshake = new Set(["PING", "HELLO", "AUTH", "SELECT", "CLIENT"])

/** Verbose schema refreshes among the received requests, by procedure text. */
const refreshesOf = (received: ReadonlyArray<RespTestServer.Received>) =>
  received
    .filter((r) => r.command[0] === "GRAPH.RO_QUERY" && r.command.length === 3 && r.command[2]!.startsWith("CALL db."))
    .map((r) => r.command[2]!)

const runProbe = (db: FalkorDB.FalkorDB["Service"], e: Exchange) => {
  const graph = db.graph(e.request[1]!)
  const run = e.request[0] === "GRAPH.QUERY" ? graph.query : graph.roQuery
  const options = e.request.length === 6 ? { timeout: Number(e.request[5]) } : undefined
  return Effect.result(run(e.request[2]!, undefined, options))
}

/** What differs between the client's answer and the recorded reply, decoded independently. */
const mismatchOf = (
  s: Scenario,
  e: Exchange,
  names: CompactReply.Names,
  result: Effect.Success<ReturnType<typeof runProbe>>
): string | undefined => {
  const where = `${s.version}/${s.scenario} ${JSON.stringify(e.request[2]).slice(0, 100)}`
  const recorded = decodeReply(e.reply_base64)
  if (recorded instanceof ErrorReply) {
    if (result._tag === "Success") return `${where}: expected the error ${recorded.message}`
    return serverMessageOf(result.failure) === recorded.message ? undefined : `${where}: ${result.failure.message}`
  }
  if (result._tag === "Failure") return `${where}: ${result.failure.message}`
  const envelope = CompactReply.parseEnvelope(recorded, s.graph, e.request[0]!)
  const expected = envelope.rows.map((r, i) => decodeKnown(r, i, envelope.columns, names))
  if (!isDeepStrictEqual(result.success.columns, envelope.columns)) return `${where}: header`
  if (!isDeepStrictEqual(result.success.statistics.entries, envelope.statistics.entries)) return `${where}: statistics`
  if (
    !isDeepStrictEqual(
      result.success.rows.map((r) => r.values),
      expected
    )
  )
    return `${where}: rows`
  return undefined
}

/** Answers every recorded reply in pieces of `size` bytes, one socket write each, `gap` apart. */
const splitting =
  (handler: RespTestServer.Handler, size: number, gap?: Duration.Input): RespTestServer.Handler =>
  (request, connection) => {
    const answer = handler(request, connection)
    return answer instanceof RespTestServer.Raw
      ? RespTestServer.steps({ split: size, gap }, { write: answer.bytes })
      : answer
  }

interface ReplayRun {
  readonly probes: number
  readonly mismatches: ReadonlyArray<string>
  readonly received: ReadonlyArray<RespTestServer.Received>
}

/**
 * Replays one scenario's compact pass through a fresh client: every replayable probe, one
 * after the other (`concurrency: 1`) or all at once. Concurrent runs use only probes whose
 * request was recorded once, since a repeated request's replies depend on arrival order.
 */
const replayScenario = (
  s: Scenario,
  strategy: Strategy,
  options: { readonly concurrency?: number; readonly split?: number; readonly gap?: Duration.Input } = {}
): Effect.Effect<ReplayRun, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const fixture = yield* FixtureReplay.loadScenario(s.version, s.scenario)
      const replay = FixtureReplay.replay(fixture, { pass: "compact" })
      const handler =
        options.split === undefined ? replay.handler : splitting(replay.handler, options.split, options.gap)
      const server = yield* RespTestServer.make({ handler })
      const concurrency = options.concurrency ?? 1
      const counts = new Map<string, number>()
      for (const e of s.exchanges) {
        if (e.pass === "compact")
          counts.set(JSON.stringify(e.request), (counts.get(JSON.stringify(e.request)) ?? 0) + 1)
      }
      const probes = s.exchanges
        .filter(replayable)
        .filter((e) => concurrency === 1 || counts.get(JSON.stringify(e.request)) === 1)
      const names = fullSchema(s)
      const mismatches: Array<string> = []
      yield* Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        yield* Effect.forEach(
          probes,
          (e) =>
            Effect.map(runProbe(db, e), (result) => {
              const mismatch = mismatchOf(s, e, names, result)
              if (mismatch !== undefined) mismatches.push(mismatch)
            }),
          { concurrency, discard: true }
        )
      }).pipe(Effect.provide(clientLayer(server.url, strategy, s.protocol as 2 | 3)))
      const received = yield* server.received
      // Every command the client sent was a recorded one or a handshake: nothing unscripted.
      const recorded = new Set(s.exchanges.map((e) => JSON.stringify(e.request)))
      for (const r of received) {
        if (!handshake.has(r.command[0]!) && !recorded.has(JSON.stringify(r.command))) {
          mismatches.push(`${s.version}/${s.scenario}: unrecorded request ${JSON.stringify(r.command).slice(0, 120)}`)
        }
      }
      // One refresh per kind at most: the first answers every id of the scenario.
      const refreshes = refreshesOf(received)
      if (new Set(refreshes).size !== refreshes.length) {
        mismatches.push(`${s.version}/${s.scenario}: repeated refreshes ${JSON.stringify(refreshes)}`)
      }
      return { probes: probes.length, mismatches, received }
    })
  )

const scenariosOf = (version: string) => loadScenarios(version).filter((s) => s.scenario !== "version-argument")

describe("Graph over recorded replies, through real sockets", () => {
  for (const version of versions) {
    for (const strategy of strategies) {
      it.live(
        `${version} over ${strategy}: every replayable probe, one by one, gets the recorded answer`,
        () =>
          Effect.gen(function* () {
            let probes = 0
            const mismatches: Array<string> = []
            let resp3 = 0
            for (const s of scenariosOf(version)) {
              const run = yield* replayScenario(s, strategy)
              probes += run.probes
              mismatches.push(...run.mismatches)
              if (s.protocol === 3) {
                // The recorded HELLO 3 answered the handshake of every connection.
                const hellos = run.received.filter((r) => r.command[0] === "HELLO")
                assert.deepStrictEqual(
                  hellos.map((r) => r.command.slice(0, 2)),
                  hellos.map(() => ["HELLO", "3"])
                )
                assert.isAbove(hellos.length, 0)
                resp3 += run.probes
              }
            }
            assert.deepStrictEqual(mismatches.slice(0, 10), [])
            assert.isAbove(probes, 250)
            assert.isAbove(resp3, 10)
          }),
        { timeout: 120_000 }
      )
    }

    it.live(
      `${version} over multiplexed: the probes of each scenario all at once, replies matched to their queries`,
      () =>
        Effect.gen(function* () {
          let probes = 0
          const mismatches: Array<string> = []
          const connections = new Set<number>()
          for (const s of scenariosOf(version)) {
            const run = yield* replayScenario(s, "multiplexed", { concurrency: 32 })
            probes += run.probes
            mismatches.push(...run.mismatches)
            for (const r of run.received) if (r.command[0]!.startsWith("GRAPH.")) connections.add(r.connection)
          }
          assert.deepStrictEqual(mismatches.slice(0, 10), [])
          assert.isAbove(probes, 200)
          // Spread over the sockets, not funnelled through one.
          assert.isAbove(connections.size, 1)
        }),
      { timeout: 120_000 }
    )

    for (const strategy of strategies) {
      it.live(
        `${version} over ${strategy}: replies written in 3-byte socket writes (1000-byte ones for the two largest scenarios) decode the same`,
        () =>
          Effect.gen(function* () {
            let probes = 0
            const mismatches: Array<string> = []
            for (const s of scenariosOf(version)) {
              const big = s.scenario === "row-counts" || s.scenario === "strings"
              const run = yield* replayScenario(s, strategy, { split: big ? 1000 : 3 })
              probes += run.probes
              mismatches.push(...run.mismatches)
            }
            assert.deepStrictEqual(mismatches.slice(0, 10), [])
            assert.isAbove(probes, 250)
          }),
        { timeout: 180_000 }
      )
    }

    it.live(
      `${version} over single: RESP2 and RESP3 replies in 7-byte pieces, 1 ms apart, decode the same`,
      () =>
        Effect.gen(function* () {
          const mismatches: Array<string> = []
          let probes = 0
          for (const s of scenariosOf(version).filter(
            (x) => x.scenario === "values-all-types" || x.scenario === "resp3"
          )) {
            const run = yield* replayScenario(s, "single", { split: 7, gap: "1 millis" })
            probes += run.probes
            mismatches.push(...run.mismatches)
          }
          assert.deepStrictEqual(mismatches, [])
          assert.isAbove(probes, 20)
        }),
      { timeout: 60_000 }
    )
  }
})

// The largest recorded compact query reply of 4.18.11 (about 70 KB: many socket reads).
const largest = (() => {
  const candidates = scenariosOf("falkordb-4.18.11").flatMap((s) =>
    s.exchanges.filter(replayable).map((exchange) => ({ scenario: s, exchange }))
  )
  const { scenario, exchange } = candidates.reduce((a, b) =>
    b.exchange.reply_base64.length > a.exchange.reply_base64.length ? b : a
  )
  return { scenario, exchange, bytes: Buffer.from(exchange.reply_base64, "base64") }
})()

describe("Graph through real sockets, when the connection fails", () => {
  for (const strategy of strategies) {
    it.live(
      `${strategy}: a connection dropped inside a 70 KB reply fails that query only, written, never retried`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            assert.isAbove(largest.bytes.length, 60_000)
            const fixture = yield* FixtureReplay.loadScenario("falkordb-4.18.11", largest.scenario.scenario)
            const replay = FixtureReplay.replay(fixture, { pass: "compact" })
            const key = JSON.stringify(largest.exchange.request)
            let cut = false
            const server = yield* RespTestServer.make({
              handler: (request, connection) => {
                if (!cut && JSON.stringify(request.command) === key) {
                  cut = true
                  const half = largest.bytes.subarray(0, largest.bytes.length >> 1)
                  return RespTestServer.steps({ write: half }, { drop: true })
                }
                return replay.handler(request, connection)
              }
            })
            const names = fullSchema(largest.scenario)
            yield* Effect.gen(function* () {
              const db = yield* FalkorDB.FalkorDB
              const failed = yield* runProbe(db, largest.exchange)
              assert.strictEqual(failed._tag, "Failure")
              if (failed._tag === "Failure") {
                assert.strictEqual(failed.failure.reason._tag, "Connection")
                const cause = failed.failure.reason.cause as RedisError
                assert.strictEqual(cause.reason._tag, "ConnectionLost")
                assert.isTrue(cause.written, "the query reached the server: it may have run")
                assert.isAbove(failed.failure.hint.length, 0)
              }
              // The query is sent once: a write that may have run is never repeated behind the caller's back.
              const sent = (yield* server.received).filter((r) => JSON.stringify(r.command) === key)
              assert.strictEqual(sent.length, 1)
              // The client reconnects; the same query now gets the whole reply.
              const again = yield* runProbe(db, largest.exchange)
              assert.isUndefined(mismatchOf(largest.scenario, largest.exchange, names, again))
              assert.isAtLeast(yield* server.accepted, 2)
            }).pipe(Effect.provide(clientLayer(server.url, strategy, 2)))
          })
        )
    )

    it.live(`${strategy}: a reply that comes after the client timeout never completes the next query`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const tables = new CompactEncoder.SchemaTables()
          const answer = (text: string) =>
            CompactEncoder.encodeResult({ columns: ["probe"], rows: [[text]] }, tables) as Reply
          const server = yield* RespTestServer.make({
            handler: (request) => {
              if (request.name !== "GRAPH.QUERY" && request.name !== "GRAPH.RO_QUERY") return undefined
              const text = request.command[2]!
              return text === "RETURN 'slow' AS probe"
                ? RespTestServer.steps({ delay: "300 millis" }, { reply: answer("slow") })
                : answer(text.slice(8, -10))
            }
          })
          yield* Effect.gen(function* () {
            const db = yield* FalkorDB.FalkorDB
            const g = db.graph("g")
            const slow = yield* Effect.flip(
              g.query("RETURN 'slow' AS probe", undefined, { clientTimeout: "50 millis" })
            )
            // The client stopped waiting: a timeout by the client, the query possibly still running.
            assert.deepInclude(slow.reason, { _tag: "Timeout", origin: "client", stillRunning: true, timeout: 50 })
            // Sent right away, on the connection that still owes the late reply (single) or any other.
            const fast = yield* g.query("RETURN 'fast' AS probe")
            assert.deepStrictEqual(fast.rows[0]!.values, ["fast"])
            const after = yield* Effect.forEach(["a", "b", "c"], (t) => g.roQuery(`RETURN '${t}' AS probe`), {
              concurrency: "unbounded"
            })
            assert.deepStrictEqual(
              after.map((r) => r.rows[0]!.values[0]),
              ["a", "b", "c"]
            )
          }).pipe(Effect.provide(clientLayer(server.url, strategy, 2)))
        })
      )
    )
  }
})

// A small graph server for scenarios the recordings cannot play: a shared graph that several
// clients change, with the server's schema-version check (a mismatch runs nothing).
interface GraphState {
  tables: CompactEncoder.SchemaTables
  nodes: Array<{ readonly labels: ReadonlyArray<string>; readonly name: string }>
}

const emptyGraph = (): GraphState => ({ tables: new CompactEncoder.SchemaTables(), nodes: [] })

/** A stand-in for the server's schema hash: 0 for an empty schema, changing with every addition. */
const schemaHash = (t: CompactEncoder.SchemaTables): number => {
  const text = JSON.stringify([t.labels, t.relationshipTypes, t.propertyKeys])
  if (t.labels.length + t.relationshipTypes.length + t.propertyKeys.length === 0) return 0
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0
  return h
}

const columnOf = { labels: "label", relationshipTypes: "relationshipType", propertyKeys: "propertyKey" } as const

const graphServer = (options: { readonly beforeRefresh?: Effect.Effect<void> } = {}) =>
  Effect.gen(function* () {
    let graph = emptyGraph()
    let mismatchReplies = 0
    const server = yield* RespTestServer.make({
      handler: (request) => {
        const [name, , text, ...flags] = request.command
        if (name === "GRAPH.DELETE") {
          graph = emptyGraph()
          return "OK"
        }
        if (name !== "GRAPH.QUERY" && name !== "GRAPH.RO_QUERY") return undefined
        const procedure =
          /^CALL db\.(labels|relationshipTypes|propertyKeys)\(\)(?: YIELD \w+ RETURN \w+ SKIP (\d+))?$/.exec(text!)
        if (procedure !== null) {
          const kind = procedure[1] as keyof typeof columnOf
          const reply = () =>
            CompactEncoder.encodeNameList(columnOf[kind], graph.tables[kind].slice(Number(procedure[2] ?? 0)), false)
          return options.beforeRefresh === undefined ? reply() : Effect.map(options.beforeRefresh, reply)
        }
        const version = flags.indexOf("version")
        if (version !== -1 && Number(flags[version + 1]) !== schemaHash(graph.tables)) {
          mismatchReplies++
          return [new ErrorReply("version mismatch"), schemaHash(graph.tables)]
        }
        const create = /^CREATE \(:(\w+) \{name: '(\w+)'\}\)$/.exec(text!)
        if (create !== null) {
          const labelsAdded = graph.tables.labels.includes(create[1]!) ? 0 : 1
          graph.tables.id("labels", create[1]!)
          graph.tables.id("propertyKeys", "name")
          graph.nodes.push({ labels: [create[1]!], name: create[2]! })
          return CompactEncoder.encodeResult(
            { statistics: { labelsAdded, nodesCreated: 1, propertiesSet: 1 } },
            graph.tables
          )
        }
        if (text === "MATCH (n) RETURN n") {
          const rows = graph.nodes.map((n, id) => [new Node(id, n.labels, { name: n.name })])
          return CompactEncoder.encodeResult({ columns: ["n"], rows }, graph.tables)
        }
        return undefined
      }
    })
    return { ...server, mismatchReplies: () => mismatchReplies }
  })

/** Runs commands as another client of the same server would. */
const someoneElse = (url: string, commands: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.gen(function* () {
    const connection = yield* RedisConnection.RedisConnection
    for (const command of commands) yield* connection.execute(command)
  }).pipe(Effect.provide(RedisConnection.layerSingle({ url })))

const labelsOf = (result: { readonly rows: ReadonlyArray<{ readonly values: ReadonlyArray<unknown> }> }) =>
  result.rows.map((r) => (r.values[0] as Node).labels.join(":"))

describe("Schema cache through real sockets", () => {
  for (const protocol of [2, 3] as const) {
    it.live(`RESP${protocol}: 40 concurrent decoders over 4 sockets that miss share one refresh per kind`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const gate = yield* Deferred.make<void>()
          const server = yield* graphServer({ beforeRefresh: Deferred.await(gate) })
          yield* someoneElse(server.url, [["GRAPH.QUERY", "g", "CREATE (:Person {name: 'ann'})"]])
          yield* Effect.gen(function* () {
            const db = yield* FalkorDB.FalkorDB
            // A Graph value per query: every Graph of the name shares one cache.
            const fibers = yield* Effect.forEach(Array.from({ length: 40 }), () =>
              Effect.forkChild(db.graph("g").roQuery("MATCH (n) RETURN n"), { startImmediately: true })
            )
            // Every query reached the server before any refresh is answered.
            while ((yield* server.received).filter((r) => r.command[2] === "MATCH (n) RETURN n").length < 40) {
              yield* Effect.sleep("5 millis")
            }
            yield* Deferred.succeed(gate, undefined)
            const results = yield* Effect.forEach(fibers, Fiber.join)
            for (const r of results) assert.deepStrictEqual(labelsOf(r), ["Person"])
            const received = yield* server.received
            assert.deepStrictEqual(refreshesOf(received).sort(), ["CALL db.labels()", "CALL db.propertyKeys()"])
            assert.isAbove(
              new Set(received.filter((r) => r.command[2] === "MATCH (n) RETURN n").map((r) => r.connection)).size,
              1
            )
            assert.strictEqual(db.connection.info.protocol, protocol)

            // Growth: a new label is fetched incrementally, only the names beyond those known.
            yield* someoneElse(server.url, [["GRAPH.QUERY", "g", "CREATE (:Movie {name: 'heat'})"]])
            const grown = yield* db.graph("g").roQuery("MATCH (n) RETURN n")
            assert.deepStrictEqual(labelsOf(grown), ["Person", "Movie"])
            assert.deepStrictEqual(refreshesOf(yield* server.received).slice(2), [
              "CALL db.labels() YIELD label RETURN label SKIP 1"
            ])
          }).pipe(Effect.provide(clientLayer(server.url, "multiplexed", protocol)))
        })
      )
    )

    for (const strategy of strategies) {
      it.live(
        `RESP${protocol} over ${strategy}: a graph deleted and re-created by someone else is never mislabelled (version check)`,
        () =>
          Effect.scoped(
            Effect.gen(function* () {
              const server = yield* graphServer()
              yield* someoneElse(server.url, [["GRAPH.QUERY", "g", "CREATE (:Person {name: 'ann'})"]])
              yield* Effect.gen(function* () {
                const db = yield* FalkorDB.FalkorDB
                const g = db.graph("g")
                assert.deepStrictEqual(labelsOf(yield* g.query("MATCH (n) RETURN n")), ["Person"])
                // Someone else replaces the graph: label id 0 now means Movie, id 1 Person.
                yield* someoneElse(server.url, [
                  ["GRAPH.DELETE", "g"],
                  ["GRAPH.QUERY", "g", "CREATE (:Movie {name: 'heat'})"],
                  ["GRAPH.QUERY", "g", "CREATE (:Person {name: 'bob'})"]
                ])
                const after = yield* g.roQuery("MATCH (n) RETURN n")
                assert.deepStrictEqual(labelsOf(after), ["Movie", "Person"])
                assert.deepStrictEqual(
                  after.rows.map((r) => (r.values[0] as Node).properties),
                  [{ name: "heat" }, { name: "bob" }]
                )
                assert.strictEqual(g.schema.replacements, 1)
                // The server refused the stale version (running nothing) before the client re-read the schema.
                const refused = server.mismatchReplies()
                assert.isAtLeast(refused, 1)
                // Growth through one's own write: a mismatch, a re-read, no replacement.
                yield* g.query("CREATE (:Actor {name: 'cy'})")
                assert.deepStrictEqual(labelsOf(yield* g.query("MATCH (n) RETURN n")), ["Movie", "Person", "Actor"])
                assert.strictEqual(g.schema.replacements, 1)
                assert.isAbove(server.mismatchReplies(), refused)
              }).pipe(Effect.provide(clientLayer(server.url, strategy, protocol, { schemaVersionCheck: true })))
            })
          )
      )
    }
  }

  it.live("a stream of a large recorded reply yields its first rows without decoding the rest", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fixture = yield* FixtureReplay.loadScenario("falkordb-4.18.11", largest.scenario.scenario)
        const server = yield* FixtureReplay.serve(fixture, { pass: "compact" })
        const e = largest.exchange
        const envelope = CompactReply.parseEnvelope(decodeReply(e.reply_base64), largest.scenario.graph, e.request[0]!)
        const names = fullSchema(largest.scenario)
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = db.graph(e.request[1]!)
          const rows = e.request[0] === "GRAPH.QUERY" ? g.stream(e.request[2]!) : g.roStream(e.request[2]!)
          const first = yield* rows.pipe(Stream.take(3), Stream.runCollect)
          assert.deepStrictEqual(
            Array.from(first, (r) => r.values),
            envelope.rows.slice(0, 3).map((r, i) => decodeKnown(r, i, envelope.columns, names))
          )
          const count = yield* Stream.runCount(rows)
          assert.strictEqual(count, envelope.rows.length)
        }).pipe(Effect.provide(clientLayer(server.url, "multiplexed", 2)))
      })
    )
  )
})
