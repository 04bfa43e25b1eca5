// Points, vectors and temporal values as parameters. FalkorDB's `CYPHER` prefix takes
// literals only (recorded: `point(…)`, `vecf32(…)`, `date(…)` as parameter values fail with
// `Failed to parse query parameter`), so such a value travels in a plain form the server's
// constructor accepts — a map, a list, ISO text — and the query wraps the placeholder in that
// constructor (`point($p0)`), which the `cypher` template writes itself.
import type * as Temporal from "../Temporal.ts"
import * as TemporalValues from "../Temporal.ts"
import { Point } from "../Value.ts"

/** The values that travel in plain form and are rebuilt by a constructor in the query. */
export type TypedValue = Point | Float32Array | Temporal.Temporal

/** The plain form of a typed value. */
export type PlainForm = string | ReadonlyArray<number> | { readonly latitude: number; readonly longitude: number }

const pad = (n: number, width: number) => String(Math.abs(n)).padStart(width, "0")

/** ISO `YYYY-MM-DD` (zero-padded year, unlike the server's own rendering of year 1). */
const isoDate = (epochSeconds: number): string => {
  const d = new globalThis.Date(epochSeconds * 1000)
  const y = d.getUTCFullYear()
  return `${y < 0 ? "-" : ""}${pad(y, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`
}

/** `[constructor, plain form]` of a typed value, or `undefined` for anything else. */
export const typedForm = (value: unknown): readonly [string, PlainForm] | undefined => {
  if (value instanceof Float32Array) return ["vecf32", Array.from(value)]
  if (value instanceof Point) return ["point", { latitude: value.latitude, longitude: value.longitude }]
  if (value instanceof TemporalValues.Date) return ["date", isoDate(value.epochSeconds)]
  if (value instanceof TemporalValues.DateTime) {
    const t = value.toString()
    return ["localdatetime", `${isoDate(value.epochSeconds)}${t.slice(t.indexOf("T"))}`]
  }
  if (value instanceof TemporalValues.Time) return ["localtime", value.toString()]
  // Whole seconds, the only thing a server duration carries (`PT-3600S` works: a minus inside).
  if (value instanceof TemporalValues.Duration) return ["duration", `PT${value.seconds}S`]
  return undefined
}
