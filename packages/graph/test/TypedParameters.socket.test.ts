// Points, vectors and temporal values as parameters, end to end over real sockets against the
// FalkorDB 4.18.11 recording `rich-parameters`: the cypher template sends each in plain form
// and rebuilds it in the query (`point($p0)`, `vecf32($p0)`, `date($p0)`, …), explicit
// parameters carry the plain form and the query names the constructor. The recorded refusals
// of constructor calls inside the CYPHER prefix are typed.
import { cypher } from "../src/Cypher.ts"
import * as Temporal from "../src/Temporal.ts"
import { Node, Point } from "../src/Value.ts"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Command, withReplay } from "./support/replay.ts"

const g = "rich-parameters"
const ro = (text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]
const q = (text: string): Command => ["GRAPH.QUERY", g, text, "--compact"]

describe("typed values as parameters (rich-parameters)", () => {
  it.live("the template rebuilds points, vectors and temporals; explicit parameters name the constructor", () =>
    Effect.gen(function* () {
      const date = new Temporal.Date(1709164800) // 2024-02-29
      const time = Temporal.timeOf(23, 59, 59)
      const dateTime = new Temporal.DateTime(1704164645) // 2024-01-02T03:04:05
      const duration = new Temporal.Duration(93600) // P1DT2H
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const graph = db.graph(g)
            const point = yield* graph.roQuery(cypher`RETURN ${new Point(32.07, 34.79)} AS pt`)
            const vector = yield* graph.roQuery(cypher`RETURN ${new Float32Array([0.5, -1.25, 3])} AS v`)
            const temporal = yield* graph.roQuery(
              cypher`RETURN ${date} AS d, ${time} AS t, ${dateTime} AS dt, ${duration} AS du`
            )
            const dateMap = yield* graph.roQuery("RETURN date($d) AS d", { d: { year: 2024, month: 1, day: 2 } })
            const created = yield* graph.query(
              cypher`CREATE (n:Place {loc: ${new Point(1, 2)}, emb: ${new Float32Array([1, 2, 3])}}) RETURN n`
            )
            const distance = yield* graph.roQuery(
              "MATCH (n:Place) RETURN distance(n.loc, point($q)) AS dist, n.emb AS emb",
              { q: new Point(1, 2) }
            )
            return { point, vector, temporal, dateMap, created, distance }
          }),
        {
          translations: [
            [
              ro("CYPHER `p0`={latitude: 32.06999969482422, longitude: 34.790000915527344} RETURN point($p0) AS pt"),
              ro("CYPHER p={latitude: 32.07, longitude: 34.79} RETURN point($p) AS pt")
            ],
            [
              ro("CYPHER `p0`=[0.5, -1.25, 3] RETURN vecf32($p0) AS v"),
              ro("CYPHER v=[0.5, -1.25, 3.0] RETURN vecf32($v) AS v")
            ],
            [
              ro(
                "CYPHER `p0`='2024-02-29' `p1`='23:59:59' `p2`='2024-01-02T03:04:05' `p3`='PT93600S' RETURN date($p0) AS d, localtime($p1) AS t, localdatetime($p2) AS dt, duration($p3) AS du"
              ),
              ro(
                "CYPHER d='2024-02-29' t='23:59:59' dt='2024-01-02T03:04:05' du='P1DT2H' RETURN date($d) AS d, localtime($t) AS t, localdatetime($dt) AS dt, duration($du) AS du"
              )
            ],
            [
              ro("CYPHER `d`={year: 2024, month: 1, day: 2} RETURN date($d) AS d"),
              ro("CYPHER d={year: 2024, month: 1, day: 2} RETURN date($d) AS d")
            ],
            [
              q(
                "CYPHER `p0`={latitude: 1, longitude: 2} `p1`=[1, 2, 3] CREATE (n:Place {loc: point($p0), emb: vecf32($p1)}) RETURN n"
              ),
              q(
                "CYPHER p={latitude: 1.0, longitude: 2.0} v=[1.0, 2.0, 3.0] CREATE (n:Place {loc: point($p), emb: vecf32($v)}) RETURN n"
              )
            ],
            [
              ro(
                "CYPHER `q`={latitude: 1, longitude: 2} MATCH (n:Place) RETURN distance(n.loc, point($q)) AS dist, n.emb AS emb"
              ),
              ro(
                "CYPHER q={latitude: 1.0, longitude: 2.0} MATCH (n:Place) RETURN distance(n.loc, point($q)) AS dist, n.emb AS emb"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const v = run.value
      // Each value comes back as the value that was sent.
      assert.deepStrictEqual(v.point.rows[0]!.get("pt"), new Point(32.07, 34.79))
      assert.deepStrictEqual(Array.from(v.vector.rows[0]!.get("v") as Float32Array), [0.5, -1.25, 3])
      assert.deepStrictEqual(v.temporal.rows[0]!.values, [date, time, dateTime, duration])
      assert.deepStrictEqual(v.dateMap.rows[0]!.get("d"), new Temporal.Date(1704153600))
      const place = v.created.rows[0]!.get("n") as Node
      assert.instanceOf(place, Node)
      assert.deepStrictEqual(place.properties.loc, new Point(1, 2))
      assert.deepStrictEqual(Array.from(place.properties.emb as Float32Array), [1, 2, 3])
      assert.strictEqual(v.distance.rows[0]!.get("dist"), 0)
    })
  )

  it.live("constructors inside the CYPHER prefix are refused by the server: typed InvalidParameter", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(g, (db) =>
        Effect.gen(function* () {
          const graph = db.graph(g)
          const refused = (text: string) => Effect.flip(graph.roQuery(text))
          return [
            yield* refused("CYPHER p=point({latitude: 1.5, longitude: 2.5}) RETURN $p"),
            yield* refused("CYPHER v=vecf32([1.0, 2.0]) RETURN $v"),
            yield* refused("CYPHER d=date('2024-01-02') RETURN $d"),
            yield* refused("CYPHER x=1+2 RETURN $x")
          ]
        })
      )
      assert.deepStrictEqual(run.unrecorded, [])
      const [point, vector, date, expression] = run.value
      for (const [error, name] of [
        [point, "p"],
        [vector, "v"],
        [date, "d"]
      ] as const) {
        assert.strictEqual(error!.reason._tag, "InvalidParameter")
        assert.strictEqual(error!.reason._tag === "InvalidParameter" ? error!.reason.path : undefined, name)
      }
      assert.strictEqual(expression!.reason._tag, "Syntax")
    })
  )
})
