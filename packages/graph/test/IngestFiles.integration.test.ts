// Against a real FalkorDB: set FALKORDB_URL to run (the test setup starts one); skipped
// otherwise. IngestFiles loads BulkLoader's inputs through batched Cypher: the same files
// loaded both ways must give the same graph (labels, properties and their types,
// relationships and their endpoints), every bad input its typed error, and a node deleted by
// another client mid-load makes the load fail (EndpointsGone), never lose a relationship silently.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as BulkLoader from "../src/BulkLoader.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { Graph } from "../src/Graph.ts"
import * as IngestFiles from "../src/IngestFiles.ts"
import type { LoadError } from "../src/LoadError.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-ingest-files:${name}:${process.pid}`

/** Files in a fresh temporary folder, removed when the test's scope closes. */
const files = (contents: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-ingest-files-"))
      for (const [name, text] of Object.entries(contents)) Fs.writeFileSync(Path.join(dir, name), text)
      return (name: string) => Path.join(dir, name)
    }),
    (path) => Effect.sync(() => Fs.rmSync(Path.dirname(path("x")), { recursive: true, force: true }))
  )

// Properties as [name, type, value] and, for lists, [name, element types]: integer 2 and
// double 2.0 differ. (A filter, not CASE: FalkorDB evaluates every branch of a CASE.)
const props = (v: string) =>
  `[k IN keys(${v}) | [k, typeOf(${v}[k]), ${v}[k]]] + [k IN keys(${v}) WHERE typeOf(${v}[k]) = 'List' | [k, [x IN ${v}[k] | typeOf(x)]]]`

/**
 * The whole graph as sorted text: every node (labels, typed properties) and every relationship
 * (type, typed properties, both endpoints as their node's text), independent of internal ids.
 */
const dump = (graph: Graph) =>
  Effect.gen(function* () {
    const nodeText = (labels: unknown, properties: unknown) => {
      const sorted = (properties as Array<Array<unknown>>).map((p) => JSON.stringify(p)).sort()
      return JSON.stringify([[...(labels as Array<string>)].sort(), sorted])
    }
    const nodes = yield* graph.roQuery(`MATCH (n) RETURN labels(n) AS l, ${props("n")} AS p`)
    const relationships = yield* graph.roQuery(
      `MATCH (a)-[e]->(b) RETURN type(e) AS t, ${props("e")} AS p, labels(a) AS al, ${props("a")} AS ap, labels(b) AS bl, ${props("b")} AS bp`
    )
    return {
      nodes: nodes.rows.map((r) => nodeText(r.get("l"), r.get("p"))).sort(),
      relationships: relationships.rows
        .map((r) =>
          JSON.stringify([
            r.get("t"),
            JSON.parse(nodeText([], r.get("p")))[1],
            nodeText(r.get("al"), r.get("ap")),
            nodeText(r.get("bl"), r.get("bp"))
          ])
        )
        .sort()
    }
  })

const reasonOf = (error: LoadError) => error.reason

describe.skipIf(!url)("IngestFiles against a real FalkorDB (FALKORDB_URL)", () => {
  it.live("the same files loaded through GRAPH.BULK and through Ingest give the same graph", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const bulk = yield* fresh(db, graphName("same-bulk"))
          const ingest = yield* fresh(db, graphName("same-ingest"))
          const path = yield* files({
            // Inferred integers, doubles (whole-number ones too: 3.0, 1e3, -0.0), booleans, arrays,
            // strings, empty cells; a declared string and a declared double given "4".
            "Person.csv":
              'id,name,age,score,active,tags,zip,weight\n1,Ann,31,1.5,true,"[""a"",2,2.5]",01234,4\n2,Bob,,3.0,false,[],,70.5\n3,"Cy, Jr",40,1e3,TRUE,x,9,\n4,Di,-7,-0.0,no,"[[1,2],[3.5]]",10,0\n',
            // A key column whose name starts with "_": not stored; several labels.
            "Staff.csv": "_sid,role,since\ns1,boss,2001\ns2,clerk,2.0\n",
            // JSONL: numbers by their JavaScript type (3 an integer, 3.5 a double, -0 an integer).
            "City.jsonl":
              '{"cid":"c1","pop":3,"area":3.5,"neg":-0,"list":[1,2.5,[3]],"flag":true,"none":null}\n{"cid":"c2","pop":12345678901,"area":1e21,"neg":-1,"list":[],"flag":false,"none":"x"}\n',
            "KNOWS.csv": "src,dst,since,weight\n1,2,2001,1.0\n2,3,2002,0.5\n3,1,,\n4,4,2004,[1.0]\n",
            "WORKS.csv": "person,staff,hours\n1,s1,40\n2,s2,12.0\n",
            "LIVES.jsonl": '{"p":3,"c":"c1","years":2}\n{"p":"4","c":"c2","years":2.25}\n'
          })
          const options = {
            nodes: [
              { input: BulkLoader.csv(path("Person.csv")), types: { zip: "string", weight: "double" } } as const,
              { label: "Staff:Employee", input: BulkLoader.csv(path("Staff.csv")), idSpace: "staff" },
              { input: BulkLoader.jsonl(path("City.jsonl")) }
            ],
            relationships: [
              { input: BulkLoader.csv(path("KNOWS.csv")) },
              { input: BulkLoader.csv(path("WORKS.csv")), toSpace: "staff" },
              { input: BulkLoader.jsonl(path("LIVES.jsonl")) }
            ]
          }
          const bulkSummary = yield* BulkLoader.load(db.connection, bulk.name, options)
          // Batches of 2: several queries per input, ids paired back across batches.
          const progress: Array<number> = []
          const ingestSummary = yield* IngestFiles.load(db, ingest.name, {
            ...options,
            batchSize: 2,
            onProgress: (p) => Effect.sync(() => progress.push(p.commands))
          })
          assert.strictEqual(ingestSummary.nodes, bulkSummary.nodes)
          assert.strictEqual(ingestSummary.relationships, bulkSummary.relationships)
          assert.deepStrictEqual([ingestSummary.nodes, ingestSummary.relationships], [8, 8])
          assert.strictEqual(ingestSummary.commands, 2 + 1 + 1 + 2 + 1 + 1)
          assert.strictEqual(progress[progress.length - 1], ingestSummary.commands)

          const expected = yield* dump(bulk)
          const actual = yield* dump(ingest)
          assert.strictEqual(actual.nodes.length, 8)
          assert.strictEqual(actual.relationships.length, 8)
          assert.deepStrictEqual(actual, expected)
          // The types the comparison relies on, spelled out for a few.
          const typed = yield* ingest.roQuery(
            "MATCH (p:Person {id: 2}) MATCH (c:City {cid: 'c1'}) MATCH (:Staff)-[w]-(:Person {id: 2}) RETURN typeOf(p.score) AS score, typeOf(c.pop) AS pop, typeOf(c.neg) AS neg, typeOf(p.weight) AS weight, typeOf(w.hours) AS hours"
          )
          assert.deepStrictEqual(typed.rows[0]!.toObject(), {
            score: "Float",
            pop: "Integer",
            neg: "Integer",
            weight: "Float",
            hours: "Float"
          })
          yield* bulk.delete()
          yield* ingest.delete()
        })
      )
    )
  )

  it.live("typed errors: graph exists, missing file, malformed row, duplicate key, unknown endpoint", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("errors"))
          const path = yield* files({
            "P.csv": "id,name\n1,a\n2,b\n",
            "Bad.csv": "id,name\n1,a\n2,b,extra\n",
            "Dup.csv": "id\n1\n1\n",
            "R.csv": "a,b\n1,2\n2,9\n"
          })
          const failure = (options: IngestFiles.Options, name = graph.name) =>
            Effect.flip(IngestFiles.load(db, name, options)).pipe(Effect.map(reasonOf))

          const missing = yield* failure({ nodes: [{ input: BulkLoader.csv(path("nope.csv")) }] })
          assert.strictEqual(missing._tag, "InvalidSource")

          // The rows before the bad one may have gone in a batch already (then Interrupted says so).
          const malformedLoad = yield* failure(
            { nodes: [{ input: BulkLoader.csv(path("Bad.csv")) }] },
            graphName("malformed")
          )
          const malformed = malformedLoad._tag === "Interrupted" ? malformedLoad.cause : malformedLoad
          assert.strictEqual(malformed._tag, "MalformedRow")
          assert.strictEqual(malformed._tag === "MalformedRow" && malformed.line, 3)
          yield* fresh(db, graphName("malformed"))

          const duplicate = yield* failure({ nodes: [{ input: BulkLoader.csv(path("Dup.csv")) }] })
          assert.strictEqual(duplicate._tag, "DuplicateKey")

          // The nodes were confirmed before the bad relationship row: a partial graph, said so.
          const unknown = yield* failure({
            nodes: [{ input: BulkLoader.csv(path("P.csv")) }],
            relationships: [{ input: BulkLoader.csv(path("R.csv")) }]
          })
          assert.strictEqual(unknown._tag, "Interrupted")
          if (unknown._tag !== "Interrupted") return
          assert.strictEqual(unknown.cause._tag, "UnknownEndpoint")
          assert.strictEqual(unknown.cause._tag === "UnknownEndpoint" && unknown.cause.key, "9")
          assert.strictEqual(unknown.committed.nodes, 2)

          // The graph now exists: refused, unless asked to add.
          const exists = yield* failure({ nodes: [{ input: BulkLoader.csv(path("P.csv")) }] })
          assert.strictEqual(exists._tag, "GraphExists")
          const added = yield* IngestFiles.load(db, graph.name, {
            nodes: [{ input: BulkLoader.csv(path("P.csv")) }],
            existing: "add"
          })
          assert.strictEqual(added.nodes, 2)
          const count = yield* graph.roQuery("MATCH (n) RETURN count(n) AS n")
          assert.strictEqual(count.rows[0]!.get("n"), 4)
          yield* graph.delete()
        })
      )
    )
  )

  it.live("inputs without rows still make the graph, empty, as GRAPH.BULK does", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("empty"))
          const path = yield* files({ "P.csv": "id,name\n", "R.csv": "a,b\n" })
          const summary = yield* IngestFiles.load(db, graph.name, {
            nodes: [{ input: BulkLoader.csv(path("P.csv")) }],
            relationships: [{ input: BulkLoader.csv(path("R.csv")) }]
          })
          assert.deepStrictEqual(summary, { graph: graph.name, nodes: 0, relationships: 0, commands: 0 })
          assert.include(yield* db.list(), graph.name)
          const count = yield* graph.roQuery("MATCH (n) RETURN count(n) AS n")
          assert.strictEqual(count.rows[0]!.get("n"), 0)
          yield* graph.delete()
        })
      )
    )
  )

  it.live("a node deleted by another client during the load: its relationships are not lost silently", () =>
    run(
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const graph = yield* fresh(db, graphName("gone"))
          const path = yield* files({ "P.csv": "id,name\n1,a\n2,b\n3,c\n", "R.csv": "a,b\n1,2\n2,3\n" })
          let deleted = false
          const failed = yield* Effect.flip(
            IngestFiles.load(db, graph.name, {
              nodes: [{ input: BulkLoader.csv(path("P.csv")) }],
              relationships: [{ input: BulkLoader.csv(path("R.csv")) }],
              // Once the relationship rows are being read (the nodes are confirmed), node c goes.
              onProgress: (p) =>
                p.rowsRead > 3 && !deleted
                  ? Effect.asVoid(
                      Effect.andThen(
                        Effect.sync(() => {
                          deleted = true
                        }),
                        graph.query("MATCH (n {name: 'c'}) DELETE n")
                      )
                    ).pipe(Effect.orDie)
                  : Effect.void
            })
          ).pipe(Effect.map(reasonOf))
          assert.isTrue(deleted)
          assert.strictEqual(failed._tag, "Interrupted")
          if (failed._tag !== "Interrupted") return
          assert.strictEqual(failed.cause._tag, "EndpointsGone")
          assert.deepInclude(failed.cause, { rows: 2, created: 1 })
          assert.match(failed.message, /1 of the 2 relationships of .*R\.csv were not created/)
          const left = yield* graph.roQuery("MATCH ()-[r]->() RETURN count(r) AS n")
          assert.strictEqual(left.rows[0]!.get("n"), 1)
          yield* graph.delete()
        })
      )
    )
  )
})
