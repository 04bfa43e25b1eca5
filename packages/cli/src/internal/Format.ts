// How the CLI prints results: an aligned table, JSON lines or CSV; plans as an indented tree.
import type { PlanOperation, QueryResult } from "@effect-falkordb/graph/Graph"

/** JSON of a value: bigints as numbers when exact, else as strings; vectors as arrays. */
const replacer = (_key: string, value: unknown): unknown => {
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
  if (value instanceof Float32Array) return Array.from(value)
  return value
}

/** A value as JSON text. */
export const json = (value: unknown): string => JSON.stringify(value, replacer) ?? "null"

/** A cell as text: strings as they are, everything else as JSON. */
const cell = (value: unknown): string => (typeof value === "string" ? value : json(value))

const rowsOf = (result: QueryResult): ReadonlyArray<ReadonlyArray<unknown>> =>
  result.rows.map((row) => result.columns.map((_, i) => row.getAt(i)))

/** A table with a header, a rule and left-aligned columns; an empty result prints its header. */
export const table = (result: QueryResult): string => {
  const columns = result.columns
  if (columns.length === 0) return ""
  const body = rowsOf(result).map((row) => row.map((v) => cell(v).replace(/\r?\n/g, "\\n")))
  const widths = columns.map((c, i) => Math.max(c.length, ...body.map((row) => row[i]!.length)))
  const line = (values: ReadonlyArray<string>) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join(" | ")
      .trimEnd()
  return [line(columns), widths.map((w) => "-".repeat(w)).join("-+-"), ...body.map(line)].join("\n")
}

/** One JSON object per row (JSON lines), keyed by column. */
export const jsonLines = (result: QueryResult): string => result.rows.map((row) => json(row.toObject())).join("\n")

const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text)

/** RFC 4180 CSV with a header row; null is an empty field. */
export const csv = (result: QueryResult): string =>
  [
    result.columns.map(csvField).join(","),
    ...rowsOf(result).map((row) => row.map((v) => (v === null ? "" : csvField(cell(v)))).join(","))
  ].join("\n")

/** The statistics worth a line after a write (`Nodes created: 3, …`), or `undefined` when none. */
export const statistics = (result: QueryResult): string | undefined => {
  const parts = result.statistics.entries
    .filter(([name]) => name !== "Cached execution" && name !== "Query internal execution time")
    .map(([name, value]) => `${name}: ${value}`)
  const time = result.statistics.executionTimeMs
  if (parts.length === 0 && time === undefined) return undefined
  return [...parts, ...(time === undefined ? [] : [`time: ${time} ms`])].join(", ")
}

/** A plan as an indented tree; a profile adds records and time to each operation. */
export const plan = (roots: ReadonlyArray<PlanOperation>): string => {
  const lines: Array<string> = []
  const visit = (op: PlanOperation, depth: number) => {
    const details = op.details === undefined ? "" : ` | ${op.details}`
    const measured =
      op.recordsProduced === undefined && op.executionTimeMs === undefined
        ? ""
        : ` (records: ${op.recordsProduced ?? "?"}, time: ${op.executionTimeMs ?? "?"} ms)`
    lines.push(`${"  ".repeat(depth)}${op.name}${details}${measured}`)
    for (const child of op.children) visit(child, depth + 1)
  }
  for (const root of roots) visit(root, 0)
  return lines.join("\n")
}

/** Bytes as `12.3 MB`. */
export const bytes = (n: number): string => {
  if (n < 1000) return `${n} B`
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} kB`
  if (n < 1_000_000_000) return `${(n / 1_000_000).toFixed(1)} MB`
  return `${(n / 1_000_000_000).toFixed(2)} GB`
}

/** A progress bar line of `width` cells for `done` of `total`. */
export const bar = (done: number, total: number, width = 30): string => {
  const ratio = total <= 0 ? 1 : Math.min(1, done / total)
  const filled = Math.round(ratio * width)
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${Math.floor(ratio * 100)
    .toString()
    .padStart(3)}%`
}
