// Constraint helpers end to end over real sockets against the FalkorDB 4.18.11 recordings
// `constraint-lifecycle` and `admin-constraints` (see ./replay.ts).
import { assert, describe, it } from "@effect/vitest"
import { serverMessageOf } from "./helpers.ts"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Constraints from "../src/Constraints.ts"
import { type Command, withReplay } from "./support/replay.ts"

const ro = (g: string, text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]
const q = (g: string, text: string): Command => ["GRAPH.QUERY", g, text, "--compact"]
const constraint = (action: string, g: string, ...rest: Array<string>): Command => [
  "GRAPH.CONSTRAINT",
  action,
  g,
  ...rest
]

const user = { kind: "UNIQUE", label: "User", properties: ["id"] } as const
const dup = { kind: "UNIQUE", label: "Dup", properties: ["k"] } as const
const opt = { kind: "MANDATORY", label: "Opt", properties: ["a"] } as const

describe("Constraints over recorded replies (constraint-lifecycle)", () => {
  const g = "constraint-lifecycle"

  it.live("PENDING, polled through UNDER CONSTRUCTION until OPERATIONAL", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(g, (db) =>
        Effect.gen(function* () {
          const constraints = db.graph(g).constraints
          const pending = yield* constraints.create(user)
          const operational = yield* constraints.awaitOperational(user, { schedule: Schedule.spaced("5 millis") })
          return { pending, operational }
        })
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.sent[0], constraint("CREATE", g, "UNIQUE", "NODE", "User", "PROPERTIES", "1", "id"))
      assert.strictEqual(run.value.pending, "PENDING")
      assert.deepStrictEqual(run.value.operational, {
        kind: "UNIQUE",
        label: "User",
        properties: ["id"],
        entityType: "NODE",
        status: "OPERATIONAL"
      })
      // Four recorded reads say UNDER CONSTRUCTION, the fifth OPERATIONAL.
      assert.deepStrictEqual(
        run.sent.slice(1),
        Array.from({ length: 5 }, () => ro(g, "CALL db.constraints()"))
      )
    })
  )

  it.live("the recorded lifecycle: statuses, a violating write, drop twice, the missing index, FAILED", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const graph = db.graph(g)
            const constraints = Constraints.make(graph, db.connection)
            yield* constraints.create(user)
            const first = yield* constraints.list()
            yield* constraints.list()
            yield* constraints.create(dup)
            yield* constraints.list()
            yield* constraints.list()
            yield* constraints.create(opt)
            const three = yield* constraints.list()
            const violation = yield* Effect.flip(graph.query("CREATE (:User {id: 7, email: 'dup@x'})"))
            yield* constraints.drop(dup)
            const dropAgain = yield* Effect.flip(constraints.drop(dup))
            const noIndex = yield* Effect.flip(
              constraints.create({ kind: "UNIQUE", label: "Nolabel", properties: ["x"] })
            )
            const userDone = yield* constraints.awaitOperational(user)
            const failed = yield* Effect.flip(constraints.awaitOperational(opt))
            return { first, three, violation, dropAgain, noIndex, userDone, failed }
          }),
        {
          // The first four reads are answered as recorded (identity pairs), the fifth with the
          // recorded YIELD variant of the same procedure.
          translations: [
            [ro(g, "CALL db.constraints()"), ro(g, "CALL db.constraints()")],
            [ro(g, "CALL db.constraints()"), ro(g, "CALL db.constraints()")],
            [ro(g, "CALL db.constraints()"), ro(g, "CALL db.constraints()")],
            [ro(g, "CALL db.constraints()"), ro(g, "CALL db.constraints()")],
            [
              ro(g, "CALL db.constraints()"),
              ro(
                g,
                "CALL db.constraints() YIELD type, label, properties, entitytype, status RETURN type, label, properties, entitytype, status"
              )
            ]
          ]
        }
      )
      const v = run.value
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(v.first, [
        { kind: "UNIQUE", label: "User", properties: ["id"], entityType: "NODE", status: "UNDER CONSTRUCTION" }
      ])
      assert.deepStrictEqual(
        v.three.map((c) => `${c.kind} ${c.label} ${c.status}`),
        ["MANDATORY Opt UNDER CONSTRUCTION", "UNIQUE Dup UNDER CONSTRUCTION", "UNIQUE User UNDER CONSTRUCTION"]
      )
      assert.strictEqual(v.violation.reason._tag, "ConstraintViolation")
      assert.strictEqual(serverMessageOf(v.violation), "unique constraint violation on node of type User")
      assert.strictEqual(v.dropAgain.reason._tag, "ConstraintNotFound")
      assert.strictEqual(serverMessageOf(v.dropAgain), "Unable to drop constraint, no such constraint.")
      assert.strictEqual(v.noIndex.reason._tag, "MissingIndex")
      assert.strictEqual(serverMessageOf(v.noIndex), "missing supporting exact-match index")
      assert.include(v.noIndex.hint, "createIndex: true")
      assert.strictEqual(v.userDone.status, "OPERATIONAL")
      assert.strictEqual(v.failed.reason._tag, "ConstraintFailed")
      assert.include(v.failed.message, 'on graph "constraint-lifecycle": the constraint MANDATORY (:Opt {a}) FAILED')
      assert.deepStrictEqual(
        run.sent.filter((c) => c[0] === "GRAPH.CONSTRAINT"),
        [
          constraint("CREATE", g, "UNIQUE", "NODE", "User", "PROPERTIES", "1", "id"),
          constraint("CREATE", g, "UNIQUE", "NODE", "Dup", "PROPERTIES", "1", "k"),
          constraint("CREATE", g, "MANDATORY", "NODE", "Opt", "PROPERTIES", "1", "a"),
          constraint("DROP", g, "UNIQUE", "NODE", "Dup", "PROPERTIES", "1", "k"),
          constraint("DROP", g, "UNIQUE", "NODE", "Dup", "PROPERTIES", "1", "k"),
          constraint("CREATE", g, "UNIQUE", "NODE", "Nolabel", "PROPERTIES", "1", "x")
        ]
      )
    })
  )
})

describe("Constraints over recorded replies (admin-constraints)", () => {
  const g = "admin-constraints"
  const list = ro(g, "CALL db.constraints()")

  it.live("createIndex creates the supporting index after the server asks for it; relationships; violations", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const graph = db.graph(g)
            const constraints = Constraints.make(graph, db.connection)
            const name = { kind: "UNIQUE", label: "P", properties: ["name"] } as const
            const mandatory = { kind: "MANDATORY", label: "P", properties: ["name"] } as const
            const relationship = {
              kind: "MANDATORY",
              label: "K",
              properties: ["w"],
              entityType: "RELATIONSHIP"
            } as const
            const empty = yield* constraints.list()
            yield* constraints.create(mandatory)
            const one = yield* constraints.list()
            const unique = yield* constraints.create({ ...name, createIndex: true })
            const exists = yield* Effect.flip(constraints.create(name))
            yield* constraints.list()
            yield* constraints.create(relationship)
            const three = yield* constraints.list()
            const uniqueViolation = yield* Effect.flip(graph.query("CREATE (:P {name: 'a'})"))
            const mandatoryViolation = yield* Effect.flip(graph.query("CREATE (:P {n: 5})"))
            const bogus = yield* Effect.flip(constraints.create({ ...name, kind: "BOGUS" as "UNIQUE" }))
            yield* constraints.drop(name)
            const dropAgain = yield* Effect.flip(constraints.drop(name))
            yield* constraints.drop(mandatory)
            yield* constraints.drop(relationship)
            const none = yield* constraints.list()
            const onMissingKey = yield* Constraints.make(db.graph(`${g}:missing`), db.connection).create(mandatory)
            return {
              empty,
              one,
              unique,
              exists,
              three,
              uniqueViolation,
              mandatoryViolation,
              bogus,
              dropAgain,
              none,
              onMissingKey
            }
          }),
        // This scenario read db.constraints() through GRAPH.QUERY.
        { translations: [[list, q(g, "CALL db.constraints()"), 5]] }
      )
      const v = run.value
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      assert.deepStrictEqual(v.empty, [])
      assert.deepStrictEqual(
        v.one.map((c) => [c.kind, c.label, c.properties, c.entityType]),
        [["MANDATORY", "P", ["name"], "NODE"]]
      )
      assert.strictEqual(v.unique, "PENDING")
      // The server asked for the index, the client created it and asked again.
      const i = run.sent.findIndex((c) => c[2] === "CREATE INDEX FOR (p:P) ON (p.name)")
      assert.deepStrictEqual(run.sent.slice(i - 1, i + 2), [
        constraint("CREATE", g, "UNIQUE", "NODE", "P", "PROPERTIES", "1", "name"),
        q(g, "CREATE INDEX FOR (p:P) ON (p.name)"),
        constraint("CREATE", g, "UNIQUE", "NODE", "P", "PROPERTIES", "1", "name")
      ])
      assert.strictEqual(v.exists.reason._tag, "ConstraintExists")
      assert.strictEqual(serverMessageOf(v.exists), "Constraint already exists")
      assert.deepStrictEqual(v.three.map((c) => `${c.kind} ${c.entityType} ${c.label}`).sort(), [
        "MANDATORY NODE P",
        "MANDATORY RELATIONSHIP K",
        "UNIQUE NODE P"
      ])
      assert.strictEqual(v.uniqueViolation.reason._tag, "ConstraintViolation")
      assert.strictEqual(v.mandatoryViolation.reason._tag, "ConstraintViolation")
      assert.strictEqual(
        serverMessageOf(v.mandatoryViolation),
        "mandatory constraint violation: node with label P missing property name"
      )
      assert.strictEqual(v.bogus.reason._tag, "InvalidArgument")
      assert.strictEqual(serverMessageOf(v.dropAgain), "Unable to drop constraint, no such constraint.")
      assert.deepStrictEqual(v.none, [])
      assert.strictEqual(v.onMissingKey, "PENDING")
      assert.isFalse(run.sent.some((c) => c.includes("BOGUS")))
    })
  )
})

describe("Indexes and constraints over RESP3 (resp3)", () => {
  const g = "resp3"
  it.live("a vector index and a mandatory constraint, listed with their options, over RESP3", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const graph = db.graph(g)
            yield* graph.indexes.createVector({
              label: "P",
              property: "v",
              dimension: 2,
              similarityFunction: "euclidean"
            })
            const indexes = yield* graph.indexes.list()
            const pending = yield* graph.constraints.create({ kind: "MANDATORY", label: "P", properties: ["name"] })
            const constraints = yield* graph.constraints.list()
            return { indexes, pending, constraints }
          }),
        {
          protocol: 3,
          translations: [
            [
              ro(g, "CALL db.indexes()"),
              q(
                g,
                "CALL db.indexes() YIELD label, properties, types, options, entitytype RETURN label, properties, types, options, entitytype"
              )
            ],
            [
              ro(g, "CALL db.constraints()"),
              q(
                g,
                "CALL db.constraints() YIELD type, label, properties, entitytype RETURN type, label, properties, entitytype"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const [p] = run.value.indexes
      assert.strictEqual(p!.label, "P")
      assert.deepStrictEqual(p!.types, { v: ["VECTOR"] })
      assert.strictEqual(p!.options.v!.dimension, 2)
      assert.strictEqual(p!.options.v!.similarityFunction, "euclidean")
      assert.strictEqual(run.value.pending, "PENDING")
      assert.deepStrictEqual(run.value.constraints, [
        { kind: "MANDATORY", label: "P", properties: ["name"], entityType: "NODE", status: "OPERATIONAL" }
      ])
    })
  )
})
