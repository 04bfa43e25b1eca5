/**
 * Smoke test of the one-client-per-process table against the real FalkorDB module: every cell
 * ran in its own process and reported queries and CPU, both clients, both queries. No timing
 * is asserted.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Baseline from "../src/baseline.ts"
import * as GraphIsolated from "../src/graph-isolated.ts"

describe("graph throughput, one client per process", () => {
  it.live(
    "each cell is a child process against the real server; every cell counted queries and CPU",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          // This project hides the module from its plain-Redis suites (FALKORDB_MODULE=""); this
          // table needs it, found the way `pnpm bench` finds it.
          yield* Effect.acquireRelease(
            Effect.sync(() => {
              const hidden = process.env.FALKORDB_MODULE
              delete process.env.FALKORDB_MODULE
              return hidden
            }),
            (hidden) =>
              Effect.sync(() => {
                if (hidden !== undefined) process.env.FALKORDB_MODULE = hidden
              })
          )
          Baseline.beginSection("graph-isolated-test")
          const text = yield* GraphIsolated.run({ runs: 1, seconds: 0.3, warmupSeconds: 0.2, callerCounts: [1, 8] })
          assert.notInclude(text, "Skipped")
          const entries = Baseline.recorded("test").entries
          const cells = entries.filter((e) => e.table === "graph-isolated-test#0")
          assert.deepStrictEqual(
            cells.map((e) => `${e.row} / ${e.column}`).sort(),
            ["RETURN 1", "traversal"]
              .flatMap((query) => [1, 8].map((callers) => `${query} · ${callers}`))
              .flatMap((row) => GraphIsolated.clients.map((c) => `${row} / ${c.column}`))
              .sort()
          )
          // The equal-rate table: the traversal from 8 callers, both clients paced to one rate.
          const paced = entries.filter((e) => e.table === "graph-isolated-test#1")
          assert.deepStrictEqual(paced.map((e) => e.column).sort(), GraphIsolated.clients.map((c) => c.column).sort())
          assert.match(paced[0]!.row, /^traversal · 8 @ \d+\/s$/)
          for (const cell of [...cells, ...paced]) {
            assert.isAbove(cell.opsPerSecond, 0, `${cell.row} / ${cell.column}`)
            assert.isAbove(cell.cpuMicrosPerOp, 0, `${cell.row} / ${cell.column}`)
          }
          assert.include(text, "#### `traversal`")
        })
      ),
    120_000
  )
})
