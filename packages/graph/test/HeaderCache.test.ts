/**
 * The header cache: a header with the same name bytes is the same `Header` (its alias index
 * built once), anything else is parsed afresh; cached names are copies, so a reused read buffer
 * cannot make a different header match; a malformed header fails as before and is not kept.
 * Then live (FALKORDB_URL): a query run again through `roQuery` and `roStream` keeps its header,
 * and queries of other shapes on the same graph get their own columns.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as FalkorDB from "../src/FalkorDB.ts"
import { FalkorError } from "../src/FalkorError.ts"
import { HeaderCache } from "../src/internal/HeaderCache.ts"
import { fresh, url } from "./integration.ts"

const bytes = (s: string) => new TextEncoder().encode(s)
/** A compact header: `[[1, name], …]`. */
const header = (...names: ReadonlyArray<string>) => names.map((name) => [1, bytes(name)])

describe("HeaderCache", () => {
  it("the same name bytes give the same Header; other names, counts or orders their own", () => {
    const cache = new HeaderCache()
    const first = cache.read(header("a", "b"))
    assert.deepStrictEqual(first.columns, ["a", "b"])
    assert.strictEqual(cache.read(header("a", "b")), first)
    assert.strictEqual(first.indexOf("b"), 1)
    const other = cache.read(header("a", "c"))
    assert.deepStrictEqual(other.columns, ["a", "c"])
    assert.deepStrictEqual(cache.read(header("b", "a")).columns, ["b", "a"])
    assert.deepStrictEqual(cache.read(header("a")).columns, ["a"])
    assert.deepStrictEqual(cache.read(header("a", "b", "c")).columns, ["a", "b", "c"])
    assert.deepStrictEqual(cache.read([]).columns, [])
    assert.strictEqual(cache.read(header("a", "b")), first)
  })

  it("keeps copies of the names: bytes changed after the read do not match the cached header", () => {
    const cache = new HeaderCache()
    const raw = header("x", "yy")
    const first = cache.read(raw)
    ;(raw[1]![1] as Uint8Array).set(bytes("zz"))
    const changed = cache.read(raw)
    assert.notStrictEqual(changed, first)
    assert.deepStrictEqual(changed.columns, ["x", "zz"])
    assert.deepStrictEqual(first.columns, ["x", "yy"])
    assert.strictEqual(cache.read(header("x", "yy")), first)
  })

  it("more shapes than it keeps: every header still has its own columns", () => {
    const cache = new HeaderCache()
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++) assert.deepStrictEqual(cache.read(header(`c${i}`, "v")).columns, [`c${i}`, "v"])
    }
  })

  it("names that are not bytes (simple strings) and malformed headers: parsed as before, never kept", () => {
    const cache = new HeaderCache()
    assert.deepStrictEqual(cache.read([[1, "s"]]).columns, ["s"])
    assert.notStrictEqual(cache.read([[1, "s"]]), cache.read([[1, "s"]]))
    for (const malformed of [[[1]], [7], 7]) {
      let e: unknown
      try {
        cache.read(malformed as never)
      } catch (error) {
        e = error
      }
      assert.instanceOf(e, FalkorError)
      assert.strictEqual((e as FalkorError).reason._tag, "Decode")
    }
  })
})

describe.skipIf(!url)("headers across queries (FALKORDB_URL)", () => {
  it.live("roQuery and roStream of one query keep its header; other shapes get their own columns", () =>
    Effect.gen(function* () {
      const g = yield* fresh(yield* FalkorDB.FalkorDB, `effect-falkordb-headers:${process.pid}`)
      yield* g.query("CREATE (:P {v: 1}), (:P {v: 2})")
      const text = "MATCH (p:P) RETURN p.v AS v, p AS node ORDER BY v"
      const first = yield* g.roQuery(text)
      const again = yield* g.roQuery(text)
      assert.strictEqual(again.header, first.header)
      assert.deepStrictEqual(
        again.rows.map((r) => r.get("v")),
        [1, 2]
      )
      const streamed = yield* Stream.runCollect(g.roStream(text))
      assert.strictEqual(streamed[0]!.header, first.header)
      const other = yield* g.roQuery("MATCH (p:P) RETURN p.v AS w ORDER BY w")
      assert.deepStrictEqual(other.columns, ["w"])
      assert.deepStrictEqual(
        other.rows.map((r) => r.get("w")),
        [1, 2]
      )
      assert.deepStrictEqual((yield* g.roQuery("RETURN 1 AS v, 2 AS other")).columns, ["v", "other"])
    }).pipe(Effect.provide(FalkorDB.layer({ url: url! })))
  )
})
