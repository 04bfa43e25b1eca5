/**
 * A result row that knows its header: values by alias (`row.get("year")`), by position
 * (`row.getAt(0)`) or as a plain object (`row.toObject()`).
 *
 * @since 0.1.0
 */
import { type FalkorMap, type FalkorValue, makeMap } from "./Value.ts"

/**
 * The column aliases of a result, shared by all its rows.
 *
 * @since 0.1.0
 * @category models
 */
export class Header {
  readonly columns: ReadonlyArray<string>
  /**
   * Made on the first lookup by alias (a header is made per query, and many results are never
   * read by alias); not enumerable, so a header compares equal whether it was looked up or not.
   */
  declare private index: ReadonlyMap<string, number> | undefined
  constructor(columns: ReadonlyArray<string>) {
    this.columns = columns
  }
  /** The position of `alias`, or -1. */
  indexOf(alias: string): number {
    let index = this.index
    if (index === undefined) {
      index = new Map(this.columns.map((name, i) => [name, i]))
      Object.defineProperty(this, "index", { value: index })
    }
    return index.get(alias) ?? -1
  }
}

/**
 * One row.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const result = yield* (yield* FalkorDB.FalkorDB).graph("g").roQuery("RETURN 1 AS one, 'x' AS letter")
 *   for (const row of result.rows) {
 *     row.get("one") // 1
 *     row.getAt(1) // "x"
 *     row.toObject() // { one: 1, letter: "x" }
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Row {
  readonly header: Header
  readonly values: ReadonlyArray<FalkorValue>
  constructor(header: Header, values: ReadonlyArray<FalkorValue>) {
    this.header = header
    this.values = values
  }
  /** The column aliases. */
  get columns(): ReadonlyArray<string> {
    return this.header.columns
  }
  /** True when the row has a column named `alias`. */
  has(alias: string): boolean {
    return this.header.indexOf(alias) !== -1
  }
  /** The value of column `alias`; `undefined` when there is no such column (a null value is `null`). */
  get(alias: string): FalkorValue | undefined {
    const i = this.header.indexOf(alias)
    return i === -1 ? undefined : this.values[i]
  }
  /** The value at position `index`; `undefined` out of range. */
  getAt(index: number): FalkorValue | undefined {
    return index >= 0 && index < this.values.length ? this.values[index] : undefined
  }
  /** `{ alias: value, … }` in column order. Column names are unique (the server enforces it). */
  toObject(): FalkorMap {
    return makeMap(this.header.columns.map((name, i) => [name, this.values[i]!] as const))
  }
}
