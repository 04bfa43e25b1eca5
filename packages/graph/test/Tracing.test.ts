/**
 * Graph spans name the server (`server.address`, `server.port`) and never carry a parameter
 * value. A plain redis-server answers GRAPH.QUERY with an unknown-command error, and the
 * span is recorded all the same: no FalkorDB module is needed for this.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import * as Stream from "effect/Stream"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import { resp, scripted } from "./helpers.ts"

/** An in-memory tracer and the spans it made. */
const recording = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}

describe("graph spans", { timeout: 30_000 }, () => {
  it.live("carry db.system.name, db.namespace, server.address/port, and no parameter value", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ module: false })
        const { spans, tracer } = recording()
        yield* Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          yield* Effect.flip(
            db.graph("people").query("MATCH (p:Person {name: $name}) RETURN p", { name: "hunter2-secret" })
          ).pipe(Effect.provideService(Tracer.Tracer, tracer))
        }).pipe(Effect.provide(FalkorDB.layer({ url: server.url, strategy: "single" })))
        const query = spans.find((span) => span.name === "Graph.query")
        assert.isDefined(query, "a Graph.query span")
        assert.strictEqual(query!.attributes.get("db.system.name"), "falkordb")
        assert.strictEqual(query!.attributes.get("db.namespace"), "people")
        assert.strictEqual(query!.attributes.get("db.operation.name"), "GRAPH.QUERY")
        assert.strictEqual(query!.attributes.get("server.address"), server.host)
        assert.strictEqual(query!.attributes.get("server.port"), server.port)
        const everything = JSON.stringify(spans.map((span) => [span.name, [...span.attributes]]))
        assert.notInclude(everything, "hunter2-secret")
        // Without queryText, the summary only.
        assert.strictEqual(query!.attributes.get("db.query.summary"), "MATCH RETURN")
        assert.isFalse(query!.attributes.has("db.query.text"))
      })
    )
  )

  it.live("queryText: db.query.text is the fingerprint; summary, batch size; no literal or parameter value", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ module: false })
        const { spans, tracer } = recording()
        yield* Effect.gen(function* () {
          const graph = (yield* FalkorDB.FalkorDB).graph("people")
          yield* Effect.flip(
            graph.roQuery(
              "MATCH (p:Person {name: 'literal-secret'}) WHERE p.age > 4242 AND p.id = $id // note 'comment-secret'\nRETURN p",
              { id: "param-secret" }
            )
          )
          yield* Effect.flip(graph.query(cypher`MERGE (p:Person {name: ${"template-secret"}}) SET p.n = 7 RETURN p`))
          yield* Effect.flip(Stream.runDrain(graph.roStream("UNWIND [31337] AS x RETURN x")))
          yield* graph.batch([
            { query: "CREATE (:A {v: 'batch-secret'})" },
            { query: "MATCH (a:A) RETURN a", readOnly: true }
          ])
        }).pipe(
          Effect.provideService(Tracer.Tracer, tracer),
          Effect.provide(FalkorDB.layer({ url: server.url, strategy: "single", queryText: true }))
        )
        const roQuery = spans.find((span) => span.name === "Graph.roQuery")!
        assert.strictEqual(roQuery.attributes.get("db.query.summary"), "MATCH RETURN")
        assert.strictEqual(
          roQuery.attributes.get("db.query.text"),
          "MATCH (p:Person {name: ?}) WHERE p.age > ? AND p.id = $id RETURN p"
        )
        const query = spans.find((span) => span.name === "Graph.query")!
        assert.strictEqual(query.attributes.get("db.query.summary"), "MERGE SET RETURN")
        assert.match(
          String(query.attributes.get("db.query.text")),
          /^MERGE \(p:Person \{name: \$\w+\}\) SET p\.n = \? RETURN p$/
        )
        const stream = spans.find((span) => span.name === "Graph.roStream")!
        assert.strictEqual(stream.attributes.get("db.query.text"), "UNWIND [?] AS x RETURN x")
        assert.strictEqual(stream.attributes.get("db.query.summary"), "UNWIND RETURN")
        const batch = spans.find((span) => span.name === "Batch.run")!
        assert.strictEqual(batch.attributes.get("db.operation.batch.size"), 2)
        assert.strictEqual(batch.attributes.get("db.operation.name"), "BATCH")
        assert.strictEqual(batch.attributes.get("db.system.name"), "falkordb")
        const everything = JSON.stringify(spans.map((span) => [span.name, [...span.attributes]]))
        for (const secret of [
          "literal-secret",
          "4242",
          "param-secret",
          "comment-secret",
          "template-secret",
          "31337",
          "batch-secret"
        ]) {
          assert.notInclude(everything, secret)
        }
      })
    )
  )

  // One row and the recorded statistics, answered in memory: the span's success annotations.
  const oneRow = resp(
    "*3\n*1\n*2\n:1\n$3\none\n*1\n*1\n*2\n:3\n:1\n*2\n$19\nCached execution: 0\n$52\nQuery internal execution time: 0.067516 milliseconds\n"
  )
  /** `use` on graph "g" of a client whose connection answers `oneRow`, with `tracer` installed. */
  const withOneRow = <A, E>(
    tracer: Tracer.Tracer,
    use: (graph: ReturnType<FalkorDB.FalkorDB["Service"]["graph"]>) => Effect.Effect<A, E>
  ) =>
    Effect.flatMap(FalkorDB.FalkorDB, (db) => use(db.graph("g"))).pipe(
      Effect.provideService(Tracer.Tracer, tracer),
      Effect.provide(FalkorDB.layerFromRedis),
      Effect.provide(scripted(() => Effect.succeed(oneRow)).layer)
    )

  it.effect("a query's span carries its rows and execution time, ended, under the caller's span", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recording()
      const result = yield* withOneRow(tracer, (graph) =>
        graph.roQuery("RETURN 1 AS one").pipe(Effect.withSpan("outer"))
      )
      assert.strictEqual(result.rows[0]!.get("one"), 1)
      const span = spans.find((s) => s.name === "Graph.roQuery")
      assert.isDefined(span, "a Graph.roQuery span")
      assert.strictEqual(span!.status._tag, "Ended")
      assert.strictEqual(span!.attributes.get("db.operation.name"), "GRAPH.RO_QUERY")
      assert.strictEqual(span!.attributes.get("db.read_only"), true)
      assert.strictEqual(span!.attributes.get("db.query.summary"), "RETURN")
      assert.strictEqual(span!.attributes.get("db.response.returned_rows"), 1)
      assert.strictEqual(span!.attributes.get("falkordb.execution_time_ms"), 0.067516)
      const outer = spans.find((s) => s.name === "outer")!
      assert.strictEqual(span!.parent._tag === "Some" ? span!.parent.value.spanId : undefined, outer.spanId)
    })
  )

  it.effect("Effect.withTracerEnabled(false) turns the graph spans off, the tracer still installed", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recording()
      const result = yield* withOneRow(tracer, (graph) =>
        Effect.gen(function* () {
          const off = yield* Effect.withTracerEnabled(graph.roQuery("RETURN 1 AS one"), false)
          // The same handle, tracing on again: the switch is read per call.
          yield* graph.query("RETURN 1 AS one")
          return off
        })
      )
      assert.strictEqual(result.rows[0]!.get("one"), 1)
      assert.strictEqual(result.statistics.executionTimeMs, 0.067516)
      assert.deepStrictEqual(
        spans.map((s) => s.name),
        ["Graph.query"]
      )
    })
  )
})
