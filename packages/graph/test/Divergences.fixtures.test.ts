// What the live server showed the client did wrong, pinned on bytes recorded from FalkorDB 4.16.3
// (fixtures/falkordb-4.16.3/live-parameters.json, spec fixtures/specs/live-divergences.json): the
// client, given plain values, must send exactly the recorded request (a different text finds no
// recording) and read the recorded reply back as the documented value.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cypher from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import { loadScenarios } from "./fixtures.ts"
import { replay } from "./helpers.ts"

const scenarioOf = (name: string) => loadScenarios("falkordb-4.16.3").find((s) => s.scenario === name)!
const scenario = scenarioOf("live-parameters")

/** Runs `RETURN $p AS p` with `p` on a client answered only by the recorded compact pass. */
const echo = (p: Cypher.ParameterValue) => {
  const conn = replay(scenario)
  return Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    const result = yield* db.graph(scenario.graph).roQuery("RETURN $p AS p", { p })
    return { value: result.rows[0]!.get("p"), sent: conn.calls.at(-1)![2] }
  }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
}

describe("divergences found on the live server, on recorded bytes", () => {
  it.effect("-0 travels as the double -0.0 and comes back as -0 (it was sent as integer 0)", () =>
    Effect.gen(function* () {
      const zero = yield* echo(-0)
      assert.strictEqual(zero.sent, "CYPHER `p`=-0.0 RETURN $p AS p")
      assert.isTrue(Object.is(zero.value, -0))
      const nested = yield* echo([-0, { z: -0 }])
      assert.deepStrictEqual(nested.value, [-0, { z: -0 }])
      assert.isTrue(Object.is((yield* echo(0)).value, 0))
    })
  )

  it.effect("doubles come back with 15 significant digits; integers past 2^53 as bigint", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* echo(0.1 + 0.2)).value, 0.3)
      assert.strictEqual((yield* echo(Number.MAX_VALUE)).value, Infinity)
      assert.strictEqual((yield* echo(2n ** 53n + 1n)).value, 2n ** 53n + 1n)
      assert.strictEqual((yield* echo(-(2n ** 63n))).value, -(2n ** 63n))
    })
  )

  it.effect("strings and keys arrive as sent: a leading U+FEFF, the empty string, __proto__ as an own key", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* echo("\uFEFFbom")).value, "\uFEFFbom")
      assert.strictEqual((yield* echo("")).value, "")
      const map = (yield* echo(JSON.parse('{"a b": 1, "__proto__": [2]}'))).value as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(map), ["a b", "__proto__"])
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(map, "__proto__")?.value, [2])
    })
  )

  it.effect("a key with a lone surrogate is refused: on the wire it would be U+FFFD, another key", () =>
    Effect.gen(function* () {
      // What the server does with the bytes such a key becomes: a different key.
      const replaced = (yield* echo({ "\uFFFD": 1 })).value
      assert.deepStrictEqual(replaced, { "\uFFFD": 1 })
      const refused = yield* Effect.flip(Cypher.withParameters("RETURN $p AS p", { p: { "\uDC00": 1 } }))
      assert.deepInclude(refused, { reason: "LoneSurrogate", path: "p.\uDC00" })
      const name = yield* Effect.flip(Cypher.withParameters("RETURN 1", { "\uD800x": 1 }))
      assert.strictEqual(name.reason, "LoneSurrogate")
    })
  )

  it.effect("GRAPH.CONFIG refusals are InvalidArgument with the server's line (they were Runtime)", () => {
    const conn = replay(scenarioOf("admin-config"))
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const refusals = [
        [db.configGet("NO_SUCH_CONFIG"), "Unknown configuration field"],
        [db.configSet("THREAD_COUNT", 4), "This configuration parameter cannot be set at run-time"],
        [db.configSet("NO_SUCH_CONFIG", 1), "Unknown configuration field"],
        [db.configSet("TIMEOUT_DEFAULT", "abc"), "Failed to set config value TIMEOUT_DEFAULT to abc"],
        [
          db.configSet("TIMEOUT_DEFAULT", 30),
          "TIMEOUT_DEFAULT configuration parameter cannot be set to a value higher than TIMEOUT_MAX"
        ]
      ] as const
      for (const [call, line] of refusals) {
        const error = yield* Effect.flip(call as Effect.Effect<unknown, FalkorError>)
        assert.deepInclude(error.reason, { _tag: "InvalidArgument", serverMessage: line })
      }
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })
})
