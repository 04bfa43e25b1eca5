/**
 * A regression guard for CPU per operation: every cell that `Harness.measure` runs is recorded
 * (its section, row and column, median client CPU µs per op and median rate). `--save FILE`
 * writes them as JSON; `--compare FILE` prints each cell's CPU-per-op ratio against a saved
 * baseline, so a change that costs CPU is seen before it lands. Ratios, not thresholds: the
 * guard reports, a person judges (throughput varies ±40% between runs on a shared machine, CPU
 * per op much less).
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"

/**
 * One measured cell.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  /** `section#n`: the bench section (`peers`, `graph-throughput`, …) and which table of it. */
  readonly table: string
  readonly row: string
  readonly column: string
  readonly cpuMicrosPerOp: number
  readonly opsPerSecond: number
}

/**
 * A saved run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Baseline {
  readonly machine: string
  readonly date: string
  readonly entries: ReadonlyArray<Entry>
}

let section = "bench"
const tablesInSection = new Map<string, number>()
const entries: Array<Entry> = []

/**
 * Names the section whose tables are measured next (main.ts calls it before each bench).
 *
 * @since 0.1.0
 * @category recording
 */
export const beginSection = (name: string): void => {
  section = name
}

/**
 * Starts a table of the current section; returns its key (`section#n`).
 *
 * @since 0.1.0
 * @category recording
 */
export const beginTable = (): string => {
  const n = tablesInSection.get(section) ?? 0
  tablesInSection.set(section, n + 1)
  return `${section}#${n}`
}

/**
 * Records one cell of a table.
 *
 * @since 0.1.0
 * @category recording
 */
export const record = (entry: Entry): void => {
  entries.push(entry)
}

/**
 * What was recorded so far.
 *
 * @since 0.1.0
 * @category recording
 */
export const recorded = (machine: string): Baseline => ({
  machine,
  date: new Date().toISOString(),
  entries: [...entries]
})

/**
 * Reads a baseline written by `--save`; a file that is not one fails with a message naming it.
 *
 * @since 0.1.0
 * @category files
 */
export const read = (file: string): Baseline => {
  const parsed = JSON.parse(Fs.readFileSync(file, "utf8")) as Partial<Baseline>
  if (!Array.isArray(parsed.entries)) throw new Error(`${file} is not a bench baseline (written by --save): no entries`)
  return parsed as Baseline
}

const key = (entry: Entry) => `${entry.table}\u0000${entry.row}\u0000${entry.column}`

/**
 * The comparison table: for every cell in both runs, the CPU µs/op then and now and their
 * ratio (now ÷ then: above 1 costs more), and the rate ratio; cells in one run only are listed.
 * Cells whose CPU per op grew by more than `flagAbove` (default 1.15) are marked.
 *
 * @since 0.1.0
 * @category comparison
 */
export const compare = (baseline: Baseline, now: Baseline, flagAbove = 1.15): string => {
  const before = new Map(baseline.entries.map((entry) => [key(entry), entry]))
  const lines = [
    `### CPU per operation against the baseline of ${baseline.date} (${baseline.machine})`,
    "",
    "| table | row | column | CPU µs/op then | now | now ÷ then | rate now ÷ then |",
    "|---|---|---|---:|---:|---:|---:|"
  ]
  let costlier = 0
  let compared = 0
  const seen = new Set<string>()
  for (const entry of now.entries) {
    const k = key(entry)
    seen.add(k)
    const then = before.get(k)
    if (then === undefined) {
      lines.push(
        `| ${entry.table} | ${entry.row} | ${entry.column} | — | ${entry.cpuMicrosPerOp.toFixed(2)} | new | — |`
      )
      continue
    }
    compared++
    const cpu = entry.cpuMicrosPerOp / then.cpuMicrosPerOp
    const rate = entry.opsPerSecond / then.opsPerSecond
    const mark = cpu > flagAbove ? " **costlier**" : ""
    if (mark !== "") costlier++
    lines.push(
      `| ${entry.table} | ${entry.row} | ${entry.column} | ${then.cpuMicrosPerOp.toFixed(2)} | ${entry.cpuMicrosPerOp.toFixed(2)} | ${cpu.toFixed(2)}x${mark} | ${rate.toFixed(2)}x |`
    )
  }
  for (const entry of baseline.entries) {
    if (!seen.has(key(entry))) {
      lines.push(
        `| ${entry.table} | ${entry.row} | ${entry.column} | ${entry.cpuMicrosPerOp.toFixed(2)} | — | gone | — |`
      )
    }
  }
  lines.push(
    "",
    `${compared} cells compared; ${costlier} cost more than ${flagAbove}× the baseline's CPU per op. Run both on a quiet machine; repeat a flagged cell before trusting it.`
  )
  return lines.join("\n")
}
