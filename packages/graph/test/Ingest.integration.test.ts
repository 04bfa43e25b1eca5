// Against a real FalkorDB: set FALKORDB_URL to run; skipped otherwise. Ingest writes a Stream
// as batched UNWIND queries; these tests check what lands in the graph, the progress, the
// retry rule (only errors that say the batch never ran) and the failure that names the batch.
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import { Backpressure, FalkorError, Runtime } from "../src/FalkorError.ts"
import type { Graph } from "../src/Graph.ts"
import * as Ingest from "../src/Ingest.ts"
import type { LoadError } from "../src/LoadError.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-ingest:${name}:${process.pid}`

const count = (graph: Graph, cypher: string) => Effect.map(graph.roQuery(cypher), (r) => Number(r.rows[0]!.get("n")))

const people = (n: number) => Stream.range(0, n - 1).pipe(Stream.map((i) => ({ id: i, name: `p${i}` })))

describe.skipIf(!url)("Ingest against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("merges 2500 records in batches of 1000 with progress, summary and metrics", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("merge"))
        const query = yield* Ingest.mergeNodes("Person", "id")
        const seen: Array<Ingest.Progress> = []
        const before = (yield* Metric.value(Ingest.recordsCounter)).count
        const summary = yield* Ingest.run(graph, people(2500), {
          query,
          batchSize: 1000,
          concurrency: 2,
          onProgress: (p) => Effect.sync(() => void seen.push(p))
        })
        assert.strictEqual(summary.records, 2500)
        assert.strictEqual(summary.batches, 3)
        assert.strictEqual(summary.nodesCreated, 2500)
        assert.strictEqual(summary.retries, 0)
        // Progress only grows (with 2 in flight a later batch may complete first), and ends at
        // the whole stream.
        for (let i = 1; i < seen.length; i++) {
          assert.isTrue(seen[i]!.records >= seen[i - 1]!.records && seen[i]!.batches >= seen[i - 1]!.batches)
        }
        assert.strictEqual(seen[2]!.batches, 3)
        assert.strictEqual(seen.length, 3)
        assert.strictEqual(seen[2]!.records, 2500)
        assert.isTrue(seen[2]!.rate > 0 && Duration.toMillis(seen[2]!.elapsed) >= 0)
        assert.strictEqual((yield* Metric.value(Ingest.recordsCounter)).count - before, 2500)
        assert.strictEqual(yield* count(graph, "MATCH (p:Person) RETURN count(p) AS n"), 2500)
        const p1234 = yield* graph.roQuery("MATCH (p:Person {id: 1234}) RETURN p.name AS name")
        assert.strictEqual(p1234.rows[0]!.get("name"), "p1234")
        // MERGE is idempotent: running the same ingest again creates nothing new.
        const again = yield* Ingest.run(graph, people(2500), { query, batchSize: 700 })
        assert.strictEqual(again.nodesCreated, 0)
        assert.strictEqual(again.batches, 4)
        assert.strictEqual(yield* count(graph, "MATCH (p:Person) RETURN count(p) AS n"), 2500)
        yield* graph.delete()
      })
    )
  )

  it.live("relationships between ingested nodes; per-batch results in stream order", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("rels"))
        yield* Ingest.run(graph, people(300), { query: yield* Ingest.createNodes("Person"), batchSize: 128 })
        const knows = Stream.range(0, 298).pipe(
          Stream.map((i) => ({ from: i, to: i + 1, properties: { since: 2000 + i } }))
        )
        const query = yield* Ingest.createRelationships({
          type: "KNOWS",
          from: { label: "Person", key: "id" },
          to: { label: "Person", key: "id" }
        })
        const results = yield* Stream.runCollect(Ingest.stream(graph, knows, { query, batchSize: 100, concurrency: 3 }))
        assert.deepStrictEqual(
          results.map((r) => [r.batch, r.firstIndex, r.size, r.statistics.relationshipsCreated]),
          [
            [0, 0, 100, 100],
            [1, 100, 100, 100],
            [2, 200, 99, 99]
          ]
        )
        const edge = yield* graph.roQuery("MATCH (:Person {id: 41})-[k:KNOWS]->(b) RETURN k.since AS since, b.id AS to")
        assert.deepStrictEqual(edge.rows[0]!.toObject(), { since: 2041, to: 42 })
        yield* graph.delete()
      })
    )
  )

  it.live("relationships look their endpoints up by index once it is operational, not before", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("plan"))
        yield* Ingest.run(graph, people(50), { query: yield* Ingest.createNodes("Person") })
        const query = yield* Ingest.createRelationships({
          type: "KNOWS",
          from: { label: "Person", key: "id" },
          to: { label: "Person", key: "id" }
        })
        const operations = (plan: { readonly lines: ReadonlyArray<string> }) => plan.lines.join("\n")
        const rows = [{ from: 1, to: 2 }]
        // Without an index each row scans the label (the slow path the docs warn about).
        const before = operations(yield* graph.explain(query, { rows }))
        assert.notInclude(before, "Node By Index Scan")
        assert.include(before, "Node By Label Scan")
        yield* graph.indexes.createRange({ label: "Person", properties: ["id"] })
        yield* graph.indexes.awaitOperational({ label: "Person", timeout: "30 seconds" })
        const after = operations(yield* graph.explain(query, { rows }))
        assert.include(after, "Node By Index Scan")
        yield* graph.delete()
      })
    )
  )

  it.live("Ingest.sink writes a stream run into it and passes the stream's own failure through", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("sink"))
        const query = yield* Ingest.createNodes("Person")
        const summary = yield* Stream.run(people(250), Ingest.sink(graph, { query, batchSize: 100 }))
        assert.strictEqual(summary.records, 250)
        assert.strictEqual(summary.batches, 3)
        assert.strictEqual(summary.nodesCreated, 250)
        assert.strictEqual(yield* count(graph, "MATCH (p:Person) RETURN count(p) AS n"), 250)
        // The upstream fails after 150 records: the run fails with that error, not a LoadError.
        const failing = Stream.concat(people(150), Stream.fail("source broke" as const))
        const error = yield* Effect.flip(Stream.run(failing, Ingest.sink(graph, { query, batchSize: 100 })))
        assert.strictEqual(error, "source broke")
        yield* graph.delete()
      })
    )
  )

  it.live("a batch that fails at run time stops the stream, naming its first and last record", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("fail"))
        const records = Stream.range(0, 2999).pipe(Stream.map((i) => ({ i, d: i === 1500 ? 0 : 1 })))
        const error = yield* Effect.flip(
          Ingest.run(graph, records, {
            query: "UNWIND $rows AS r CREATE (:N {i: r.i, v: 10 / r.d})",
            batchSize: 1000,
            concurrency: 1
          })
        )
        assert.strictEqual(error._tag, "LoadError")
        const reason = (error as LoadError).reason
        assert.strictEqual(reason._tag, "BatchFailed")
        if (reason._tag !== "BatchFailed") return
        assert.strictEqual(reason.batch, 1)
        assert.strictEqual(reason.firstIndex, 1000)
        assert.strictEqual(reason.lastIndex, 1999)
        assert.deepStrictEqual(reason.first, { i: 1000, d: 1 })
        assert.deepStrictEqual(reason.last, { i: 1999, d: 1 })
        assert.strictEqual(reason.committedRecords, 1000)
        assert.strictEqual(reason.cause.reason._tag, "Runtime")
        assert.include(reason.message, "records 1000–1999")
        // The failed batch ran as one query: nothing of it was created, batch 0 was, batch 2 never ran.
        assert.strictEqual(yield* count(graph, "MATCH (n:N) RETURN count(n) AS n"), 1000)
        yield* graph.delete()
      })
    )
  )

  it.live("retries a batch only while its error says it never ran", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = yield* fresh(db, graphName("retry"))
        // The real graph behind a target whose first two calls are refused before running
        // (the server's queue-full line), as a busy server would.
        let calls = 0
        const busy: Ingest.Target = {
          name: graph.name,
          query: (query, parameters) => {
            calls++
            if (calls <= 2) {
              return Effect.fail(
                new FalkorError({
                  reason: new Backpressure({
                    serverMessage: "Max pending queries exceeded",
                    graph: graph.name,
                    command: "GRAPH.QUERY"
                  })
                })
              )
            }
            return graph.query(query, parameters)
          }
        }
        const summary = yield* Ingest.run(busy, people(10), {
          query: yield* Ingest.createNodes("P"),
          retry: { times: 3, baseDelay: "1 millis" }
        })
        assert.strictEqual(calls, 3)
        assert.strictEqual(summary.retries, 2)
        assert.strictEqual(yield* count(graph, "MATCH (n:P) RETURN count(n) AS n"), 10)

        // An error that may have run is never retried.
        let runtimeCalls = 0
        const failing: Ingest.Target = {
          name: graph.name,
          query: () => {
            runtimeCalls++
            return Effect.fail(
              new FalkorError({
                reason: new Runtime({ serverMessage: "boom", graph: graph.name, command: "GRAPH.QUERY" })
              })
            )
          }
        }
        const error = yield* Effect.flip(
          Ingest.run(failing, people(10), {
            query: "UNWIND $rows AS r CREATE ()",
            retry: { times: 3, baseDelay: "1 millis" }
          })
        )
        assert.strictEqual(runtimeCalls, 1)
        assert.strictEqual(error.reason._tag, "BatchFailed")
        yield* graph.delete()
      })
    )
  )
})

describe("Ingest options", () => {
  const target: Ingest.Target = { name: "g", query: () => Effect.die("never called") }
  it.effect("refuses a batch size that is not a positive integer, and a query without $rows", () =>
    Effect.gen(function* () {
      const zero = yield* Effect.flip(
        Ingest.run(target, people(3), { query: "UNWIND $rows AS r CREATE ()", batchSize: 0 })
      )
      assert.strictEqual(zero.reason._tag, "InvalidSource")
      assert.include(zero.message, "batchSize")
      const noRows = yield* Effect.flip(Ingest.run(target, people(3), { query: "CREATE ()" }))
      assert.include(noRows.message, "$rows")
    })
  )
  it.effect("an empty stream sends nothing", () =>
    Effect.gen(function* () {
      const summary = yield* Ingest.run(target, Stream.empty, { query: "UNWIND $rows AS r CREATE ()" })
      assert.strictEqual(summary.records, 0)
      assert.strictEqual(summary.batches, 0)
    })
  )
  it.effect("helpers quote labels and keys", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Ingest.createNodes("A:B c"), "UNWIND $rows AS r CREATE (n:A:`B c`) SET n = r")
      assert.strictEqual(
        yield* Ingest.mergeNodes("Person", "user id"),
        'UNWIND $rows AS r MERGE (n:Person {`user id`: r["user id"]}) SET n += r'
      )
      const bad = yield* Effect.flip(Ingest.createNodes("a`b"))
      assert.strictEqual(bad.reason._tag, "InvalidIdentifier")
    })
  )
})
