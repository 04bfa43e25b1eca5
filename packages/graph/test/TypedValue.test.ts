// The cypher template and the parameter encoder on points, vectors and temporal values: the
// value travels in plain form and the template rebuilds it with the server's constructor.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { cypher, withParameters } from "../src/Cypher.ts"
import * as Temporal from "../src/Temporal.ts"
import { Point } from "../src/Value.ts"

const sent = (q: ReturnType<typeof cypher>) => Effect.runSync(withParameters(q.text, q.parameters))

describe("typed values as parameters", () => {
  it("the template wraps each placeholder in its constructor", () => {
    assert.strictEqual(
      sent(cypher`RETURN ${new Point(1.5, -2)} AS p, ${new Float32Array([1, 0.5])} AS v`),
      "CYPHER `p0`={latitude: 1.5, longitude: -2} `p1`=[1, 0.5] RETURN point($p0) AS p, vecf32($p1) AS v"
    )
    assert.strictEqual(
      sent(
        cypher`RETURN ${new Temporal.Date(-62135596800)}, ${Temporal.timeOf(3, 4, 5)}, ${new Temporal.DateTime(-14182940)}, ${new Temporal.Duration(-3600)}`
      ),
      "CYPHER `p0`='0001-01-01' `p1`='03:04:05' `p2`='1969-07-20T20:17:40' `p3`='PT-3600S' RETURN date($p0), localtime($p1), localdatetime($p2), duration($p3)"
    )
    // Plain values are untouched.
    assert.strictEqual(
      sent(cypher`RETURN ${1} AS one, ${"x"} AS s`),
      "CYPHER `p0`=1 `p1`='x' RETURN $p0 AS one, $p1 AS s"
    )
  })

  it("explicit parameters carry the plain form (the query names the constructor), nested too", () => {
    assert.strictEqual(
      Effect.runSync(withParameters("RETURN point($p)", { p: new Point(1, 2) })),
      "CYPHER `p`={latitude: 1, longitude: 2} RETURN point($p)"
    )
    assert.strictEqual(
      Effect.runSync(withParameters("RETURN $m", { m: { when: new Temporal.Date(86400), v: new Float32Array([2]) } })),
      "CYPHER `m`={when: '1970-01-02', v: [2]} RETURN $m"
    )
  })

  it("a vector with a non-finite element is refused like any number", () => {
    const result = Effect.runSync(
      Effect.result(withParameters("RETURN vecf32($v)", { v: new Float32Array([Number.NaN]) }))
    )
    assert.strictEqual(result._tag, "Failure")
  })
})
