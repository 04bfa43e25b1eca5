import { Buffer } from "node:buffer"
import { decodeKnown } from "./helpers.ts"
import * as CompactReply from "../src/internal/CompactReply.ts"
import * as Temporal from "../src/Temporal.ts"
import { Edge, type FalkorValue, Node, Path, Point } from "../src/Value.ts"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { encodeReply } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as CompactEncoder from "@effect-falkordb/testing/CompactEncoder"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"

const decodeBytes = (bytes: Uint8Array): Reply => {
  const out: Array<Reply> = []
  const failure = new Decoder((r) => out.push(r)).feed(bytes)
  assert.isUndefined(failure)
  assert.strictEqual(out.length, 1)
  return out[0]!
}

const namesOf =
  (tables: CompactEncoder.SchemaTables): CompactReply.Names =>
  (kind, id) =>
    tables[kind][id]

/** Decodes a compact reply with the graph client's real parser. */
const parse = (reply: Reply, tables: CompactEncoder.SchemaTables) => {
  const envelope = CompactReply.parseEnvelope(reply, "g", "GRAPH.QUERY")
  return {
    columns: envelope.columns,
    rows: envelope.rows.map((row, i) => decodeKnown(row, i, envelope.columns, namesOf(tables))),
    statistics: envelope.statistics
  }
}

/**
 * A recorded double cell the value model cannot give back as sent: a whole number (`[5, "3"]`
 * reads as the integer 3) or DBL_MAX, which `%.15g` prints as `1.79769313486232e+308` and
 * JavaScript parses as Infinity.
 */
const hasLossyDouble = (reply: Reply): boolean => {
  if (!Array.isArray(reply)) return false
  const items = reply as ReadonlyArray<Reply>
  if (items.length === 2 && items[0] === 5 && items[1] instanceof Uint8Array) {
    const text = Buffer.from(items[1]).toString()
    const value = Number(text)
    return (Number.isSafeInteger(value) && !Object.is(value, -0)) || text === "1.79769313486232e+308"
  }
  return items.some(hasLossyDouble)
}

describe("CompactEncoder", () => {
  it("formats doubles like C's %.15g / %.17g, with the server's inf and -nan", () => {
    const cases: ReadonlyArray<readonly [number, number, string]> = [
      [1 / 3, 15, "0.333333333333333"],
      [123456789.12345679, 15, "123456789.123457"],
      [0.30000000000000004, 15, "0.3"],
      [1, 15, "1"],
      [1e15, 15, "1e+15"],
      [2 ** 63, 15, "9.22337203685478e+18"],
      [1.7976931348623157e308, 15, "1.79769313486232e+308"],
      [0.0001, 15, "0.0001"],
      [0.00001, 15, "1e-05"],
      [-0, 15, "-0"],
      [Number.NaN, 15, "-nan"],
      [Number.POSITIVE_INFINITY, 15, "inf"],
      [Number.NEGATIVE_INFINITY, 15, "-inf"],
      [Math.fround(0.1), 17, "0.10000000149011612"],
      [Math.fround(1e38), 17, "9.9999996802856925e+37"],
      [3, 17, "3"],
      [Math.fround(32.07), 15, "32.0699996948242"],
      [Math.fround(-0.1278), 15, "-0.12780000269413"]
    ]
    for (const [value, digits, expected] of cases)
      assert.strictEqual(CompactEncoder.formatDouble(value, digits), expected)
  })

  it("every value type round-trips through the graph client's parser", () => {
    const tables = new CompactEncoder.SchemaTables()
    const alice = new Node(0, ["Person", "Admin"], {
      name: "Alice",
      age: 30,
      tags: ["a", "b"],
      at: new Temporal.Date(0)
    })
    const bob = new Node(1, ["Person"], { name: "Bob" })
    const knows = new Edge(7, "KNOWS", 0, 1, { since: 2020, weight: CompactEncoder.double(0.5) as never })
    const row: Array<CompactEncoder.Encodable> = [
      null,
      "text",
      42,
      2n ** 62n,
      true,
      false,
      3.5,
      CompactEncoder.double(3),
      [1, "two", [null]],
      { z: 1, a: { nested: [true] }, m: "x" },
      alice,
      knows,
      new Path([alice, bob], [knows]),
      new Point(32.07, 34.78),
      new Float32Array([1.5, -0.25, 3]),
      new Temporal.DateTime(1_700_000_000),
      new Temporal.Time(-2208988800 + 3600),
      new Temporal.Duration(-3600),
      Number.POSITIVE_INFINITY
    ]
    const columns = row.map((_, i) => `c${i}`)
    const reply = CompactEncoder.encodeResult({ columns, rows: [row], statistics: { nodesCreated: 2 } }, tables)
    // Through the wire format too: encode as RESP2 bytes and decode back.
    const decoded = parse(decodeBytes(encodeReply(reply, 2)), tables)
    assert.deepStrictEqual(decoded.columns, columns)
    assert.strictEqual(decoded.statistics.nodesCreated, 2)
    const values = decoded.rows[0]!
    const expected: Array<FalkorValue> = row.map((v) =>
      v instanceof CompactEncoder.Double ? v.value : (v as FalkorValue)
    ) as Array<FalkorValue>
    // The edge's weight was scripted as a Double wrapper; it decodes to the number.
    expected[11] = new Edge(7, "KNOWS", 0, 1, { since: 2020, weight: 0.5 })
    expected[12] = new Path([alice, bob], [expected[11] as Edge])
    // Labels arrive in label-id order: Person (0) before Admin (1) — as written here.
    assert.deepStrictEqual(values, expected)
    assert.deepStrictEqual(tables.labels, ["Person", "Admin"])
    assert.deepStrictEqual(tables.relationshipTypes, ["KNOWS"])
  })

  it("refuses values without a compact form, naming where they are", () => {
    const tables = new CompactEncoder.SchemaTables()
    const refuse = (value: unknown, path: string) => {
      try {
        CompactEncoder.encodeResult({ columns: ["x"], rows: [[value as CompactEncoder.Encodable]] }, tables)
        assert.fail("expected a CompactEncodeError")
      } catch (e) {
        assert.instanceOf(e, CompactEncoder.CompactEncodeError)
        assert.include((e as CompactEncoder.CompactEncodeError).path, path)
      }
    }
    refuse(() => 1, 'column "x"')
    refuse(new Date(), 'column "x"')
    refuse(2n ** 64n, 'column "x"')
    refuse(new Node(1, [], { bad: { map: 1 } }), ".bad")
  })

  it("a write without RETURN is [statistics] with the counters in the server's order", () => {
    const reply = CompactEncoder.encodeResult(
      { statistics: { relationshipsCreated: 1, labelsAdded: 1, nodesCreated: 2, executionTimeMs: 0.700848 } },
      new CompactEncoder.SchemaTables()
    )
    const text = (reply as ReadonlyArray<ReadonlyArray<Uint8Array>>)[0]!.map((b) => Buffer.from(b).toString())
    assert.deepStrictEqual(text, [
      "Labels added: 1",
      "Nodes created: 2",
      "Relationships created: 1",
      "Cached execution: 0",
      "Query internal execution time: 0.700848 milliseconds"
    ])
  })

  for (const [version, scenario] of [
    ["falkordb-4.4.0", "values-all-types"],
    ["falkordb-4.4.0", "nodes"],
    ["falkordb-4.4.0", "edges"],
    ["falkordb-4.4.0", "paths"],
    ["falkordb-4.4.0", "nested-collections"],
    ["falkordb-4.4.0", "doubles"],
    ["falkordb-4.4.0", "integers"],
    ["falkordb-4.18.11", "temporal"],
    ["falkordb-4.18.11", "strings"]
  ] as const) {
    it.effect(`${version}/${scenario}: recorded compact replies, decoded and re-encoded, decode the same`, () =>
      Effect.gen(function* () {
        const fixture = yield* FixtureReplay.loadScenario(version, scenario)
        const compact = fixture.exchanges.filter((e) => e.pass === "compact")
        // The schema names as the server listed them (the verbose refresh).
        const tables = new CompactEncoder.SchemaTables()
        for (const [kind, procedure] of [
          ["labels", "CALL db.labels()"],
          ["relationshipTypes", "CALL db.relationshipTypes()"],
          ["propertyKeys", "CALL db.propertyKeys()"]
        ] as const) {
          const refresh = compact.find(
            (e) => e.schema_refresh === true && e.request.length === 3 && e.request[2] === procedure
          )!
          tables[kind].push(
            ...CompactReply.parseNameList(decodeBytes(Buffer.from(refresh.reply_base64, "base64")), "g", "x")
          )
        }
        let checked = 0
        let byteExact = 0
        for (const exchange of compact) {
          if (exchange.phase !== "probe" || !exchange.request.includes("--compact")) continue
          const original = decodeBytes(Buffer.from(exchange.reply_base64, "base64"))
          if (!Array.isArray(original) || original.length !== 3) continue
          const first = parse(original, tables)
          const again = CompactEncoder.encodeResult(
            {
              columns: first.columns,
              rows: first.rows,
              statistics: first.statistics
            },
            tables
          )
          const second = parse(again, tables)
          assert.deepStrictEqual(second.columns, first.columns)
          assert.deepStrictEqual(second.rows, first.rows, JSON.stringify(exchange.request))
          checked++
          // Byte for byte, except where the value model lost a double's spelling (see above).
          if (Buffer.from(encodeReply(again, 2)).equals(Buffer.from(exchange.reply_base64, "base64"))) byteExact++
          else assert.isTrue(hasLossyDouble(original), `not byte-exact: ${JSON.stringify(exchange.request)}`)
        }
        assert.isAbove(checked, 0)
        assert.isAbove(byteExact, 0, `${byteExact} of ${checked} byte-exact`)
      })
    )
  }
})
