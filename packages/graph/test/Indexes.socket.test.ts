// Index helpers end to end over real sockets against the FalkorDB 4.18.11 recordings
// `index-lifecycle`, `vector-search` and `indexes` (see ./replay.ts for how requests whose
// text differs from the recorded one are listed).
import { assert, describe, it } from "@effect/vitest"
import { serverMessageOf } from "./helpers.ts"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Indexes from "../src/Indexes.ts"
import { type Command, withReplay } from "./support/replay.ts"

const q = (g: string, text: string): Command => ["GRAPH.QUERY", g, text, "--compact"]
const ro = (g: string, text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]

describe("Indexes over recorded replies (index-lifecycle)", () => {
  const g = "index-lifecycle"
  const yieldSubset = ro(
    g,
    "CALL db.indexes() YIELD label, properties, types, status RETURN label, properties, types, status"
  )

  it.live("creates a range index, lists it while it builds, and gives up waiting with the last status", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const indexes = db.graph(g).indexes
            const created = yield* indexes.createRange({ label: "Doc", properties: ["n"] })
            const listed = yield* indexes.list()
            const waited = yield* Effect.flip(
              indexes.awaitOperational({
                label: "Doc",
                property: "n",
                schedule: Schedule.spaced("5 millis"),
                timeout: "200 millis"
              })
            )
            return { created, listed, waited }
          }),
        { translations: [[ro(g, "CALL db.indexes()"), yieldSubset, 1000]] }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.sent[0], q(g, "CREATE INDEX FOR (d:Doc) ON (d.n)"))
      assert.strictEqual(run.value.created.indicesCreated, 1)
      const [doc] = run.value.listed
      assert.strictEqual(run.value.listed.length, 1)
      assert.strictEqual(doc!.label, "Doc")
      assert.deepStrictEqual(doc!.properties, ["n"])
      assert.deepStrictEqual(doc!.types, { n: ["RANGE"] })
      assert.deepStrictEqual(doc!.status, { _tag: "UnderConstruction", indexed: 0, total: 20000 })
      assert.strictEqual(doc!.entityType, "NODE")
      // Polled until the deadline; the error shows the last status the server sent.
      assert.strictEqual(run.value.waited.reason._tag, "WaitTimeout")
      assert.include(run.value.waited.message, "(:Doc) (n): [Indexing] 3379/20000: UNDER CONSTRUCTION")
      assert.isAbove(run.sent.length, 3)
    })
  )

  it.live("a finite schedule that runs out gives up the same way", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.flip(
            Indexes.make(db.graph(g)).awaitOperational({
              label: "Doc",
              schedule: Schedule.recurs(1),
              timeout: "10 seconds"
            })
          ),
        { translations: [[ro(g, "CALL db.indexes()"), yieldSubset, 2]] }
      )
      assert.strictEqual(run.sent.length, 2)
      assert.strictEqual(run.value.reason._tag, "WaitTimeout")
      assert.include(run.value.message, "3379/20000")
    })
  )

  it.live("vector, full-text, duplicates, drops (twice) and an odd label, in recorded order", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const indexes = Indexes.make(db.graph(g))
            yield* indexes.createRange({ label: "Doc", properties: ["n"] })
            const vector = yield* indexes.createVector({
              label: "Doc",
              property: "emb",
              dimension: 3,
              similarityFunction: "euclidean"
            })
            const building = yield* indexes.list()
            const fulltext = yield* indexes.createFulltext({ label: "Doc", properties: ["title"] })
            const duplicate = yield* Effect.flip(indexes.createRange({ label: "Doc", properties: ["n"] }))
            // Refused before sending: the server would answer with "already indexed" or worse.
            const zero = yield* Effect.flip(
              indexes.createVector({ label: "Doc", property: "emb", dimension: 0, similarityFunction: "cosine" })
            )
            const dropped = yield* indexes.drop({ type: "RANGE", label: "Doc", properties: ["n"] })
            const droppedAgain = yield* indexes.drop({ type: "RANGE", label: "Doc", properties: ["n"] })
            const droppedVector = yield* indexes.drop({ type: "VECTOR", label: "Doc", properties: ["emb"] })
            const droppedFulltext = yield* indexes.drop({ type: "FULLTEXT", label: "Doc", properties: ["title"] })
            const empty = yield* indexes.list()
            yield* indexes.createRange({ label: "Odd Label", properties: ["odd prop"] })
            const odd = yield* indexes.list()
            return {
              vector,
              building,
              fulltext,
              duplicate,
              zero,
              dropped,
              droppedAgain,
              droppedVector,
              droppedFulltext,
              empty,
              odd
            }
          }),
        {
          translations: [
            [
              q(g, "CREATE INDEX FOR (o:`Odd Label`) ON (o.`odd prop`)"),
              q(g, "CREATE INDEX FOR (d:`Odd Label`) ON (d.`odd prop`)")
            ],
            [ro(g, "CALL db.indexes()"), ro(g, "CALL db.indexes()")],
            [ro(g, "CALL db.indexes()"), ro(g, "CALL db.indexes()")],
            [ro(g, "CALL db.indexes()"), ro(g, "CALL db.indexes() YIELD label, properties RETURN label, properties")]
          ]
        }
      )
      const v = run.value
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      assert.deepStrictEqual(run.sent, [
        q(g, "CREATE INDEX FOR (d:Doc) ON (d.n)"),
        q(g, "CREATE VECTOR INDEX FOR (d:Doc) ON (d.emb) OPTIONS {dimension: 3, similarityFunction: 'euclidean'}"),
        ro(g, "CALL db.indexes()"),
        q(g, "CREATE FULLTEXT INDEX FOR (d:Doc) ON (d.title)"),
        q(g, "CREATE INDEX FOR (d:Doc) ON (d.n)"),
        q(g, "DROP INDEX FOR (d:Doc) ON (d.n)"),
        q(g, "DROP INDEX FOR (d:Doc) ON (d.n)"),
        q(g, "DROP VECTOR INDEX FOR (d:Doc) ON (d.emb)"),
        q(g, "DROP FULLTEXT INDEX FOR (d:Doc) ON (d.title)"),
        ro(g, "CALL db.indexes()"),
        q(g, "CREATE INDEX FOR (o:`Odd Label`) ON (o.`odd prop`)"),
        ro(g, "CALL db.indexes()")
      ])
      assert.strictEqual(v.vector.indicesCreated, 1)
      const [doc] = v.building
      assert.deepStrictEqual(doc!.properties, ["n", "emb"])
      assert.deepStrictEqual(doc!.types, { n: ["RANGE"], emb: ["VECTOR"] })
      assert.deepStrictEqual(doc!.options.n, {})
      assert.strictEqual(doc!.options.emb!.dimension, 3)
      assert.strictEqual(doc!.options.emb!.similarityFunction, "euclidean")
      assert.deepStrictEqual(doc!.status, { _tag: "UnderConstruction", indexed: 181, total: 20000 })
      assert.strictEqual(doc!.statusText, "[Indexing] 181/20000: UNDER CONSTRUCTION")
      assert.isDefined(doc!.info)
      assert.strictEqual(v.fulltext.indicesCreated, 1)
      assert.strictEqual(v.duplicate.reason._tag, "IndexExists")
      assert.strictEqual(serverMessageOf(v.duplicate), "Attribute 'n' is already indexed")
      assert.strictEqual(v.zero.reason._tag, "InvalidArgument")
      assert.include(v.zero.message, "dimension must be a positive integer")
      assert.strictEqual(v.dropped.indicesDeleted, 1)
      assert.strictEqual(v.droppedAgain.indicesDeleted, 0)
      assert.strictEqual(v.droppedVector.indicesDeleted, 1)
      assert.strictEqual(v.droppedFulltext.indicesDeleted, 1)
      assert.deepStrictEqual(v.empty, [])
      assert.deepStrictEqual(
        v.odd.map((i) => [i.label, i.properties]),
        [["Odd Label", ["odd prop"]]]
      )
    })
  )
})

describe("Indexes over recorded replies (vector-search, indexes)", () => {
  it.live("node and relationship vector indexes with HNSW options, all operational at once", () =>
    Effect.gen(function* () {
      const g = "vector-search"
      const run = yield* withReplay(g, (db) =>
        Effect.gen(function* () {
          const indexes = Indexes.make(db.graph(g))
          yield* indexes.createVector({ label: "Doc", property: "emb", dimension: 3, similarityFunction: "euclidean" })
          yield* indexes.createVector({
            label: "SIM",
            entityType: "RELATIONSHIP",
            property: "w",
            dimension: 2,
            similarityFunction: "cosine",
            M: 16,
            efConstruction: 200,
            efRuntime: 10
          })
          return yield* indexes.awaitOperational({ timeout: "5 seconds" })
        })
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.sent.length, 3)
      const [sim, doc] = run.value
      assert.strictEqual(sim!.label, "SIM")
      assert.strictEqual(sim!.entityType, "RELATIONSHIP")
      assert.deepStrictEqual(sim!.status, { _tag: "Operational" })
      assert.deepStrictEqual(
        { ...sim!.options.w },
        { dimension: 2, similarityFunction: "cosine", M: 16, efConstruction: 200, efRuntime: 10 }
      )
      assert.strictEqual(sim!.language, "english")
      assert.deepStrictEqual(sim!.stopwords, [])
      assert.strictEqual(doc!.label, "Doc")
      assert.strictEqual(doc!.entityType, "NODE")
    })
  )

  it.live("relationship range index, missing index drop error (indexes, read through GRAPH.QUERY there)", () =>
    Effect.gen(function* () {
      const g = "indexes"
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const indexes = Indexes.make(db.graph(g))
            yield* indexes.createRange({ label: "Doc", properties: ["title"] })
            yield* indexes.createRange({ label: "CITES", entityType: "RELATIONSHIP", properties: ["year"] })
            const listed = yield* indexes.list()
            const missing = yield* Effect.flip(indexes.drop({ type: "RANGE", label: "Doc", properties: ["nothing"] }))
            return { listed, missing }
          }),
        {
          translations: [
            [
              ro(g, "CALL db.indexes()"),
              q(
                g,
                "CALL db.indexes() YIELD label, properties, types, entitytype, status RETURN label, properties, types, entitytype, status"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.sent[1], q(g, "CREATE INDEX FOR ()-[c:CITES]-() ON (c.year)"))
      assert.deepStrictEqual(
        run.value.listed.map((i) => [i.label, i.entityType, i.properties, i.status._tag]),
        [
          ["CITES", "RELATIONSHIP", ["year"], "Operational"],
          ["Doc", "NODE", ["title"], "Operational"]
        ]
      )
      assert.strictEqual(run.value.missing.reason._tag, "IndexNotFound")
      assert.strictEqual(
        serverMessageOf(run.value.missing),
        "ERR Unable to drop index on :Doc(nothing): no such index."
      )
    })
  )
})

describe("Index query texts", () => {
  it("quotes what needs quoting and refuses what cannot be an identifier", () => {
    assert.strictEqual(
      Indexes.rangeIndexText({ label: "Odd Label", properties: ["a", "b c"] }),
      "CREATE INDEX FOR (o:`Odd Label`) ON (o.a, o.`b c`)"
    )
    assert.strictEqual(
      Indexes.fulltextIndexText({ label: "match", properties: ["x"], entityType: "RELATIONSHIP" }),
      "CREATE FULLTEXT INDEX FOR ()-[m:`match`]-() ON (m.x)"
    )
    assert.throws(() => Indexes.rangeIndexText({ label: "a`b", properties: ["x"] }), /backtick/)
    assert.throws(() => Indexes.rangeIndexText({ label: "A", properties: [] }), /at least one property/)
    assert.deepStrictEqual(Indexes.parseStatus("OPERATIONAL"), { _tag: "Operational" })
    assert.deepStrictEqual(Indexes.parseStatus("[Indexing] 3161/20000: UNDER CONSTRUCTION"), {
      _tag: "UnderConstruction",
      indexed: 3161,
      total: 20000
    })
    assert.deepStrictEqual(Indexes.parseStatus("weird"), { _tag: "Other", text: "weird" })
  })
})
