import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as FalkorDB from "../src/FalkorDB.ts"
import { GraphSchema, procedureText } from "../src/internal/SchemaCache.ts"
import type { Node } from "../src/Value.ts"
import { bulk, nameList, resp, scripted } from "./helpers.ts"

const stats = `*1\n${bulk("Cached execution: 0")}`
/** One row, one column `n`: a node with the given label ids and one property (key id 0). */
const nodeReply = (labelIds: ReadonlyArray<number>): Reply =>
  resp(
    `*3\n*1\n*2\n:1\n$1\nn\n*1\n*1\n*2\n:8\n*3\n:0\n*${labelIds.length}\n${labelIds.map((i) => `:${i}\n`).join("")}*1\n*3\n:0\n:3\n:1\n${stats}`
  )

describe("SchemaCache", () => {
  it.effect("N concurrent decoders that miss share one refresh per kind, and only the missing kinds are fetched", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const conn = scripted((cmd) => {
        if (cmd[2] === "CALL db.labels()") return Effect.as(Deferred.await(gate), nameList("label", ["Person"]))
        if (cmd[2] === "CALL db.propertyKeys()")
          return Effect.as(Deferred.await(gate), nameList("propertyKey", ["age"]))
        return Effect.succeed(nodeReply([0]))
      })
      yield* Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const fibers = yield* Effect.forEach(Array.from({ length: 20 }), () =>
          Effect.forkChild(db.graph("g").roQuery("MATCH (n) RETURN n"))
        )
        // Let every query reach its miss before the refresh replies.
        while (conn.calls.filter((c) => c[2] === "MATCH (n) RETURN n").length < 20) yield* Effect.yieldNow
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        const results = yield* Effect.forEach(fibers, Fiber.join)
        for (const r of results) {
          const n = r.rows[0]!.get("n") as Node
          assert.deepStrictEqual(n.labels, ["Person"])
          assert.deepStrictEqual(n.properties, { age: 1 })
        }
        const refreshes = conn.calls.filter((c) => String(c[2]).startsWith("CALL db."))
        assert.deepStrictEqual(refreshes, [
          ["GRAPH.RO_QUERY", "g", "CALL db.labels()"],
          ["GRAPH.RO_QUERY", "g", "CALL db.propertyKeys()"]
        ])
        assert.deepStrictEqual(db.graph("g").schema.refreshes, { labels: 1, relationshipTypes: 0, propertyKeys: 1 })
      }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
    })
  )

  it.effect("interrupting the decoder that started a refresh does not cancel it for the others", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const conn = scripted((cmd) => {
        if (cmd[2] === "CALL db.labels()") return Effect.as(Deferred.await(gate), nameList("label", ["Person"]))
        if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["age"]))
        return Effect.succeed(nodeReply([0]))
      })
      yield* Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const first = yield* Effect.forkChild(db.graph("g").roQuery("q"))
        while (!conn.calls.some((c) => c[2] === "CALL db.labels()")) yield* Effect.yieldNow
        const second = yield* Effect.forkChild(db.graph("g").roQuery("q"))
        while (conn.calls.filter((c) => c[2] === "q").length < 2) yield* Effect.yieldNow
        yield* Fiber.interrupt(first)
        yield* Deferred.succeed(gate, undefined)
        const r = yield* Fiber.join(second)
        assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["Person"])
        assert.strictEqual(conn.calls.filter((c) => c[2] === "CALL db.labels()").length, 1)
      }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
    })
  )

  it.effect("fetches only the names beyond those known (YIELD … SKIP n)", () => {
    let labels = ["A"]
    const conn = scripted((cmd) => {
      if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", labels))
      if (cmd[2] === "CALL db.labels() YIELD label RETURN label SKIP 1")
        return Effect.succeed(nameList("label", labels.slice(1)))
      if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
      return Effect.succeed(nodeReply(cmd[2] === "one" ? [0] : [0, 1]))
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.graph("g").query("one")
      labels = ["A", "B"]
      const r = yield* db.graph("g").query("two")
      assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["A", "B"])
      assert.isTrue(conn.calls.some((c) => c[2] === "CALL db.labels() YIELD label RETURN label SKIP 1"))
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("a miss in a later row keeps the rows decoded before it, in order, and the header equal", () => {
    let labels = ["A"]
    const node = (labelId: number) => `*1\n*2\n:8\n*3\n:${labelId}\n*1\n:${labelId}\n*1\n*3\n:0\n:3\n:${labelId}\n`
    const rows = [0, 0, 1, 0]
    const reply = () => resp(`*3\n*1\n*2\n:1\n$1\nn\n*${rows.length}\n${rows.map(node).join("")}${stats}`)
    const conn = scripted((cmd) => {
      if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", labels))
      if (cmd[2] === "CALL db.labels() YIELD label RETURN label SKIP 1")
        return Effect.succeed(nameList("label", labels.slice(1)))
      if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
      return Effect.succeed(reply())
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      // The first query learns "A" only (label 1 is then refreshed: labels grows in between).
      yield* db.graph("g").query("MATCH (n) RETURN n LIMIT 0").pipe(Effect.ignore)
      labels = ["A", "B"]
      const first = yield* db.graph("g").query("q")
      assert.deepStrictEqual(
        first.rows.map((row) => (row.getAt(0) as Node).labels),
        [["A"], ["A"], ["B"], ["A"]]
      )
      assert.deepStrictEqual(
        first.rows.map((row) => (row.getAt(0) as Node).properties),
        [{ p: 0 }, { p: 0 }, { p: 1 }, { p: 0 }]
      )
      // A header looked up by alias equals one that was not.
      const second = yield* db.graph("g").query("q")
      assert.strictEqual(first.rows[3]!.get("n"), first.rows[3]!.getAt(0))
      assert.deepStrictEqual(first, second)
      assert.strictEqual(second.header.indexOf("n"), 0)
      assert.strictEqual(second.header.indexOf("m"), -1)
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("an id the server does not know either fails with UnknownSchemaId, never a placeholder", () => {
    const conn = scripted((cmd) =>
      Effect.succeed(
        cmd[2] === "CALL db.labels()"
          ? nameList("label", ["A"])
          : cmd[2] === "CALL db.propertyKeys()"
            ? nameList("propertyKey", ["p"])
            : nodeReply([3])
      )
    )
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const e = yield* Effect.flip(db.graph("g").query("q"))
      assert.strictEqual(e.reason._tag, "UnknownSchemaId")
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("every Graph of a name on one client shares one cache; own delete clears it", () => {
    let labels = ["Person"]
    const conn = scripted((cmd) => {
      if (cmd[0] === "GRAPH.DELETE") return Effect.succeed("OK")
      if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", labels))
      if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
      return Effect.succeed(nodeReply([0]))
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.graph("g").query("q")
      const again = yield* db.graph("g").query("q")
      assert.deepStrictEqual((again.rows[0]!.get("n") as Node).labels, ["Person"])
      assert.strictEqual(conn.calls.filter((c) => c[2] === "CALL db.labels()").length, 1)
      yield* db.graph("g").delete()
      labels = ["Movie"]
      const after = yield* db.graph("g").query("q")
      assert.deepStrictEqual((after.rows[0]!.get("n") as Node).labels, ["Movie"])
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("copy onto a name clears that name's cache", () => {
    let labels = ["Old"]
    const conn = scripted((cmd) => {
      if (cmd[0] === "GRAPH.COPY") return Effect.succeed(resp("$2\nOK\n"))
      if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", labels))
      if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
      return Effect.succeed(nodeReply([0]))
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.graph("dst").query("q")
      labels = ["New"]
      yield* db.graph("src").copy("dst")
      const r = yield* db.graph("dst").query("q")
      assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["New"])
    }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(conn.layer))
  })

  it.effect("a graph deleted and re-created by someone else is detected through the version check", () => {
    // The server: schema hash and label list; someone else replaces the graph midway.
    let server = { hash: 111, labels: ["Person"], nodeLabel: 0 }
    const conn = scripted((cmd) => {
      if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", server.labels))
      if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
      const version = Number(cmd[cmd.indexOf("version") + 1])
      if (cmd.indexOf("version") === -1) return Effect.die("the version argument is missing")
      // A client that knows nothing sends 0, which matches only an empty schema.
      if (version !== server.hash) return Effect.succeed(resp(`*2\n-version mismatch\n:${server.hash}\n`))
      return Effect.succeed(nodeReply([server.nodeLabel]))
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      const g = db.graph("g")
      const before = yield* g.query("MATCH (n) RETURN n")
      assert.deepStrictEqual((before.rows[0]!.get("n") as Node).labels, ["Person"])
      // Replaced: label id 0 now means Movie. Without the check the cache would say Person.
      server = { hash: 222, labels: ["Movie", "Person"], nodeLabel: 0 }
      const after = yield* g.query("MATCH (n) RETURN n")
      assert.deepStrictEqual((after.rows[0]!.get("n") as Node).labels, ["Movie"])
      assert.strictEqual(g.schema.replacements, 1)
      assert.strictEqual(g.schema.version, 222)
      // Plain growth is not a replacement.
      server = { hash: 333, labels: ["Movie", "Person", "Actor"], nodeLabel: 2 }
      const grown = yield* g.query("MATCH (n) RETURN n")
      assert.deepStrictEqual((grown.rows[0]!.get("n") as Node).labels, ["Actor"])
      assert.strictEqual(g.schema.replacements, 1)
    }).pipe(Effect.provide(FalkorDB.layerFromRedisWith({ schemaVersionCheck: true })), Effect.provide(conn.layer))
  })

  it.effect(
    "a reply whose graph was replaced while it was on the wire is named as the server ran it (version check)",
    () => {
      // Query A runs on the old graph (label 0 = Person) but its reply is held back; meanwhile the
      // graph is replaced (label 0 = Movie) and query B's mismatch re-reads the schema. A must not
      // read its label 0 with the new names.
      let server = { hash: 111, labels: ["Person"], nodeLabel: 0 }
      let hold: Deferred.Deferred<void> | undefined
      const conn = scripted((cmd) => {
        if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", server.labels))
        if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["p"]))
        if (Number(cmd[cmd.indexOf("version") + 1]) !== server.hash) {
          return Effect.succeed(resp(`*2\n-version mismatch\n:${server.hash}\n`))
        }
        const reply = nodeReply([server.nodeLabel])
        const held = hold
        hold = undefined
        return held === undefined ? Effect.succeed(reply) : Effect.as(Deferred.await(held), reply)
      })
      return Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = db.graph("g")
        yield* g.roQuery("MATCH (n) RETURN n")
        const gate = yield* Deferred.make<void>()
        hold = gate
        const a = yield* Effect.forkChild(g.roQuery("MATCH (n) RETURN n"))
        while (hold !== undefined) yield* Effect.yieldNow
        server = { hash: 222, labels: ["Movie", "Person"], nodeLabel: 0 }
        const b = yield* g.roQuery("MATCH (n) RETURN n")
        assert.deepStrictEqual((b.rows[0]!.get("n") as Node).labels, ["Movie"])
        assert.strictEqual(g.schema.replacements, 1)
        yield* Deferred.succeed(gate, undefined)
        const held = yield* Fiber.join(a)
        assert.deepStrictEqual((held.rows[0]!.get("n") as Node).labels, ["Person"])
        // Later queries read the new graph with the new names.
        const later = yield* g.roQuery("MATCH (n) RETURN n")
        assert.deepStrictEqual((later.rows[0]!.get("n") as Node).labels, ["Movie"])
      }).pipe(Effect.provide(FalkorDB.layerFromRedisWith({ schemaVersionCheck: true })), Effect.provide(conn.layer))
    }
  )

  it.effect("N queries in flight that all hit a version mismatch share one re-read of the schema", () => {
    let server = { hash: 111, labels: ["Person"] }
    let gate: Deferred.Deferred<void> | undefined
    const conn = scripted((cmd) => {
      const procedure = cmd[2] === "CALL db.labels()" || cmd[2] === "CALL db.propertyKeys()"
      const answer = (): Reply =>
        cmd[2] === "CALL db.labels()"
          ? nameList("label", server.labels)
          : cmd[2] === "CALL db.propertyKeys()"
            ? nameList("propertyKey", ["p"])
            : Number(cmd[cmd.indexOf("version") + 1]) !== server.hash
              ? resp(`*2\n-version mismatch\n:${server.hash}\n`)
              : nodeReply([server.labels.length - 1])
      return procedure && gate !== undefined
        ? Effect.as(Deferred.await(gate), undefined).pipe(Effect.map(answer))
        : Effect.sync(answer)
    })
    return Effect.gen(function* () {
      const db = yield* FalkorDB.FalkorDB
      yield* db.graph("g").query("MATCH (n) RETURN n")
      const before = { ...db.graph("g").schema.refreshes }
      // The schema grows; 20 queries sent with the old version all get a mismatch.
      server = { hash: 222, labels: ["Person", "Movie"] }
      gate = yield* Deferred.make<void>()
      const fibers = yield* Effect.forEach(Array.from({ length: 20 }), () =>
        Effect.forkChild(db.graph("g").roQuery("MATCH (n) RETURN n"))
      )
      while (conn.calls.filter((c) => c.includes("111")).length < 21) yield* Effect.yieldNow
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach(fibers, Fiber.join)
      for (const r of results) assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["Movie"])
      const after = db.graph("g").schema.refreshes
      // One full re-read of each cached kind, not one per query.
      assert.strictEqual(after.labels - before.labels, 1)
      assert.strictEqual(after.propertyKeys - before.propertyKeys, 1)
      assert.strictEqual(db.graph("g").schema.replacements, 0)
      assert.strictEqual(db.graph("g").schema.version, 222)
    }).pipe(Effect.provide(FalkorDB.layerFromRedisWith({ schemaVersionCheck: true })), Effect.provide(conn.layer))
  })

  it.effect(
    "a changed primary (failover, slot moved) re-validates the cache once before its replies are decoded",
    () => {
      // The old primary named label 0 "Person"; the new one lost that write (asynchronous
      // replication) and a later write made label 0 "Robot".
      let labels = ["Person"]
      let epoch = 0
      const conn = scripted((cmd) => {
        if (cmd[2] === "CALL db.labels()") return Effect.succeed(nameList("label", labels))
        if (cmd[2] === "CALL db.propertyKeys()") return Effect.succeed(nameList("propertyKey", ["age"]))
        return Effect.succeed(nodeReply([0]))
      })
      const service = { ...conn.service, info: { ...conn.service.info, primaryEpoch: () => epoch } }
      return Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const g = db.graph("g")
        assert.deepStrictEqual(((yield* g.roQuery("q")).rows[0]!.get("n") as Node).labels, ["Person"])
        // Same primary: no re-read.
        assert.deepStrictEqual(((yield* g.roQuery("q")).rows[0]!.get("n") as Node).labels, ["Person"])
        assert.strictEqual(g.schema.refreshes.labels, 1)
        epoch = 1
        labels = ["Robot"]
        const results = yield* Effect.forEach(Array.from({ length: 5 }), () => g.roQuery("q"), {
          concurrency: "unbounded"
        })
        for (const r of results) assert.deepStrictEqual((r.rows[0]!.get("n") as Node).labels, ["Robot"])
        assert.strictEqual(g.schema.refreshes.labels, 2, "one re-read for five replies")
        assert.strictEqual(g.schema.replacements, 1)
      }).pipe(Effect.provide(FalkorDB.layerFromRedis), Effect.provide(Layer.succeed(RedisConnection, service)))
    }
  )

  it("a full list that disagrees with the cached prefix marks the graph replaced and drops every kind", () => {
    const schema = new GraphSchema("g", () => Effect.die("not fetched"), Scope.makeUnsafe())
    assert.isFalse(schema.replaceAll("labels", ["A"]))
    assert.isFalse(schema.replaceAll("propertyKeys", ["p"]))
    assert.isFalse(schema.replaceAll("labels", ["A", "B"])) // growth
    assert.isTrue(schema.replaceAll("labels", ["X", "Y"]))
    assert.strictEqual(schema.replacements, 1)
    assert.deepStrictEqual(schema.get("labels"), ["X", "Y"])
    assert.deepStrictEqual(schema.get("propertyKeys"), [])
  })

  it("procedure texts are exactly the recorded ones", () => {
    assert.strictEqual(procedureText("labels", 0), "CALL db.labels()")
    assert.strictEqual(procedureText("relationshipTypes", 0), "CALL db.relationshipTypes()")
    assert.strictEqual(
      procedureText("propertyKeys", 1),
      "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey SKIP 1"
    )
    assert.strictEqual(procedureText("labels", 2), "CALL db.labels() YIELD label RETURN label SKIP 2")
  })
})
