/**
 * Builds FalkorDB `--compact` query replies from plain JavaScript values and the graph
 * value model (`Node`, `Edge`, `Path`, `Point`, `Float32Array`, temporal values), the way
 * a FalkorDB server (C implementation, RESP2) sends them, so that a client's real
 * compact-reply parser can run against scripted data.
 *
 * Labels, relationship types and property keys are replaced by ids from a
 * {@link SchemaTables} that assigns ids in first-use order, as the server does; the same
 * tables answer the schema procedures (`CALL db.labels()` …).
 *
 * JavaScript numbers that are safe integers are sent as integers, every other number as a
 * double (`%.15g`, `inf`, `-inf`, `-nan`); wrap a whole number with {@link double} to send
 * it as a double.
 *
 * @since 0.1.0
 */
import * as Temporal from "@effect-falkordb/graph/Temporal"
import { Edge, type FalkorValue, Node, Path, Point, TypeCode as T } from "@effect-falkordb/graph/Value"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Data from "effect/Data"

/**
 * A number to send as a double even when it is whole (`double(3)` arrives as `3.0`).
 *
 * @since 0.1.0
 * @category models
 */
export class Double {
  readonly _tag = "Double"
  readonly value: number
  constructor(value: number) {
    this.value = value
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const double = (value: number): Double => new Double(value)

/**
 * What can be encoded: the graph value model, `undefined` (as null) and {@link Double}.
 *
 * @since 0.1.0
 * @category models
 */
export type Encodable =
  | FalkorValue
  | undefined
  | Double
  | ReadonlyArray<Encodable>
  | { readonly [key: string]: Encodable }

/**
 * A value that has no compact form (a function, a class instance outside the value model,
 * an integer outside int64, a map or array inside an entity property …).
 *
 * @since 0.1.0
 * @category errors
 */
export class CompactEncodeError extends Data.TaggedError("CompactEncodeError")<{
  readonly path: string
  readonly message: string
}> {}

/**
 * The three id spaces of a graph's schema, assigning ids in first-use order.
 *
 * @since 0.1.0
 * @category models
 */
export class SchemaTables {
  readonly labels: Array<string> = []
  readonly relationshipTypes: Array<string> = []
  readonly propertyKeys: Array<string> = []
  /** The id of `name` in `kind`, assigned now when it is new. */
  id(kind: "labels" | "relationshipTypes" | "propertyKeys", name: string): number {
    const table = this[kind]
    const at = table.indexOf(name)
    if (at !== -1) return at
    table.push(name)
    return table.length - 1
  }
  /** Forgets every name (a deleted graph). */
  clear(): void {
    this.labels.length = 0
    this.relationshipTypes.length = 0
    this.propertyKeys.length = 0
  }
  /** A copy (`GRAPH.COPY`). */
  copy(): SchemaTables {
    const out = new SchemaTables()
    out.labels.push(...this.labels)
    out.relationshipTypes.push(...this.relationshipTypes)
    out.propertyKeys.push(...this.propertyKeys)
    return out
  }
}

const utf8 = new TextEncoder()
const bulk = (text: string): Uint8Array => utf8.encode(text)

/**
 * Formats a double as C's `printf("%.<significant>g")` does, with the server's spellings
 * of the non-finite values (`inf`, `-inf`, and `-nan` for every NaN).
 *
 * @since 0.1.0
 * @category encoding
 */
export const formatDouble = (value: number, significant = 15): string => {
  if (Number.isNaN(value)) return "-nan"
  if (value === Number.POSITIVE_INFINITY) return "inf"
  if (value === Number.NEGATIVE_INFINITY) return "-inf"
  if (value === 0) return Object.is(value, -0) ? "-0" : "0"
  const [mantissa, exponentText] = value.toExponential(significant - 1).split("e") as [string, string]
  const exponent = Number(exponentText)
  const strip = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s)
  if (exponent < -4 || exponent >= significant) {
    const abs = Math.abs(exponent)
    return `${strip(mantissa)}e${exponent < 0 ? "-" : "+"}${abs < 10 ? `0${abs}` : abs}`
  }
  return strip(value.toFixed(Math.max(0, significant - 1 - exponent)))
}

const MIN_INT64 = -(2n ** 63n)
const MAX_INT64 = 2n ** 63n - 1n

const fail = (path: string, message: string): never => {
  throw new CompactEncodeError({ path, message })
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

const integerPayload = (value: number | bigint, path: string): number | bigint => {
  if (typeof value === "bigint" && (value < MIN_INT64 || value > MAX_INT64)) {
    return fail(path, `${value} does not fit a signed 64-bit integer`)
  }
  return value
}

const properties = (props: { readonly [key: string]: FalkorValue }, tables: SchemaTables, path: string): Reply => {
  const out: Array<Reply> = []
  for (const [key, value] of Object.entries(props)) {
    const [code, payload] = encodeTyped(value, tables, `${path}.${key}`, true)
    out.push([tables.id("propertyKeys", key), code, payload])
  }
  return out
}

const nodePayload = (node: Node, tables: SchemaTables, path: string): Reply => {
  // The server lists a node's labels in label-id order, not as written.
  const ids = node.labels.map((label) => tables.id("labels", label)).sort((a, b) => a - b)
  return [integerPayload(node.id, `${path}.id`), ids, properties(node.properties, tables, path)]
}

const edgePayload = (edge: Edge, tables: SchemaTables, path: string): Reply => [
  integerPayload(edge.id, `${path}.id`),
  tables.id("relationshipTypes", edge.relationshipType),
  integerPayload(edge.sourceId, `${path}.sourceId`),
  integerPayload(edge.destinationId, `${path}.destinationId`),
  properties(edge.properties, tables, path)
]

/** `[typeCode, payload]` of a value; `inProperty` applies the server's property rules. */
const encodeTyped = (
  value: Encodable,
  tables: SchemaTables,
  path: string,
  inProperty: boolean
): readonly [number, Reply] => {
  if (value === null || value === undefined) return [T.Null, null]
  switch (typeof value) {
    case "string":
      return [T.String, bulk(value)]
    case "boolean":
      return [T.Boolean, bulk(value ? "true" : "false")]
    case "bigint":
      return [T.Integer, integerPayload(value, path)]
    case "number":
      return Number.isSafeInteger(value) && !Object.is(value, -0)
        ? [T.Integer, value]
        : [T.Double, bulk(formatDouble(value))]
    case "object":
      break
    default:
      return fail(path, `a ${typeof value} has no FalkorDB value`)
  }
  if (value instanceof Double) return [T.Double, bulk(formatDouble(value.value))]
  if (Array.isArray(value)) {
    return [
      T.Array,
      (value as ReadonlyArray<Encodable>).map((item, i) => encodeCell(item, tables, `${path}[${i}]`, inProperty))
    ]
  }
  if (value instanceof Float32Array) {
    // Vector elements carry no type wrapper; RESP2 sends them with 17 significant digits.
    return [T.Vector, Array.from(value, (element) => bulk(formatDouble(element, 17)))]
  }
  if (value instanceof Point) {
    return [T.Point, [bulk(formatDouble(value.latitude)), bulk(formatDouble(value.longitude))]]
  }
  if (value instanceof Temporal.DateTime) return [T.DateTime, value.epochSeconds]
  if (value instanceof Temporal.Date) return [T.Date, value.epochSeconds]
  if (value instanceof Temporal.Time) return [T.Time, value.raw]
  if (value instanceof Temporal.Duration) return [T.Duration, value.seconds]
  if (inProperty) {
    return fail(path, "entity properties hold primitives, points, vectors, temporals or arrays of them only")
  }
  if (value instanceof Node) return [T.Node, nodePayload(value, tables, path)]
  if (value instanceof Edge) return [T.Edge, edgePayload(value, tables, path)]
  if (value instanceof Path) {
    return [
      T.Path,
      [
        [T.Array, value.nodes.map((node, i) => [T.Node, nodePayload(node, tables, `${path}.nodes[${i}]`)])],
        [T.Array, value.edges.map((edge, i) => [T.Edge, edgePayload(edge, tables, `${path}.edges[${i}]`)])]
      ]
    ]
  }
  if (!isPlainObject(value)) {
    return fail(path, `a ${(value as object).constructor?.name ?? "object"} is not a FalkorDB value`)
  }
  const flat: Array<Reply> = []
  for (const [key, item] of Object.entries(value as { readonly [key: string]: Encodable })) {
    flat.push(bulk(key), encodeCell(item, tables, `${path}.${key}`, false))
  }
  return [T.Map, flat]
}

const encodeCell = (value: Encodable, tables: SchemaTables, path: string, inProperty: boolean): Reply => {
  const [code, payload] = encodeTyped(value, tables, path, inProperty)
  return [code, payload]
}

/**
 * Encodes one value as a compact cell `[typeCode, payload]`. Throws `CompactEncodeError`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeValue = (value: Encodable, tables: SchemaTables, path = "$"): Reply =>
  encodeCell(value, tables, path, false)

/**
 * Counters of a statistics block.
 *
 * @since 0.1.0
 * @category models
 */
export interface StatisticsInput {
  readonly labelsAdded?: number | undefined
  readonly labelsRemoved?: number | undefined
  readonly nodesCreated?: number | undefined
  readonly propertiesSet?: number | undefined
  readonly propertiesRemoved?: number | undefined
  readonly relationshipsCreated?: number | undefined
  readonly nodesDeleted?: number | undefined
  readonly relationshipsDeleted?: number | undefined
  readonly indicesCreated?: number | undefined
  readonly indicesDeleted?: number | undefined
  readonly cachedExecution?: boolean | undefined
  /** Default 0.1 ms. */
  readonly executionTimeMs?: number | undefined
}

/** The server's fixed order; zero counters are left out, as the server does. */
const STATISTICS: ReadonlyArray<readonly [keyof StatisticsInput, string]> = [
  ["labelsAdded", "Labels added"],
  ["labelsRemoved", "Labels removed"],
  ["nodesCreated", "Nodes created"],
  ["propertiesSet", "Properties set"],
  ["propertiesRemoved", "Properties removed"],
  ["relationshipsCreated", "Relationships created"],
  ["nodesDeleted", "Nodes deleted"],
  ["relationshipsDeleted", "Relationships deleted"],
  ["indicesCreated", "Indices created"],
  ["indicesDeleted", "Indices deleted"]
]

/**
 * The statistics block: the non-zero counters in the server's order, then
 * `Cached execution` and `Query internal execution time` (always present).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeStatistics = (statistics: StatisticsInput = {}): Reply => {
  const out: Array<Reply> = []
  for (const [field, name] of STATISTICS) {
    const count = statistics[field]
    if (typeof count === "number" && count !== 0) out.push(bulk(`${name}: ${count}`))
  }
  out.push(bulk(`Cached execution: ${statistics.cachedExecution === true ? 1 : 0}`))
  out.push(bulk(`Query internal execution time: ${(statistics.executionTimeMs ?? 0.1).toFixed(6)} milliseconds`))
  return out
}

/**
 * A whole compact reply: `[header, rows, statistics]`, or `[statistics]` when `columns`
 * is `undefined` (a query without `RETURN`). Each row lists its values in column order.
 *
 * @example
 * ```ts
 * import { double, encodeResult, SchemaTables } from "@effect-falkordb/testing/CompactEncoder"
 *
 * // The `--compact` reply a server would send for two rows of (name, score).
 * const reply = encodeResult(
 *   {
 *     columns: ["name", "score"],
 *     rows: [
 *       ["Ada", double(9.5)],
 *       ["Grace", 10]
 *     ]
 *   },
 *   new SchemaTables()
 * )
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeResult = (
  result: {
    readonly columns?: ReadonlyArray<string> | undefined
    readonly rows?: ReadonlyArray<ReadonlyArray<Encodable>> | undefined
    readonly statistics?: StatisticsInput | undefined
  },
  tables: SchemaTables
): Reply => {
  const statistics = encodeStatistics(result.statistics)
  if (result.columns === undefined) return [statistics]
  const columns = result.columns
  const header = columns.map((name) => [1, bulk(name)])
  const rows = (result.rows ?? []).map((row, r) => {
    if (row.length !== columns.length)
      fail(`row ${r}`, `row ${r} has ${row.length} values for ${columns.length} columns`)
    return row.map((value, c) => encodeCell(value, tables, `row ${r}, column "${columns[c]}"`, false))
  })
  return [header, rows, statistics]
}

/**
 * The reply of a schema procedure (`CALL db.labels()` and friends, `SKIP n` applied):
 * compact (`[[1, column]]`, rows `[[2, name]]`) or verbose (`[column]`, rows `[name]`).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeNameList = (column: string, names: ReadonlyArray<string>, compact: boolean): Reply => [
  compact ? [[1, bulk(column)]] : [bulk(column)],
  names.map((name) => (compact ? [[2, bulk(name)]] : [bulk(name)])),
  encodeStatistics()
]
