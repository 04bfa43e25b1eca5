// Against a real FalkorDB: set FALKORDB_URL to run (the test setup starts one); skipped
// otherwise. GRAPH.BULK loads from CSV, JSONL and Streams: what lands in the graph (types,
// ids, relationships across many commands), and every bad input's typed error.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as BulkLoader from "../src/BulkLoader.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import * as IngestFiles from "../src/IngestFiles.ts"
import type { LoadError } from "../src/LoadError.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-bulk:${name}:${process.pid}`

/** Files in a fresh temporary folder, removed when the test's scope closes. */
const files = (contents: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-bulk-"))
      for (const [name, text] of Object.entries(contents)) Fs.writeFileSync(Path.join(dir, name), text)
      return (name: string) => Path.join(dir, name)
    }),
    (path) => Effect.sync(() => Fs.rmSync(Path.dirname(path("x")), { recursive: true, force: true }))
  )

const rows = (
  graph: { roQuery: (q: string) => Effect.Effect<{ rows: ReadonlyArray<{ toObject(): object }> }, unknown> },
  q: string
) => Effect.map(graph.roQuery(q), (r) => r.rows.map((row) => row.toObject()))

const reasonOf = (error: LoadError) => error.reason

describe.skipIf(!url)("BulkLoader against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("CSV nodes and relationships: inferred and declared types, keys, empty cells, quotes", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("csv"))
          const path = yield* files({
            "Person.csv":
              'id,name,age,score,active,tags,zip\n1,Ann,31,1.5,true,"[""a"",2]",01234\n2,Bob,,2,false,[],\n3,"Cy, Jr",40,3.25,TRUE,x,9\n',
            "KNOWS.csv": "src,dst,since\n1,2,2001\n2,3,2002\n3,1,\n"
          })
          const summary = yield* BulkLoader.load(db.connection, graph.name, {
            nodes: [{ input: BulkLoader.csv(path("Person.csv")), types: { zip: "string" } }],
            relationships: [{ input: BulkLoader.csv(path("KNOWS.csv")) }]
          })
          assert.deepStrictEqual(summary, { graph: graph.name, nodes: 3, relationships: 3, commands: 1 })
          const people = yield* rows(
            graph,
            "MATCH (p:Person) RETURN p.id AS id, p.name AS name, p.age AS age, p.score AS score, p.active AS active, p.tags AS tags, p.zip AS zip ORDER BY id"
          )
          assert.deepStrictEqual(people, [
            { id: 1, name: "Ann", age: 31, score: 1.5, active: true, tags: ["a", 2], zip: "01234" },
            { id: 2, name: "Bob", age: null, score: 2, active: false, tags: [], zip: null },
            { id: 3, name: "Cy, Jr", age: 40, score: 3.25, active: true, tags: "x", zip: "9" }
          ])
          const knows = yield* rows(
            graph,
            "MATCH (a)-[k:KNOWS]->(b) RETURN a.id AS a, b.id AS b, k.since AS since ORDER BY a"
          )
          assert.deepStrictEqual(knows, [
            { a: 1, b: 2, since: 2001 },
            { a: 2, b: 3, since: 2002 },
            { a: 3, b: 1, since: null }
          ])
          yield* graph.delete()
        })
      )
    )
  )

  it.live("2000 nodes and 1999 relationships over many small commands land intact", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("chunks"))
          const lines = ["id,name"]
          for (let i = 0; i < 2000; i++) lines.push(`n${i},name ${i}`)
          const edges = ["from,to,w"]
          for (let i = 0; i < 1999; i++) edges.push(`n${i},n${i + 1},${i / 2}`)
          const path = yield* files({ "nodes.csv": `${lines.join("\n")}\n`, "edges.csv": `${edges.join("\n")}\n` })
          const progress: Array<BulkLoader.Progress> = []
          const summary = yield* BulkLoader.load(db.connection, graph.name, {
            nodes: [{ label: "N", input: BulkLoader.csv(path("nodes.csv")) }],
            relationships: [{ type: "NEXT", input: BulkLoader.csv(path("edges.csv")) }],
            maxBufferSize: 4096,
            maxTokenSize: 1024,
            onProgress: (p) => Effect.sync(() => void progress.push(p))
          })
          assert.strictEqual(summary.nodes, 2000)
          assert.strictEqual(summary.relationships, 1999)
          assert.isTrue(summary.commands > 10, `commands: ${summary.commands}`)
          const last = progress[progress.length - 1]!
          assert.strictEqual(last.commands, summary.commands)
          assert.strictEqual(last.bytesRead, last.bytesTotal)
          const [counts] = yield* rows(
            graph,
            "MATCH (n:N) WITH count(n) AS nodes MATCH ()-[e:NEXT]->() RETURN nodes, count(e) AS edges"
          )
          assert.deepStrictEqual(counts, { nodes: 2000, edges: 1999 })
          // Every relationship joins the nodes its row named, across command boundaries.
          const [wrong] = yield* rows(
            graph,
            "MATCH (a:N)-[e:NEXT]->(b:N) WHERE toInteger(substring(b.id, 1)) <> toInteger(substring(a.id, 1)) + 1 OR e.w <> toInteger(substring(a.id, 1)) / 2.0 RETURN count(e) AS n"
          )
          assert.deepStrictEqual(wrong, { n: 0 })
          yield* graph.delete()
        })
      )
    )
  )

  it.live("JSONL and Streams of records; several labels; id spaces", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("jsonl"))
          const path = yield* files({
            "people.jsonl":
              '{"_key": 1, "name": "Ann", "tags": ["x"], "rank": null}\n\n{"_key": 2, "name": "Bob", "rank": 2.5}\n'
          })
          const companies = Stream.make({ _key: 1, name: "Acme", founded: 1999.5 })
          const summary = yield* BulkLoader.load(db.connection, graph.name, {
            nodes: [
              { label: "Person:Employee", input: BulkLoader.jsonl(path("people.jsonl")), idSpace: "person" },
              { label: "Company", input: BulkLoader.records("companies", companies), idSpace: "company" }
            ],
            relationships: [
              {
                type: "WORKS_AT",
                input: BulkLoader.records("works", Stream.make({ p: 2, c: 1, role: "eng" })),
                from: "p",
                to: "c",
                fromSpace: "person",
                toSpace: "company"
              }
            ]
          })
          assert.strictEqual(summary.nodes, 3)
          const result = yield* rows(
            graph,
            "MATCH (p:Person:Employee)-[w:WORKS_AT]->(c:Company) RETURN p.name AS p, w.role AS role, c.name AS c, c.founded AS founded, p._key AS key"
          )
          assert.deepStrictEqual(result, [{ p: "Bob", role: "eng", c: "Acme", founded: 1999.5, key: null }])
          const [ann] = yield* rows(graph, "MATCH (p:Person {name: 'Ann'}) RETURN p.tags AS tags")
          assert.deepStrictEqual(ann, { tags: ["x"] })
          yield* graph.delete()
        })
      )
    )
  )

  it.live("bad input: each a typed error with the place, and no graph left behind", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const name = graphName("bad")
          yield* fresh(db, name)
          const path = yield* files({
            "ragged.csv": "id,name\n1,a\n2,b,extra\n",
            "quote.csv": 'id,name\n1,a\n2,"unterminated\n',
            "type.csv": "id,age\n1,31\n2,thirty\n",
            "dup.csv": "id\n1\n2\n1\n",
            "nodes.csv": "id\n1\n2\n",
            "rels.csv": "a,b\n1,2\n2,9\n",
            "bad.jsonl": '{"id": 1}\n{"id": 2, "oops"\n'
          })
          const load = (nodes: BulkLoader.Options["nodes"], relationships?: BulkLoader.Options["relationships"]) =>
            Effect.flip(BulkLoader.load(db.connection, name, { nodes, relationships }))

          const ragged = reasonOf(yield* load([{ input: BulkLoader.csv(path("ragged.csv")) }]))
          assert.strictEqual(ragged._tag, "MalformedRow")
          assert.include(ragged.message, "ragged.csv:3")
          assert.include(ragged.message, "expected 2 columns")

          const quote = reasonOf(yield* load([{ input: BulkLoader.csv(path("quote.csv")) }]))
          assert.strictEqual(quote._tag, "MalformedRow")
          assert.include(quote.message, "quote.csv")
          assert.include(quote.message, "CSV_QUOTE_NOT_CLOSED")

          const type = reasonOf(yield* load([{ input: BulkLoader.csv(path("type.csv")), types: { age: "integer" } }]))
          assert.strictEqual(type._tag, "MalformedRow")
          assert.include(type.message, 'type.csv:3, column "age"')
          assert.include(type.message, '"thirty" is not an integer')

          const dup = reasonOf(yield* load([{ input: BulkLoader.csv(path("dup.csv")) }]))
          assert.strictEqual(dup._tag, "DuplicateKey")
          assert.include(dup.message, "dup.csv:4")

          const endpoint = reasonOf(
            yield* load([{ input: BulkLoader.csv(path("nodes.csv")) }], [{ input: BulkLoader.csv(path("rels.csv")) }])
          )
          assert.strictEqual(endpoint._tag, "UnknownEndpoint")
          assert.include(endpoint.message, "rels.csv:3")
          assert.include(endpoint.message, '"9"')

          const json = reasonOf(yield* load([{ input: BulkLoader.jsonl(path("bad.jsonl")) }]))
          assert.strictEqual(json._tag, "MalformedRow")
          assert.include(json.message, "bad.jsonl:2")

          const missing = reasonOf(yield* load([{ input: BulkLoader.csv(path("none.csv")) }]))
          assert.strictEqual(missing._tag, "InvalidSource")
          assert.include(missing.message, "none.csv")

          // Every failure above was found before a command was sent: no graph exists.
          const graphs = yield* db.list()
          assert.isFalse(graphs.includes(name))
        })
      )
    )
  )

  it.live("a bad row after the server confirmed commands: Interrupted, naming the row and what is in the graph", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("partial"))
          const lines = ["id,name"]
          for (let i = 0; i < 2000; i++) lines.push(i === 1900 ? `${i}` : `${i},name ${i}`)
          const path = yield* files({ "late.csv": `${lines.join("\n")}\n` })
          const error = yield* Effect.flip(
            BulkLoader.load(db.connection, graph.name, {
              nodes: [{ label: "N", input: BulkLoader.csv(path("late.csv")) }],
              maxBufferSize: 4096
            })
          )
          const reason = error.reason
          assert.strictEqual(reason._tag, "Interrupted")
          if (reason._tag !== "Interrupted") return
          assert.strictEqual(reason.cause._tag, "MalformedRow")
          assert.include(reason.message, "late.csv:1902")
          assert.include(reason.hint, "partial load")
          assert.isTrue(reason.committed.commands > 0)
          // What the error says is committed is what the graph holds.
          const [held] = yield* rows(graph, "MATCH (n:N) RETURN count(n) AS n")
          assert.deepStrictEqual(held, { n: reason.committed.nodes })
          assert.isTrue(reason.committed.nodes > 0 && reason.committed.nodes < 1900)
          yield* graph.delete()
        })
      )
    )
  )

  it.live("a graph that exists is refused before anything is read, and left as it was", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("exists"))
          yield* graph.query("CREATE (:Old)")
          const error = yield* Effect.flip(
            BulkLoader.load(db.connection, graph.name, { nodes: [{ input: BulkLoader.csv("/nonexistent/file.csv") }] })
          )
          assert.strictEqual(error.reason._tag, "GraphExists")
          assert.include(error.hint, "Ingest")
          const [old] = yield* rows(graph, "MATCH (n) RETURN count(n) AS n")
          assert.deepStrictEqual(old, { n: 1 })
          yield* graph.delete()
        })
      )
    )
  )

  it.live("a user whose ACL refuses GRAPH.BULK is told so and offered ingest", () =>
    Effect.gen(function* () {
      const user = `bulkless${process.pid}`
      const acl = (...args: Array<string>) =>
        run(FalkorDB.FalkorDB.use((db) => db.connection.execute(["ACL", ...args])))
      yield* Effect.acquireRelease(acl("SETUSER", user, "on", ">pw", "~*", "&*", "+@all", "-graph.bulk"), () =>
        Effect.ignore(acl("DELUSER", user))
      )
      const target = new URL(url!)
      target.username = user
      target.password = "pw"
      const error = yield* run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          return yield* Effect.flip(
            BulkLoader.load(db.connection, graphName("acl"), {
              nodes: [{ label: "N", input: BulkLoader.records("n", Stream.make({ id: 1 })) }]
            })
          )
        }),
        { url: target.toString() }
      )
      assert.strictEqual(error.reason._tag, "BulkUnsupported")
      assert.include(error.message, "refused GRAPH.BULK")
      assert.include(error.hint, "IngestFiles.load")
      assert.include(error.hint, "effect-falkordb load --ingest")
      // The way the hint names works for that user: the same input through Cypher.
      const loaded = yield* run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const summary = yield* IngestFiles.load(db, graphName("acl"), {
            nodes: [{ label: "N", input: BulkLoader.records("n", Stream.make({ id: 1 })) }]
          })
          yield* db.graph(graphName("acl")).delete()
          return summary
        }),
        { url: target.toString() }
      )
      assert.deepStrictEqual([loaded.nodes, loaded.relationships], [1, 0])
    })
  )
})

describe.skipIf(!url)("BulkLoader when the server dies mid-load", () => {
  it.live(
    "fails with Interrupted, saying what the server confirmed and how to resume",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make({ requireModule: true })
        const pid = yield* server.pid
        const records = Stream.range(0, 5000).pipe(
          Stream.tap((i) =>
            i === 3000
              ? Effect.andThen(
                  Effect.sync(() => process.kill(pid!, "SIGKILL")),
                  Effect.sleep("200 millis")
                )
              : Effect.void
          ),
          Stream.map((i) => ({ id: i, payload: "x".repeat(50) }))
        )
        const error = yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          return yield* Effect.flip(
            BulkLoader.load(db.connection, "dies", {
              nodes: [{ label: "N", input: BulkLoader.records("n", records) }],
              maxBufferSize: 16 * 1024
            })
          )
        }).pipe(
          Effect.provide(Layer.fresh(FalkorDB.layer({ url: server.url, connections: 1, offlineQueue: "failFast" })))
        )
        assert.strictEqual(error.reason._tag, "Interrupted")
        if (error.reason._tag !== "Interrupted") return
        assert.isTrue(error.reason.committed.commands > 0 && error.reason.committed.nodes > 0)
        assert.isTrue(error.reason.committed.nodes < 3000)
        assert.include(error.message, "confirmed commands")
        assert.include(error.hint, "delete it")
      }),
    60_000
  )
})
