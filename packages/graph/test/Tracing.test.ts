/**
 * Graph spans name the server (`server.address`, `server.port`) and never carry a parameter
 * value. A plain redis-server answers GRAPH.QUERY with an unknown-command error, and the
 * span is recorded all the same: no FalkorDB module is needed for this.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import * as FalkorDB from "../src/FalkorDB.ts"

describe("graph spans", { timeout: 30_000 }, () => {
  it.live("carry db.system.name, db.namespace, server.address/port, and no parameter value", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const spans: Array<Tracer.NativeSpan> = []
        const tracer = Tracer.make({
          span(options) {
            const span = new Tracer.NativeSpan(options)
            spans.push(span)
            return span
          }
        })
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
      })
    )
  )
})
