// Targeted expectations per value type, nested and empty replies, malformed payloads, and
// byte-exact replies of the Rust-based server written from the protocol reference.
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import { decodeKnown, cellKnown } from "./helpers.ts"
import * as CompactReply from "../src/internal/CompactReply.ts"
import { FalkorError } from "../src/FalkorError.ts"
import * as Temporal from "../src/Temporal.ts"
import { Edge, Node, Path, Point } from "../src/Value.ts"
import { decodeReply, loadScenarios } from "./fixtures.ts"
import { serverMessageOf } from "./helpers.ts"

const resp = (text: string): Reply => {
  const out: Array<Reply> = []
  const error = new Decoder((r) => out.push(r)).feed(Buffer.from(text.replace(/\n/g, "\r\n")))
  if (error !== undefined) throw error
  assert.strictEqual(out.length, 1)
  return out[0]!
}

const names: CompactReply.Names = (kind, id) =>
  ({ labels: ["Person", "Movie"], relationshipTypes: ["KNOWS"], propertyKeys: ["name", "age", "since"] })[kind][id]

const rowsOf = (reply: Reply, lookup: CompactReply.Names = names) => {
  const env = CompactReply.parseEnvelope(reply, "g", "GRAPH.QUERY")
  return env.rows.map((r, i) => decodeKnown(r, i, env.columns, lookup))
}

const probe = (version: string, scenario: string, query: string): Reply => {
  const s = loadScenarios(version).find((x) => x.scenario === scenario)!
  const e = s.exchanges.find((x) => x.pass === "compact" && x.request[2] === query && x.request.includes("--compact"))
  assert.isDefined(e, `${scenario}: ${query}`)
  return decodeReply(e!.reply_base64)
}

const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  assert.fail("expected a throw")
}

describe("CompactReply", () => {
  it("decodes every scalar type of the 4.4.0 all-types probe", () => {
    const reply = probe(
      "falkordb-4.4.0",
      "values-all-types",
      "RETURN null AS n, 'text' AS s, 42 AS i, true AS t, false AS f, 3.5 AS d, [1, 'two', 3.0, false, null] AS a, {k: 'v', n: 1} AS m, point({latitude: 32.07, longitude: 34.78}) AS p, vecf32([1.5, -0.25, 3]) AS v"
    )
    const [row] = rowsOf(reply)
    const [n, s, i, t, f, d, a, m, p, v] = row!
    assert.strictEqual(n, null)
    assert.strictEqual(s, "text")
    assert.strictEqual(i, 42)
    assert.strictEqual(t, true)
    assert.strictEqual(f, false)
    assert.strictEqual(d, 3.5)
    assert.deepStrictEqual(a, [1, "two", 3, false, null])
    assert.deepStrictEqual(m, { k: "v", n: 1 })
    assert.instanceOf(p, Point)
    assert.strictEqual((p as Point).latitude, Math.fround(32.07))
    assert.strictEqual((p as Point).longitude, Math.fround(34.78))
    assert.instanceOf(v, Float32Array)
    assert.deepStrictEqual(Array.from(v as Float32Array), [1.5, -0.25, 3])
  })

  it("keeps int64 extremes exact as bigint and safe integers as numbers", () => {
    const reply = resp(
      "*3\n*3\n*2\n:1\n$3\nmax\n*2\n:1\n$3\nmin\n*2\n:1\n$4\nsafe\n*1\n*3\n*2\n:3\n:9223372036854775807\n*2\n:3\n:-9223372036854775808\n*2\n:3\n:9007199254740991\n*0\n"
    )
    const [row] = rowsOf(reply)
    assert.deepStrictEqual(row, [9223372036854775807n, -9223372036854775808n, 9007199254740991])
  })

  it("parses doubles as the server prints them, non-finite included", () => {
    const cell = (s: string) => cellKnown([5, Buffer.from(s)], names)
    assert.strictEqual(cell("inf"), Infinity)
    assert.strictEqual(cell("-inf"), -Infinity)
    assert.isTrue(Number.isNaN(cell("-nan") as number))
    assert.isTrue(Object.is(cell("-0"), -0))
    assert.strictEqual(cell("1e+15"), 1e15)
    assert.strictEqual(cell("1.79769313486232e+308"), Infinity)
    assert.strictEqual(cellKnown([5, 2.5], names), 2.5) // RESP3 double
  })

  it("decodes nodes, edges and paths with names from the schema", () => {
    const node = "*2\n:8\n*3\n:0\n*2\n:0\n:1\n*2\n*3\n:0\n:2\n$5\nAlice\n*3\n:1\n:3\n:30\n"
    const edge = "*2\n:7\n*5\n:7\n:0\n:0\n:1\n*1\n*3\n:2\n:3\n:2020\n"
    const node1 = "*2\n:8\n*3\n:1\n*0\n*0\n"
    const path = `*2\n:9\n*2\n*2\n:6\n*2\n${node}${node1}*2\n:6\n*1\n${edge}`
    const reply = resp(`*3\n*3\n*2\n:1\n$1\nn\n*2\n:1\n$1\ne\n*2\n:1\n$1\np\n*1\n*3\n${node}${edge}${path}*0\n`)
    const [[n, e, p]] = rowsOf(reply) as Array<Array<unknown>>
    assert.deepStrictEqual(n, new Node(0, ["Person", "Movie"], { name: "Alice", age: 30 }))
    assert.deepStrictEqual(e, new Edge(7, "KNOWS", 0, 1, { since: 2020 }))
    assert.instanceOf(p, Path)
    assert.strictEqual((p as Path).length, 1)
    assert.deepStrictEqual((p as Path).nodes[1], new Node(1, [], {}))
  })

  it("decodes deep nesting and empty collections", () => {
    const reply = probe(
      "falkordb-4.18.11",
      "nested-collections",
      "RETURN [[[[[1]]]]] AS arr5, {a: {b: {c: {d: {e: 1}}}}} AS map5, [{a: [{b: [1, {c: []}]}]}] AS mixed5"
    )
    const [[list, map, mixed]] = rowsOf(reply)
    assert.deepStrictEqual(list, [[[[[1]]]]])
    assert.deepStrictEqual(map, { a: { b: { c: { d: { e: 1 } } } } })
    assert.deepStrictEqual(mixed, [{ a: [{ b: [1, { c: [] }] }] }])
    const order = rowsOf(
      probe(
        "falkordb-4.4.0",
        "nested-collections",
        "RETURN {z: 1, a: 2, m: 3} AS key_order, {b: null, a: [null]} AS nulls"
      )
    )
    assert.deepStrictEqual(Object.keys(order[0]![0] as object), ["z", "a", "m"])
    const empty = resp("*3\n*2\n*2\n:1\n$1\nl\n*2\n:1\n$1\nm\n*1\n*2\n*2\n:6\n*0\n*2\n:10\n*0\n*0\n")
    assert.deepStrictEqual(rowsOf(empty), [[[], {}]])
  })

  it("decodes temporal values (4.18.11) and their server renderings", () => {
    const [[first, last]] = rowsOf(
      probe("falkordb-4.18.11", "temporal", "RETURN date('0001-01-01') AS first, date('9999-12-31') AS last")
    )
    assert.instanceOf(first, Temporal.Date)
    assert.strictEqual(String(first), "1-01-01")
    assert.strictEqual(String(last), "9999-12-31")
    const cell = (code: number, v: number) => cellKnown([code, v], names)
    assert.strictEqual(String(cell(13, 1704164645)), "2024-01-02T03:04:05")
    assert.strictEqual(String(cell(15, -2208977755)), "03:04:05")
    assert.strictEqual(String(cell(15, -2208898800)), "01:00:00") // not reduced after arithmetic
    assert.strictEqual(String(cell(15, -2208990600)), "23:30:00")
    assert.strictEqual(String(cell(16, 93600)), "P1DT2H")
    assert.strictEqual(String(cell(16, -3600)), "P-1Y11M30DT23H")
    assert.strictEqual(String(cell(16, 0)), "P")
  })

  it("reads an empty result and a statistics-only reply", () => {
    const zero = CompactReply.parseEnvelope(
      resp(
        "*3\n*1\n*2\n:1\n$1\nx\n*0\n*2\n$19\nCached execution: 0\n$52\nQuery internal execution time: 0.067516 milliseconds\n"
      ),
      "g",
      "GRAPH.QUERY"
    )
    assert.deepStrictEqual(zero.columns, ["x"])
    assert.strictEqual(zero.rows.length, 0)
    assert.strictEqual(zero.statistics.executionTimeMs, 0.067516)
    const write = CompactReply.parseEnvelope(
      resp(
        "*1\n*3\n$15\nLabels added: 2\n$19\nCached execution: 1\n$52\nQuery internal execution time: 0.358568 milliseconds\n"
      ),
      "g",
      "GRAPH.QUERY"
    )
    assert.deepStrictEqual(write.columns, [])
    assert.strictEqual(write.statistics.labelsAdded, 2)
    assert.strictEqual(write.statistics.nodesCreated, 0)
    assert.isTrue(write.statistics.cachedExecution)
  })

  it("keeps unknown statistics and reads the Rust server's Graph version", () => {
    const stats = CompactReply.parseStatistics(
      resp("*4\n$16\nNodes created: 3\n$16\nSomething new: 7\n$19\nCached execution: 0\n$16\nGraph version: 9\n")
    )
    assert.strictEqual(stats.nodesCreated, 3)
    assert.strictEqual(stats.graphVersion, 9)
    assert.deepStrictEqual(stats.entries[1], ["Something new", "7"])
  })

  it("reads every counter under its own name, a unit after the value, and no prototype name as a counter", () => {
    const names = [
      ["Labels added", "labelsAdded"],
      ["Labels removed", "labelsRemoved"],
      ["Nodes created", "nodesCreated"],
      ["Nodes deleted", "nodesDeleted"],
      ["Properties set", "propertiesSet"],
      ["Properties removed", "propertiesRemoved"],
      ["Relationships created", "relationshipsCreated"],
      ["Relationships deleted", "relationshipsDeleted"],
      ["Indices created", "indicesCreated"],
      ["Indices deleted", "indicesDeleted"],
      ["Constraints created", "constraintsCreated"],
      ["Constraints deleted", "constraintsDeleted"]
    ] as const
    const lines = [
      ...names.map(([name], i) => `${name}: ${i + 1}`),
      "Query internal execution time: 1.5 milliseconds",
      "Cached execution: 1",
      "constructor: 5",
      "no colon here"
    ]
    const stats = CompactReply.parseStatistics(lines.map((line) => new TextEncoder().encode(line)))
    for (const [i, [, field]] of names.entries()) assert.strictEqual(stats[field], i + 1, field)
    assert.strictEqual(stats.executionTimeMs, 1.5)
    assert.isTrue(stats.cachedExecution)
    assert.strictEqual(stats.graphVersion, undefined)
    assert.deepStrictEqual(stats.entries.slice(-4), [
      ["Query internal execution time", "1.5"],
      ["Cached execution", "1"],
      ["constructor", "5"],
      ["no colon here", ""]
    ])
  })

  it("reads statistics from bytes exactly as from text: every name, number shape and unit", () => {
    // Lines as bulk strings are read from their bytes; as simple strings, through the text path.
    const numbers = [
      "0",
      "1",
      "007",
      "12",
      "0.300696",
      "1.5",
      "0.1",
      "123456789012345",
      "1234567890123456",
      "0.30000000000000004",
      "9007199254740993",
      "1e3",
      "0x10",
      "",
      "1.",
      ".5",
      "-1",
      "+2",
      "0.0000000000000000000001",
      "0.00000000000000000000001",
      "3.14159265358979",
      "1_000",
      "NaN"
    ]
    for (let i = 0; i < 200; i++) numbers.push(String(Math.random() * 10 ** Math.floor(Math.random() * 8)))
    for (let i = 0; i < 200; i++) numbers.push((Math.random() * 1000).toFixed(Math.floor(Math.random() * 8)))
    const names = [
      "Labels added",
      "Labels removed",
      "Nodes created",
      "Nodes deleted",
      "Properties set",
      "Properties removed",
      "Relationships created",
      "Relationships deleted",
      "Indices created",
      "Indices deleted",
      "Constraints created",
      "Constraints deleted",
      "Cached execution",
      "Query internal execution time",
      "Graph version",
      "Something new",
      "Nodes create",
      "nodes created"
    ]
    for (const [i, value] of numbers.entries()) {
      const lines = [
        ...names.map((name, k) => `${name}: ${numbers[(i + k) % numbers.length]}`),
        `Query internal execution time: ${value} milliseconds`,
        "no colon here",
        "trailing:",
        "Nodes created:5",
        "héllo: 1",
        "\uFEFFNodes created: 2"
      ]
      const fromBytes = CompactReply.parseStatistics(lines.map((line) => new TextEncoder().encode(line)))
      const fromText = CompactReply.parseStatistics(lines)
      assert.deepStrictEqual(fromBytes, fromText, value)
      assert.isTrue(Object.is(fromBytes.executionTimeMs, Number(value)), value)
    }
  })

  it("fails with a typed error naming row and column on unknown type codes and malformed payloads", () => {
    const header = "*3\n*2\n*2\n:1\n$1\na\n*2\n:1\n$1\nb\n"
    const bad = (cell: string) =>
      thrown(() => rowsOf(resp(`${header}*2\n*2\n*2\n:3\n:1\n*2\n:3\n:1\n*2\n*2\n:3\n:2\n${cell}*0\n`)))
    for (const cell of [
      "*2\n:99\n:1\n",
      "*2\n:0\n$-1\n",
      "*2\n:3\n$3\nabc\n",
      "*2\n:4\n$3\nyes\n",
      "*2\n:5\n$3\nabc\n",
      "*2\n:8\n*2\n:0\n*0\n",
      "*3\n:3\n:1\n:1\n",
      "*2\n:10\n*1\n$1\nk\n",
      "*2\n:11\n*1\n$1\n1\n"
    ]) {
      const e = bad(cell)
      assert.instanceOf(e, FalkorError, cell)
      const reason = (e as FalkorError).reason
      assert.strictEqual(reason._tag, "Decode")
      assert.strictEqual(reason._tag === "Decode" && reason.row, 1)
      assert.strictEqual(reason._tag === "Decode" && reason.column, "b")
    }
    const unknown = bad("*2\n:99\n:1\n") as FalkorError
    assert.include(unknown.message, "unknown value type code")
    const short = thrown(() => rowsOf(resp(`${header}*1\n*1\n*2\n:3\n:1\n*0\n`))) as FalkorError
    assert.strictEqual(short.reason._tag, "Decode")
    assert.instanceOf(
      thrown(() => CompactReply.parseEnvelope(resp("*4\n*0\n*0\n*0\n*0\n"), "g", "GRAPH.QUERY")),
      FalkorError
    )
  })

  it("returns a SchemaMiss for an unknown schema id (a value, not a throw): the first one of the row", () => {
    const cell = CompactReply.decodeCell(resp("*2\n:8\n*3\n:0\n*1\n:5\n*0\n"), names)
    assert.deepStrictEqual(cell, { _tag: "SchemaMiss", kind: "labels", id: 5 })
    // A node with a known label but an unknown property key, then an unknown label in the next cell.
    const row = CompactReply.decodeRow(
      resp("*2\n*2\n:8\n*3\n:0\n*1\n:0\n*1\n*3\n:9\n:3\n:1\n*2\n:8\n*3\n:1\n*1\n:7\n*0\n"),
      0,
      ["a", "b"],
      names
    )
    assert.deepStrictEqual(row, { _tag: "SchemaMiss", kind: "propertyKeys", id: 9 })
    assert.isTrue(CompactReply.isSchemaMiss(row))
  })

  it("turns both version-mismatch shapes into VersionMismatch with the server version", () => {
    for (const text of ["*2\n-version mismatch\n:2394787923\n", "*2\n-ERR invalid graph version\n:12\n"]) {
      const e = thrown(() => CompactReply.parseEnvelope(resp(text), "g", "GRAPH.QUERY")) as FalkorError
      const reason = e.reason
      assert.strictEqual(reason._tag, "VersionMismatch")
      const version = reason._tag === "VersionMismatch" ? reason.currentVersion : undefined
      assert.isTrue(version === 2394787923 || version === 12)
    }
  })

  it("surfaces a legacy trailing error element as the server error", () => {
    const e = thrown(() =>
      CompactReply.parseEnvelope(resp("*3\n*0\n*0\n-Division by zero\n"), "g", "GRAPH.QUERY")
    ) as FalkorError
    assert.strictEqual(serverMessageOf(e), "Division by zero")
  })

  it("decodes RESP3 nulls and native double vector elements (resp3 recording)", () => {
    const s = loadScenarios("falkordb-4.18.11").find((x) => x.scenario === "resp3")!
    const e = s.exchanges.find(
      (x) => x.request[2]?.startsWith("RETURN vecf32([1.0/0") && x.request.includes("--compact")
    )!
    const [[v, empty]] = rowsOf(decodeReply(e.reply_base64))
    assert.deepStrictEqual(Array.from(v as Float32Array).slice(0, 3), [Infinity, -Infinity, Math.fround(0.1)])
    assert.strictEqual((empty as Float32Array).length, 0)
    assert.strictEqual(cellKnown([1, null], names), null)
  })

  it("reads verbose schema procedure replies", () => {
    const reply = resp("*3\n*1\n$5\nlabel\n*2\n*1\n$6\nPerson\n*1\n$5\nMovie\n*1\n$19\nCached execution: 0\n")
    assert.deepStrictEqual(CompactReply.parseNameList(reply, "g", "GRAPH.RO_QUERY"), ["Person", "Movie"])
  })
})
