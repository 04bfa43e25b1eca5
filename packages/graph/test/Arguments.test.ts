// What the caller hands the client: graph names, parameters (interfaces, undefined, cycles),
// the client's waiting rule, and exact text both ways (a leading U+FEFF survives every path).
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { cypher, type ParameterValue } from "../src/Cypher.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { Node } from "../src/Value.ts"
import { scripted } from "./helpers.ts"

const utf8 = new TextEncoder()
const b = (s: string) => utf8.encode(s)
const stats: Reply = [b("Cached execution: 0"), b("Query internal execution time: 0.1 milliseconds")]
const okStats: Reply = [stats]

const run = <A, E>(
  handler: (command: ReadonlyArray<string>) => Reply,
  use: (db: FalkorDB.FalkorDB["Service"]) => Effect.Effect<A, E, FalkorDB.FalkorDB>
) => {
  const conn = scripted((command) => Effect.succeed(handler(command)))
  return Effect.gen(function* () {
    const db = yield* FalkorDB.FalkorDB
    return yield* use(db)
  }).pipe(
    Effect.provide(FalkorDB.layerFromRedis),
    Effect.provide(conn.layer),
    Effect.map((a) => ({ result: a, calls: conn.calls, options: conn.options }))
  )
}

describe("graph names", () => {
  it.effect("a name that is not a non-empty string is InvalidArgument, and nothing is sent", () =>
    Effect.gen(function* () {
      const { result, calls } = yield* run(
        () => okStats,
        (db) =>
          Effect.forEach([undefined, "", 42, null] as ReadonlyArray<unknown>, (name) =>
            Effect.flip(db.graph(name as string).query("RETURN 1"))
          )
      )
      for (const e of result) {
        assert.strictEqual(e.reason._tag, "InvalidArgument")
        assert.deepInclude(e.reason, { argument: "graph name", serverMessage: undefined })
        assert.include(e.message, "a graph name is a non-empty string")
        assert.isFalse(e.isRetryable)
      }
      assert.deepStrictEqual(
        result.map((e) => (e.reason._tag === "InvalidArgument" ? e.reason.detail : "")),
        [
          "a graph name is a non-empty string (got undefined)",
          "a graph name is a non-empty string (got an empty string)",
          "a graph name is a non-empty string (got number)",
          "a graph name is a non-empty string (got null)"
        ]
      )
      assert.strictEqual(calls.length, 0)
    })
  )

  it.effect("every call of such a handle fails the same way; copy checks its destination", () =>
    Effect.gen(function* () {
      const { result } = yield* run(
        () => okStats,
        (db) =>
          Effect.gen(function* () {
            const bad = db.graph(undefined as unknown as string)
            const errors: Array<FalkorError> = [
              yield* Effect.flip(bad.roQuery("RETURN 1")),
              yield* Effect.flip(bad.delete()),
              yield* Effect.flip(bad.explain("RETURN 1")),
              yield* Effect.flip(bad.slowlog()),
              yield* Effect.flip(db.graph("g").copy(""))
            ]
            return errors
          })
      )
      assert.deepStrictEqual(
        result.map((e) => e.reason._tag),
        ["InvalidArgument", "InvalidArgument", "InvalidArgument", "InvalidArgument", "InvalidArgument"]
      )
      assert.deepInclude(result[4]!.reason, { argument: "destination graph name" })
    })
  )
})

describe("the client's waiting rule", () => {
  it.effect("a query never inherits the connection's commandTimeout: no limit unless asked", () =>
    Effect.gen(function* () {
      const { options } = yield* run(
        () => okStats,
        (db) =>
          Effect.gen(function* () {
            const g = db.graph("g")
            yield* g.query("CREATE ()")
            yield* g.roQuery("RETURN 1", undefined, { timeout: 250 })
            yield* g.roQuery("RETURN 1", undefined, { clientTimeout: "2 seconds" })
            yield* g.roQuery("RETURN 1", undefined, { timeout: "1 second", clientTimeout: "3 seconds" })
          })
      )
      const millis = options.map((o) =>
        o?.timeout === undefined ? undefined : Duration.toMillis(Duration.fromInputUnsafe(o.timeout))
      )
      // No server TIMEOUT: no limit. With one: TIMEOUT + 5 s. clientTimeout always wins.
      assert.deepStrictEqual(millis, [Number.POSITIVE_INFINITY, 5250, 2000, 3000])
    })
  )
})

describe("parameters", () => {
  interface Address {
    readonly city: string
  }
  interface User {
    readonly name: string
    readonly tags: ReadonlyArray<string>
    readonly address: Address
    readonly nickname?: string | undefined
  }
  const user: User = { name: "Ann", tags: ["a", "b"], address: { city: "Oslo" }, nickname: undefined }

  it.effect("values typed by an interface are plain data; undefined is sent as null", () =>
    Effect.gen(function* () {
      const { calls } = yield* run(
        () => okStats,
        (db) =>
          Effect.gen(function* () {
            yield* db.graph("g").query("CREATE (:U $user)", { user, missing: undefined })
            yield* db.graph("g").query(cypher`MATCH (u:U {name: ${user.name}}) SET u.address = ${user.address}`)
          })
      )
      assert.strictEqual(
        calls[0]![2],
        "CYPHER `user`={name: 'Ann', tags: ['a', 'b'], address: {city: 'Oslo'}, nickname: null} `missing`=null CREATE (:U $user)"
      )
      assert.strictEqual(
        calls[1]![2],
        "CYPHER `p0`='Ann' `p1`={city: 'Oslo'} MATCH (u:U {name: $p0}) SET u.address = $p1"
      )
    })
  )

  it.effect("a cyclic parameter is InvalidParameter naming the path; nothing is sent", () =>
    Effect.gen(function* () {
      const loop: { name: string; self?: unknown; list: Array<unknown> } = { name: "x", list: [] }
      loop.list.push(1, loop)
      const selfList: Array<unknown> = [1]
      selfList.push([selfList])
      // A value seen twice without a cycle is fine: a tree may repeat a subtree.
      const shared = { k: 1 }
      const { result, calls } = yield* run(
        () => okStats,
        (db) =>
          Effect.gen(function* () {
            const g = db.graph("g")
            const cyclic = yield* Effect.flip(
              g.query("RETURN $m", { m: loop as unknown as { readonly [k: string]: ParameterValue } })
            )
            const nested = yield* Effect.flip(g.query("RETURN $l", { l: selfList as ReadonlyArray<ParameterValue> }))
            yield* g.query("RETURN $a", { a: [shared, shared] })
            return [cyclic, nested]
          })
      )
      assert.deepInclude(result[0]!.reason, { _tag: "InvalidParameter", path: "m.list[1]" })
      assert.include(result[0]!.message, "contains itself")
      assert.deepInclude(result[1]!.reason, { _tag: "InvalidParameter", path: "l[1][0]" })
      assert.deepStrictEqual(
        calls.map((c) => c[2]),
        ["CYPHER `a`=[{k: 1}, {k: 1}] RETURN $a"]
      )
    })
  )

  it("a JS Date or a function is refused by the type (a vector is accepted: it travels as a list)", () => {
    const check = (_: () => unknown) => undefined
    check(() =>
      Effect.gen(function* () {
        const g = (yield* FalkorDB.FalkorDB).graph("g")
        // @ts-expect-error a Date is not plain data
        yield* g.query("RETURN $d", { d: new Date() })
        yield* g.query("RETURN vecf32($v)", { v: new Float32Array(2) })
        // @ts-expect-error a function is not data
        yield* g.query("RETURN $f", { f: () => 1 })
      })
    )
  })
})

describe("exact text: a leading U+FEFF survives every decode path", () => {
  const bom = "\uFEFF"
  const word = `${bom}naïve`

  it.effect("values, column names, map keys, labels, property keys, statistics, errors, lists and plans", () =>
    Effect.gen(function* () {
      const handler = (command: ReadonlyArray<string>): Reply => {
        const [name, , text] = command
        if (name === "GRAPH.RO_QUERY" && text === "CALL db.labels()") {
          return [[b("label")], [[b(`${bom}Label`)]], stats]
        }
        if (name === "GRAPH.RO_QUERY" && text === "CALL db.propertyKeys()") {
          return [[b("propertyKey")], [[b(`${bom}key`)]], stats]
        }
        if (name === "GRAPH.RO_QUERY" && text === "CALL db.relationshipTypes()")
          return [[b("relationshipType")], [], stats]
        if (name === "GRAPH.RO_QUERY" && text?.endsWith("RETURN $s AS s")) {
          // Echo the parameter back, as a value and as a map key.
          const value = text.slice("CYPHER `s`='".length, text.indexOf("' RETURN"))
          return [
            [
              [1, b(`${bom}s`)],
              [1, b("m")],
              [1, b("n")]
            ],
            [
              [
                [2, b(value)],
                [10, [b(value), [3, 1]]],
                [8, [0, [0], [[0, 2, b(value)]]]]
              ]
            ],
            [b(`${bom}Custom statistic: 1`), ...stats]
          ]
        }
        if (name === "GRAPH.QUERY") return new ErrorReply(`${bom}Division by zero`)
        if (name === "GRAPH.LIST") return [b(`${bom}graph`)]
        if (name === "GRAPH.EXPLAIN") return [b(`${bom}Results`), b(`    ${bom}Project`)]
        return new ErrorReply(`ERR unexpected ${name}`)
      }
      const { result } = yield* run(handler, (db) =>
        Effect.gen(function* () {
          const g = db.graph("g")
          const echoed = yield* g.roQuery("RETURN $s AS s", { s: word })
          const failed = yield* Effect.flip(g.query("RETURN 1/0"))
          const graphs = yield* db.list()
          const plan = yield* g.explain("RETURN 1")
          return { echoed, failed, graphs, plan }
        })
      )
      const row = result.echoed.rows[0]!
      assert.deepStrictEqual(result.echoed.columns, [`${bom}s`, "m", "n"])
      assert.strictEqual(row.getAt(0), word)
      assert.deepStrictEqual(row.get("m"), { [word]: 1 })
      const node = row.get("n") as Node
      assert.deepStrictEqual(node.labels, [`${bom}Label`])
      assert.deepStrictEqual(node.properties, { [`${bom}key`]: word })
      assert.deepStrictEqual(result.echoed.statistics.entries[0], [`${bom}Custom statistic`, "1"])
      assert.deepInclude(result.failed.reason, { serverMessage: `${bom}Division by zero` })
      assert.deepStrictEqual(result.graphs, [`${bom}graph`])
      assert.deepStrictEqual(result.plan.lines, [`${bom}Results`, `    ${bom}Project`])
    })
  )
})
