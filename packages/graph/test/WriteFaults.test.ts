/**
 * Graph writes under faults, against a real FalkorDB of the test's own (the module loaded,
 * `--appendonly yes --appendfsync always`, so an acknowledged write is on disk before its
 * reply): fibers run `CREATE (:W {id})` queries, each with an id of its own, while the server is
 * killed with SIGKILL and restarted on the same port and directory (the append-only file is
 * replayed); the writes go on. Then the ledger (redis/test/fixtures/Ledger.ts) is checked
 * against the nodes the server holds: every acknowledged write is there, none is there twice,
 * nothing reported as not run ran, and every failed call settled with a typed reason whose
 * `mayHaveRun` says which. The same with the client's connections killed (`CLIENT KILL`) under
 * the writes, the server alive: there a CREATE reported as may-have-run often did run, and still
 * runs once. Over the default multiplexed layer, pooled and single. And a server stopped
 * (SIGSTOP) under writes with a client timeout: each call says it may still run, and each runs
 * exactly once when the server goes on. Runs where the run has a FalkorDB module (the global
 * setup started one: FALKORDB_MODULE_VERSION).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { checkHeld, type Write } from "../../redis/test/fixtures/Ledger.ts"
import { assertMatrixServer } from "../../redis/test/fixtures/Matrix.ts"
import { until } from "../../redis/test/fixtures/Until.ts"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { FalkorError } from "../src/FalkorError.ts"
import type { Graph } from "../src/Graph.ts"

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

/**
 * `FIBERS` fibers run `CREATE (:W {id, phase})` back to back until stopped, each write recorded.
 * The waits are bounded well inside the test's own timeout and say what they saw when they give
 * up (a write stuck in flight is named with its age), so a slow or stuck run fails with an
 * account rather than with the runner's timeout.
 */
const writeBurst = (graph: Graph) =>
  Effect.gen(function* () {
    const writes: Array<Write> = []
    const started = performance.now()
    const timeline: Array<string> = []
    /** Each fiber's call in flight: its write and when it was issued. */
    const inFlight = new Map<number, { readonly id: string; readonly at: number }>()
    const state = { phase: 0, stopped: false }
    const mark = (event: string) => timeline.push(`${event} at ${Math.round(performance.now() - started)} ms`)
    const fiber = yield* Effect.forkChild(
      Effect.forEach(
        Array.from({ length: FIBERS }, (_, f) => f),
        (f) =>
          Effect.gen(function* () {
            // No pause between writes: each fiber always has one in flight, so a fault meets some.
            for (let i = 0; !state.stopped; i++) {
              const write: Write = { id: `${f}-${i}`, amount: 1, phase: state.phase, outcome: "notSent" }
              writes.push(write)
              inFlight.set(f, { id: write.id, at: performance.now() })
              const created = graph.query("CREATE (:W {id: $id, phase: $phase})", { id: write.id, phase: write.phase })
              const exit = yield* Effect.exit(created)
              inFlight.delete(f)
              record(write, exit)
            }
          }),
        { concurrency: "unbounded" }
      )
    )
    const account = () => {
      const now = performance.now()
      const outcomes: Record<string, number> = {}
      for (const w of writes)
        outcomes[`phase ${w.phase} ${w.outcome}`] = (outcomes[`phase ${w.phase} ${w.outcome}`] ?? 0) + 1
      const waiting = [...inFlight.values()].map((c) => `${c.id} for ${Math.round(now - c.at)} ms`)
      return `outcomes ${JSON.stringify(outcomes)}; in flight: ${waiting.join(", ") || "none"}; ${timeline.join(", ")}`
    }
    return {
      writes,
      mark: (event: string) => Effect.sync(() => mark(event)),
      phase: (phase: number) => Effect.sync(() => void (state.phase = phase)),
      /**
       * Until `ACKS_PER_PHASE` writes issued in `phase` were acknowledged: bounded (about 15 s,
       * where a healthy run needs well under one), and ended early by a writer that failed.
       */
      acknowledged: (phase: number, when: string) =>
        Effect.gen(function* () {
          for (let attempt = 0; attempt < 1500; attempt++) {
            if (writes.filter((w) => w.phase === phase && w.outcome === "ack").length >= ACKS_PER_PHASE) {
              mark(`${ACKS_PER_PHASE} acknowledged ${when}`)
              return
            }
            // A writer's assertion (an unexpected reason) ended the burst: report that.
            if (fiber.pollUnsafe() !== undefined) yield* Fiber.join(fiber)
            yield* Effect.sleep(10)
          }
          assert.fail(`gave up waiting until ${ACKS_PER_PHASE} writes were acknowledged ${when}: ${account()}`)
        }),
      account,
      /** Stops the writers: each finishes its call in flight (bounded: a stuck call is named). */
      stop: Effect.suspend(() => {
        state.stopped = true
        return Fiber.join(fiber).pipe(
          Effect.timeoutOrElse({
            duration: "15 seconds",
            orElse: () => Effect.sync(() => assert.fail(`the writers did not stop: ${account()}`))
          })
        )
      })
    }
  })

/** How many `:W` nodes the graph holds per id. */
const heldIds = (graph: Graph) =>
  Effect.map(graph.roQuery("MATCH (w:W) RETURN w.id AS id", {}, { clientTimeout: "10 seconds" }), (result) => {
    const held = new Map<string, number>()
    for (const row of result.rows) {
      const id = row.get("id") as string
      held.set(id, (held.get(id) ?? 0) + 1)
    }
    return held
  })

/**
 * The ledger against the graph: held ids were acknowledged or may-have-run, each held once, no
 * acknowledged write lost; the fault met writes in flight (some calls failed, each typed).
 */
const checkLedger = (
  label: string,
  server: Embedded.EmbeddedServer["Service"],
  writes: ReadonlyArray<Write>,
  held: ReadonlyMap<string, number>,
  account: string
) => {
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
  const on = `FalkorDB ${server.falkordb?.version} on ${assertMatrixServer(server.server)}`
  console.log(`graph write ledger ${label} (${on}): ${JSON.stringify(figures)}; ${account}`)
  const lost = checkHeld(`graph ${label}`, writes, held)
  assert.deepStrictEqual(
    lost.map((w) => w.id),
    [],
    `${label}: acknowledged writes missing`
  )
  assert.isAbove(figures.unknown + figures.refused + figures.notSent, 0, `${label}: the fault met no write in flight`)
  assert.isAtLeast(figures.acked, 2 * ACKS_PER_PHASE)
  return figures
}

const strategies = [
  { name: "multiplexed", options: {} },
  { name: "pooled", options: { strategy: "pooled", size: 4 } },
  { name: "single", options: { strategy: "single" } }
] as const

/** A client of one strategy (the default layer for "multiplexed") on `url`, reconnecting quickly. */
const clientOf = (url: string, options: (typeof strategies)[number]["options"]) =>
  Layer.fresh(FalkorDB.layer({ url, reconnect: { baseDelay: 20, maxDelay: 200 }, ...options }))

describe.skipIf(!moduleVersion)("graph writes under faults (a real FalkorDB killed, restarted, stopped)", () => {
  for (const { name, options } of strategies) {
    it.live(
      `${name}: kill -9 and a restart from the append-only file: every acknowledged CREATE survives, none runs twice, every call says whether it may have run`,
      () =>
        Effect.gen(function* () {
          // appendfsync always: an acknowledged write is on disk before its reply, so none may be lost.
          const server = yield* Embedded.make({
            requireModule: true,
            startTimeout: "20 seconds",
            args: ["--appendonly", "yes", "--appendfsync", "always"]
          })
          yield* Effect.gen(function* () {
            const graph = (yield* FalkorDB.FalkorDB).graph(`faults-${name}`)
            const burst = yield* writeBurst(graph)
            yield* burst.acknowledged(0, "before the kill")
            yield* server.kill
            yield* burst.mark("killed")
            yield* burst.phase(1)
            yield* Effect.sleep(100)
            yield* server.restart
            yield* burst.mark("restarted")
            yield* burst.phase(2)
            yield* burst.acknowledged(2, "after the restart")
            yield* burst.stop
            yield* burst.mark("stopped")
            checkLedger(`kill -9 ${name}`, server, burst.writes, yield* heldIds(graph), burst.account())
          }).pipe(Effect.provide(clientOf(server.url, options)))
        })
    )

    it.live(
      `${name}: connections killed (CLIENT KILL) under writes: a CREATE that may have run is never sent again`,
      () =>
        Effect.gen(function* () {
          const server = yield* Embedded.make({ requireModule: true, startTimeout: "30 seconds" })
          const admin = yield* RedisConnection.makeSingle({ url: server.url, clientName: "admin" })
          yield* Effect.gen(function* () {
            const graph = (yield* FalkorDB.FalkorDB).graph(`kills-${name}`)
            const burst = yield* writeBurst(graph)
            yield* burst.acknowledged(0, "before the kills")
            yield* burst.phase(1)
            for (let round = 0; round < 10; round++) {
              yield* admin.execute(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
              yield* Effect.sleep(20)
            }
            yield* burst.phase(2)
            yield* burst.acknowledged(2, "after the kills")
            yield* burst.stop
            checkLedger(`CLIENT KILL ${name}`, server, burst.writes, yield* heldIds(graph), burst.account())
          }).pipe(Effect.provide(clientOf(server.url, options)))
        })
    )
  }

  it.live("a stopped server: client timeouts say the CREATE may still run, and each of them does run once", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ requireModule: true, startTimeout: "30 seconds" })
      assertMatrixServer(server.server)
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
