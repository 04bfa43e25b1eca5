/**
 * Graph writes under faults, against a real FalkorDB of the test's own (the module loaded,
 * `--appendonly yes --appendfsync always`, so an acknowledged write is on disk before its
 * reply): fibers run `CREATE (:W {id})` queries, each with an id of its own, while the server is
 * killed with SIGKILL and restarted on the same port and directory (the append-only file is
 * replayed); the writes go on. Then the ledger (redis/test/fixtures/Ledger.ts) is checked
 * against the nodes the server holds: every acknowledged write is there, none is there twice,
 * nothing reported as not run ran, and every failed call settled with a typed reason whose
 * `mayHaveRun` says which. Over the default multiplexed layer, pooled and single. And a server
 * stopped (SIGSTOP) under writes with a client timeout: each call says it may still run, and each
 * runs exactly once when the server goes on. Runs where
 * the run has a FalkorDB module (the global setup started one: FALKORDB_MODULE_VERSION).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { checkHeld, type Write } from "../../redis/test/fixtures/Ledger.ts"
import { until } from "../../redis/test/fixtures/Until.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"

const moduleVersion = process.env.FALKORDB_MODULE_VERSION
if (!moduleVersion) {
  console.log(
    "::: graph write faults SKIPPED: no FalkorDB module in this run (the global setup says why; FALKORDB_URL alone cannot be killed)"
  )
}

const FIBERS = 8
/** Acknowledged writes to wait for before the kill, and again after the restart. */
const ACKS_PER_PHASE = 150

/** Where a failed call's reason may come from in this test; anything else fails it. */
const expectedReasons = new Set(["Connection", "Timeout"])

/** Records a settled CREATE: acknowledged, may have run (unknown), refused by the server, or never sent. */
const record = (
  write: Write,
  exit: Exit.Exit<{ readonly statistics: { readonly nodesCreated: number } }, FalkorError>
) => {
  if (Exit.isSuccess(exit)) {
    assert.strictEqual(exit.value.statistics.nodesCreated, 1, `${write.id}: one node per CREATE`)
    write.outcome = "ack"
    return
  }
  const failure = exit.cause.reasons[0]
  assert.strictEqual(failure?._tag, "Fail", `${write.id} ended with ${failure?._tag} instead of a typed error`)
  if (failure?._tag !== "Fail") return
  const error = failure.error
  assert.isTrue(
    expectedReasons.has(error.reason._tag),
    `${write.id}: unexpected ${error.reason._tag}: ${error.message}`
  )
  if (error.mayHaveRun) write.outcome = "unknown"
  else if (error.reason._tag === "Connection" && error.reason.cause.reason._tag === "Reply") write.outcome = "refused"
  else write.outcome = "notSent"
}

const strategies = [
  { name: "multiplexed (the default layer)", options: {} },
  { name: "pooled", options: { strategy: "pooled", size: 4 } },
  { name: "single", options: { strategy: "single" } }
] as const

describe.skipIf(!moduleVersion)("graph writes under faults (a real FalkorDB killed, restarted, stopped)", () => {
  for (const { name, options } of strategies) {
    it.live(
      `${name}: every acknowledged CREATE survives, none runs twice, every call says whether it may have run`,
      () =>
        Effect.gen(function* () {
          const server = yield* Embedded.make({
            requireModule: true,
            startTimeout: "30 seconds",
            args: ["--appendonly", "yes", "--appendfsync", "always"]
          })
          const label = name.split(" ")[0]!
          const { writes, held } = yield* Effect.gen(function* () {
            const db = yield* FalkorDB.FalkorDB
            const graph = db.graph(`faults-${label}`)
            const writes: Array<Write> = []
            let phase = 0
            let stopped = false
            const acked = (p: number) => writes.filter((w) => w.phase === p && w.outcome === "ack").length
            const writers = yield* Effect.forkChild(
              Effect.forEach(
                Array.from({ length: FIBERS }, (_, f) => f),
                (f) =>
                  Effect.gen(function* () {
                    // No pause between writes: each fiber always has one in flight, so the kill meets some.
                    for (let i = 0; !stopped; i++) {
                      const write: Write = { id: `${f}-${i}`, amount: 1, phase, outcome: "notSent" }
                      writes.push(write)
                      record(
                        write,
                        yield* Effect.exit(graph.query("CREATE (:W {id: $id, phase: $phase})", { id: write.id, phase }))
                      )
                    }
                  }),
                { concurrency: "unbounded" }
              )
            )
            yield* until(
              Effect.sync(() => acked(0) >= ACKS_PER_PHASE),
              `${ACKS_PER_PHASE} writes acknowledged before the kill`,
              3000
            )
            yield* server.kill
            phase = 1
            yield* Effect.sleep(100)
            yield* server.restart
            phase = 2
            yield* until(
              Effect.sync(() => acked(2) >= ACKS_PER_PHASE),
              `${ACKS_PER_PHASE} writes acknowledged after the restart`,
              3000
            )
            stopped = true
            yield* Fiber.join(writers)
            const result = yield* graph.roQuery("MATCH (w:W) RETURN w.id AS id")
            const held = new Map<string, number>()
            for (const row of result.rows) {
              const id = row.get("id") as string
              held.set(id, (held.get(id) ?? 0) + 1)
            }
            return { writes, held }
          }).pipe(
            Effect.provide(
              Layer.fresh(FalkorDB.layer({ url: server.url, reconnect: { baseDelay: 20, maxDelay: 200 }, ...options }))
            )
          )
          const count = (outcome: Write["outcome"]) => writes.filter((w) => w.outcome === outcome).length
          const figures = {
            calls: writes.length,
            acked: count("ack"),
            unknown: count("unknown"),
            unknownHeld: writes.filter((w) => w.outcome === "unknown" && held.has(w.id)).length,
            refused: count("refused"),
            notSent: count("notSent"),
            held: held.size
          }
          console.log(`graph write ledger ${label} (FalkorDB ${moduleVersion}): ${JSON.stringify(figures)}`)
          // Held ids were acknowledged or may-have-run, each held once; no acknowledged write lost.
          const lost = checkHeld(`graph ${label}`, writes, held)
          assert.deepStrictEqual(
            lost.map((w) => w.id),
            [],
            "acknowledged writes missing after the restart (appendfsync always)"
          )
          // The kill met writes in flight: some calls failed, each with a typed reason.
          assert.isAbove(figures.unknown + figures.refused + figures.notSent, 0, "the kill met no write in flight")
          assert.isAtLeast(figures.acked, 2 * ACKS_PER_PHASE)
        })
    )
  }

  it.live("a stopped server: client timeouts say the CREATE may still run, and each of them does run once", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ requireModule: true, startTimeout: "30 seconds" })
      yield* Effect.gen(function* () {
        const graph = (yield* FalkorDB.FalkorDB).graph("faults-stopped")
        yield* graph.query("CREATE (:W {id: 'before'})")
        yield* server.signal("SIGSTOP")
        const writes: Array<Write> = Array.from({ length: 16 }, (_, i) => ({
          id: `stopped-${i}`,
          amount: 1,
          phase: 0,
          outcome: "notSent"
        }))
        yield* Effect.forEach(
          writes,
          (write) =>
            Effect.exit(graph.query("CREATE (:W {id: $id})", { id: write.id }, { clientTimeout: "300 millis" })).pipe(
              Effect.map((exit) => record(write, exit))
            ),
          { concurrency: "unbounded" }
        )
        yield* server.signal("SIGCONT")
        // Every call was sent before the server stopped answering: each is "may have run".
        assert.deepStrictEqual(
          writes.map((w) => w.outcome),
          writes.map(() => "unknown")
        )
        // And each did run, once, when the server went on.
        const held = new Map<string, number>()
        yield* until(
          Effect.gen(function* () {
            const result = yield* graph.roQuery("MATCH (w:W) WHERE w.id STARTS WITH 'stopped-' RETURN w.id AS id")
            held.clear()
            for (const row of result.rows)
              held.set(row.get("id") as string, (held.get(row.get("id") as string) ?? 0) + 1)
            return held.size === writes.length
          }),
          "every stopped write ran"
        )
        assert.deepStrictEqual(checkHeld("graph stopped", writes, held), [])
      }).pipe(Effect.provide(Layer.fresh(FalkorDB.layer({ url: server.url }))))
    })
  )
})
