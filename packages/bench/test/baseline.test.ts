import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Baseline from "../src/baseline.ts"

const entry = (row: string, cpuMicrosPerOp: number, opsPerSecond = 1000): Baseline.Entry => ({
  table: "peers#0",
  row,
  column: "ours",
  cpuMicrosPerOp,
  opsPerSecond
})

describe("bench baseline", () => {
  it("compares CPU per op cell by cell, marks what got costlier, lists new and gone cells", () => {
    const then: Baseline.Baseline = {
      machine: "m",
      date: "d",
      entries: [entry("1 caller", 2), entry("64 callers", 1), entry("gone", 1)]
    }
    const now: Baseline.Baseline = {
      machine: "m",
      date: "d2",
      entries: [entry("1 caller", 2.6, 800), entry("64 callers", 0.9, 1100), entry("new", 1)]
    }
    const text = Baseline.compare(then, now)
    assert.include(text, "| peers#0 | 1 caller | ours | 2.00 | 2.60 | 1.30x **costlier** | 0.80x |")
    assert.include(text, "| peers#0 | 64 callers | ours | 1.00 | 0.90 | 0.90x | 1.10x |")
    assert.include(text, "| peers#0 | new | ours | — | 1.00 | new | — |")
    assert.include(text, "| peers#0 | gone | ours | 1.00 | — | gone | — |")
    assert.include(text, "2 cells compared; 1 cost more")
  })

  it("a file that is not a baseline is refused, naming it", () => {
    const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-baseline-")), "not.json")
    Fs.writeFileSync(file, JSON.stringify({ rows: [] }))
    assert.throws(() => Baseline.read(file), /not a bench baseline/)
    Fs.rmSync(Path.dirname(file), { recursive: true })
  })
})
