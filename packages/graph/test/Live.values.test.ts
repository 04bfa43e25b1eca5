// Against the real FalkorDB of the run (FALKORDB_URL): every value type the server has comes back as
// the documented JavaScript value, and `RETURN $p` gives back what was sent — exactly, or by the
// documented mapping where the server legitimately differs:
//   - a double comes back with 15 significant digits (the server prints `%.15g`): x → Number(x.toPrecision(15)),
//     so 0.30000000000000004 → 0.3 and 1.7976931348623157e308 → Infinity;
//   - an integer comes back as a `number` when it is a safe integer, else as a `bigint` (5n → 5);
//   - -0 is a double on the wire (`-0.0`) and comes back as -0;
//   - NaN, ±Infinity, subnormal doubles, NUL, lone surrogates, empty or backticked map keys have no
//     literal in the CYPHER prefix: the client refuses them with a typed ParameterError, never sends them.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { cypher } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import * as Temporal from "../src/Temporal.ts"
import { Edge, type FalkorValue, Node, Path, Point } from "../src/Value.ts"
import { fresh, run, url } from "./integration.ts"

const graphName = (name: string) => `effect-falkordb-live-values:${name}:${process.pid}`
const DBL_MIN = 2.2250738585072014e-308

/** What the server gives back for a parameter (the mapping in the header). */
const echoed = (value: unknown): unknown => {
  if (value === null || value === undefined) return null
  if (typeof value === "number") {
    return Number.isSafeInteger(value) ? value : Number(value.toPrecision(15))
  }
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value
  if (Array.isArray(value)) return value.map(echoed)
  if (typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: echoed(v), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return value
}

const sendable = (s: string) =>
  !s.includes("\u0000") && !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""))

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }).filter(sendable),
  fc.constantFrom(
    "",
    "\uFEFF",
    "\uFEFFleading byte-order mark",
    "' RETURN 1 //",
    "\\",
    "\\'",
    '"',
    "`",
    "\n\r\t",
    "😀👩‍👩‍👧",
    "\uFFFF\uFFFE",
    "CYPHER x=1",
    "$p",
    "{a: 1}",
    "null"
  )
)

const number = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => d === 0 || Math.abs(d) >= DBL_MIN),
  fc.constantFrom(
    0,
    -0,
    2 ** 53,
    -(2 ** 53),
    2 ** 53 + 2,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    DBL_MIN,
    0.1 + 0.2,
    1e21,
    1e-7,
    123456.78901234567
  )
)

const integer = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 0n)
)

const key = fc
  .oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
    fc.constantFrom("__proto__", "a b", "ключ", "k'")
  )
  .filter((k) => k.length > 0 && !k.includes("`") && sendable(k))

const { value } = fc.letrec<{ value: unknown; leaf: unknown }>((tie) => ({
  leaf: fc.oneof(fc.constant(null), fc.boolean(), number, integer, text),
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("leaf"),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(key, tie("value"), { maxKeys: 5 })
  )
}))

describe.skipIf(!url)("live values (FALKORDB_URL)", () => {
  it.live("every value type the server has comes back as its documented value", () =>
    run(
      Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = yield* fresh(db, graphName("types"))
        yield* g.query(
          `CREATE (a:Person:Admin {name: 'Ålice\uFEFF', age: 30, score: 2.5, ok: true, tags: ['x', 1, 2.5],
             loc: point({latitude: 32.07, longitude: 34.78}), emb: vecf32([1.5, -0.25, 0.0]),
             born: date('1969-07-20'), seen: localdatetime('1900-01-01T00:00:01'), wake: localtime('23:59:59'),
             nap: duration('PT-1H')})
           -[:KNOWS {since: 2020, w: -0.0}]->(b:Person {name: 'Bob'})-[:KNOWS {since: 2021}]->(c:Person {name: ''})`
        )
        const r = yield* g.roQuery(
          `MATCH p = (a:Admin)-[r:KNOWS]->(b)-[:KNOWS]->(c)
           RETURN a, r, p, {a: a.name, list: [1, [2, [3]], {deep: [null]}]} AS m,
                  a.loc AS loc, a.emb AS emb, a.born AS born, a.seen AS seen, a.wake AS wake, a.nap AS nap,
                  date('0001-01-01') AS first, date('9999-12-31') AS last, duration('P1M') AS month,
                  9223372036854775807 AS max, -9223372036854775808 AS min, 9007199254740993 AS past53,
                  1.0/0 AS inf, -1.0/0 AS ninf, 0.0/0.0 AS nan, -0.0 AS nzero, r.w AS storedNzero,
                  '' AS empty, c.name AS emptyProperty`
        )
        const row = r.rows[0]!
        const a = row.get("a") as Node
        assert.instanceOf(a, Node)
        assert.deepStrictEqual(a.labels, ["Person", "Admin"])
        assert.strictEqual(a.properties.name, "Ålice\uFEFF")
        assert.deepStrictEqual(a.properties.tags, ["x", 1, 2.5])
        assert.deepStrictEqual(a.properties.loc, new Point(Math.fround(32.07), Math.fround(34.78)))
        assert.deepStrictEqual(Array.from(a.properties.emb as Float32Array), [1.5, -0.25, 0])
        const edge = row.get("r") as Edge
        assert.instanceOf(edge, Edge)
        assert.strictEqual(edge.relationshipType, "KNOWS")
        assert.strictEqual(edge.sourceId, a.id)
        const path = row.get("p") as Path
        assert.instanceOf(path, Path)
        assert.strictEqual(path.length, 2)
        assert.deepStrictEqual(
          path.nodes.map((n) => n.properties.name),
          ["Ålice\uFEFF", "Bob", ""]
        )
        assert.deepStrictEqual(row.get("m"), { a: "Ålice\uFEFF", list: [1, [2, [3]], { deep: [null] }] })
        assert.deepStrictEqual(Array.from(row.get("emb") as Float32Array), [1.5, -0.25, 0])
        assert.deepStrictEqual(row.get("born"), new Temporal.Date(-14256000))
        assert.strictEqual(String(row.get("born")), "1969-07-20")
        assert.deepStrictEqual(row.get("seen"), new Temporal.DateTime(-2208988799))
        assert.deepStrictEqual(row.get("wake"), Temporal.timeOf(23, 59, 59))
        assert.deepStrictEqual(row.get("nap"), new Temporal.Duration(-3600))
        assert.deepStrictEqual(row.get("first"), new Temporal.Date(-62135596800))
        assert.deepStrictEqual(row.get("last"), new Temporal.Date(253402214400))
        assert.deepStrictEqual(row.get("month"), new Temporal.Duration(31 * 86400))
        assert.strictEqual(row.get("max"), 9223372036854775807n)
        assert.strictEqual(row.get("min"), -9223372036854775808n)
        assert.strictEqual(row.get("past53"), 9007199254740993n)
        assert.strictEqual(row.get("inf"), Infinity)
        assert.strictEqual(row.get("ninf"), -Infinity)
        assert.isNaN(row.get("nan"))
        assert.isTrue(Object.is(row.get("nzero"), -0))
        assert.isTrue(Object.is(row.get("storedNzero"), -0))
        assert.strictEqual(row.get("empty"), "")
        assert.strictEqual(row.get("emptyProperty"), "")
        yield* g.delete()
      })
    )
  )

  it.live(
    "parameters at the edges: -0, int64 bounds, long and odd strings; what has no literal is refused, typed",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("edges"))
          yield* g.query("CREATE (:Seed)")
          const echo = (p: unknown) =>
            g.roQuery("RETURN $p AS p", { p: p as never }).pipe(Effect.map((r) => r.rows[0]!.get("p")))
          assert.isTrue(Object.is(yield* echo(-0), -0))
          assert.isTrue(Object.is(yield* echo(0), 0))
          assert.deepStrictEqual(yield* echo([-0, { z: -0 }]), [-0, { z: -0 }])
          assert.strictEqual(yield* echo(2n ** 63n - 1n), 2n ** 63n - 1n)
          assert.strictEqual(yield* echo(-(2n ** 63n)), -(2n ** 63n))
          assert.strictEqual(yield* echo(2n ** 53n + 1n), 2n ** 53n + 1n)
          assert.strictEqual(yield* echo(5n), 5)
          assert.strictEqual(yield* echo(0.1 + 0.2), 0.3)
          assert.strictEqual(yield* echo(Number.MAX_VALUE), Infinity)
          assert.strictEqual(yield* echo(""), "")
          const bom = "\uFEFF\uFEFFstarts with byte-order marks"
          assert.strictEqual(yield* echo(bom), bom)
          // About 3 MB of UTF-8 in one literal, quotes and backslashes included.
          const long = "a'\\é😀".repeat(300_000)
          assert.strictEqual(yield* echo(long), long)
          // Stored and read back as a property too.
          yield* g.query("CREATE (:Long {s: $s})", { s: long })
          const stored = yield* g.roQuery("MATCH (n:Long) RETURN n.s AS s, size(n.s) AS n")
          assert.strictEqual(stored.rows[0]!.get("s"), long)
          assert.strictEqual(stored.rows[0]!.get("n"), [...long].length)

          const refused = (p: unknown) =>
            Effect.flip(g.roQuery("RETURN $p AS p", { p: p as never })).pipe(
              Effect.map((e) => ({
                tag: e.reason._tag,
                reason: (e.reason as { cause?: { reason?: string } }).cause?.reason
              }))
            )
          assert.deepStrictEqual(yield* refused(NaN), { tag: "InvalidParameter", reason: "NonFinite" })
          assert.deepStrictEqual(yield* refused([Infinity]), { tag: "InvalidParameter", reason: "NonFinite" })
          assert.deepStrictEqual(yield* refused({ x: -Infinity }), { tag: "InvalidParameter", reason: "NonFinite" })
          assert.deepStrictEqual(yield* refused(5e-324), { tag: "InvalidParameter", reason: "Subnormal" })
          assert.deepStrictEqual(yield* refused(2n ** 63n), { tag: "InvalidParameter", reason: "OutOfRange" })
          assert.deepStrictEqual(yield* refused("a\u0000b"), { tag: "InvalidParameter", reason: "NulCharacter" })
          assert.deepStrictEqual(yield* refused("\uD800"), { tag: "InvalidParameter", reason: "LoneSurrogate" })
          assert.deepStrictEqual(yield* refused({ "": 1 }), { tag: "InvalidParameter", reason: "UnsafeName" })
          assert.deepStrictEqual(yield* refused({ "a`b": 1 }), { tag: "InvalidParameter", reason: "UnsafeName" })
          assert.deepStrictEqual(yield* refused({ "\uDC00": 1 }), { tag: "InvalidParameter", reason: "LoneSurrogate" })

          // Points, vectors and temporals travel through the cypher template, rebuilt by the server.
          const back = yield* g.roQuery(
            cypher`RETURN ${new Point(-90, 180)} AS p, ${new Float32Array([3.4028234663852886e38, -1e-45])} AS v, ${new Temporal.Date(-62135596800)} AS d, ${new Temporal.DateTime(253402300799)} AS dt, ${Temporal.timeOf(0, 0, 0)} AS t, ${new Temporal.Duration(0)} AS du`
          )
          const row = back.rows[0]!
          assert.deepStrictEqual(row.get("p"), new Point(-90, 180))
          // float32 extremes: the largest finite and the smallest subnormal (-1e-45 is stored as -1.401298464324817e-45).
          assert.deepStrictEqual(Array.from(row.get("v") as Float32Array), [3.4028234663852886e38, Math.fround(-1e-45)])
          assert.deepStrictEqual(
            [row.get("d"), row.get("dt"), row.get("t"), row.get("du")],
            [
              new Temporal.Date(-62135596800),
              new Temporal.DateTime(253402300799),
              Temporal.timeOf(0, 0, 0),
              new Temporal.Duration(0)
            ]
          )
          yield* g.delete()
        })
      )
  )

  it.live(
    "RETURN $p gives back what was sent: 2000 seeded parameter sets (nested maps and lists, unicode, extreme numbers)",
    () =>
      run(
        Effect.gen(function* () {
          const db = yield* FalkorDB.FalkorDB
          const g = yield* fresh(db, graphName("property"))
          yield* g.query("CREATE (:Seed)")
          const context = yield* Effect.context<never>()
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(value, async (p) => {
                const result = await Effect.runPromiseWith(context)(g.roQuery("RETURN $p AS p", { p: p as never }))
                assert.deepStrictEqual(result.rows[0]!.get("p") as FalkorValue, echoed(p) as FalkorValue)
              }),
              { seed: 22_5, numRuns: 2000 }
            )
          )
          yield* g.delete()
        })
      ),
    120_000
  )
})
