/**
 * The parser of `--compact` query replies: the envelope (`[header, rows, stats]` or
 * `[stats]`), the statistics, and the values, decoded row by row on demand so a large
 * reply is never turned into a second full copy.
 *
 * Decoding is synchronous. Label, relationship-type and property-key ids are resolved
 * through a `Names` lookup; a row with an id the lookup does not know decodes to a
 * `SchemaMiss` value, which the caller answers by refreshing that kind of name and decoding
 * the row again. A malformed reply throws a `FalkorError` (reason `Decode`).
 *
 * @internal
 */
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import { decodeError, FalkorError, fromServer, VersionMismatch } from "../FalkorError.ts"
import type { Statistics } from "../Graph.ts"
import * as Temporal from "../Temporal.ts"
import { text } from "./Text.ts"
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import { Edge, type FalkorMap, type FalkorValue, Node, Path, Point, TypeCode } from "../Value.ts"

/**
 * The three id spaces of a graph's schema.
 */
export type SchemaKind = "labels" | "relationshipTypes" | "propertyKeys"

/**
 * Resolves schema ids to names; `undefined` when the id is not known (yet).
 */
export type Names = (kind: SchemaKind, id: number) => string | undefined

/**
 * A row that names an id `Names` does not know (yet): returned by `decodeRow` instead of
 * the values, so the caller refreshes `kind` and decodes the row again.
 */
export interface SchemaMiss {
  readonly _tag: "SchemaMiss"
  readonly kind: SchemaKind
  readonly id: number
}

/** True for a decoder's miss. */
export const isSchemaMiss = (u: unknown): u is SchemaMiss =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "SchemaMiss"

/**
 * The envelope of a query reply, rows still undecoded.
 */
export interface Envelope {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Reply>
  readonly statistics: Statistics
}

const malformed = (detail: string, row?: number, column?: string): FalkorError => decodeError(detail, { row, column })

const isArray = (reply: Reply): reply is ReadonlyArray<Reply> => Array.isArray(reply)

/**
 * Parses the statistics array.
 */
export const parseStatistics = (reply: Reply): Statistics => readStatistics(checkStatistics(reply))

/** The statistics lines, checked: an array of strings (all that can be malformed in them). */
const checkStatistics = (reply: Reply): ReadonlyArray<Uint8Array | string> => {
  if (!isArray(reply)) throw malformed("the statistics are not an array")
  for (const item of reply) {
    if (!(item instanceof Uint8Array) && typeof item !== "string") throw malformed("a statistic is not a string")
  }
  return reply as ReadonlyArray<Uint8Array | string>
}

/** The statistics the server sends, in the order of `Field`; matched by their bytes, never decoded. */
const STATISTIC_NAMES = [
  "Labels added",
  "Labels removed",
  "Nodes created",
  "Nodes deleted",
  "Properties set",
  "Properties removed",
  "Relationships created",
  "Relationships deleted",
  "Indices created",
  "Indices deleted",
  "Constraints created",
  "Constraints deleted",
  "Cached execution",
  "Query internal execution time",
  "Graph version"
] as const
const STATISTIC_BYTES = STATISTIC_NAMES.map((name) => Uint8Array.from(name, (c) => c.charCodeAt(0)))

/** The exact powers of ten (up to 1e22 every one is a double without rounding). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, i) => 10 ** i)

/** The index in `STATISTIC_NAMES` of the name `line[0, colon)`, or -1. */
const knownStatistic = (line: Uint8Array, colon: number): number => {
  for (let k = 0; k < STATISTIC_BYTES.length; k++) {
    const name = STATISTIC_BYTES[k]!
    if (name.length !== colon) continue
    let i = 0
    while (i < colon && line[i] === name[i]) i++
    if (i === colon) return k
  }
  return -1
}

/** ASCII bytes `[from, to)` as a string (the caller checked they are ASCII). */
const ascii = (line: Uint8Array, from: number, to: number): string => {
  if (to - from > 16) return decodeUtf8(line.subarray(from, to))
  let out = ""
  for (let i = from; i < to; i++) out += String.fromCharCode(line[i]!)
  return out
}

/**
 * The number `Number(value)` gives for the ASCII bytes `[from, to)` of `value`. Plain decimals
 * of at most 15 significant digits and 22 decimals are read from the bytes: the digits make an
 * exact integer and the power of ten is exact, so the one division is correctly rounded, as
 * `Number` is. Anything else goes to `Number`.
 */
const statisticNumber = (line: Uint8Array, from: number, to: number, value: string): number => {
  let mantissa = 0
  let digits = 0
  let decimals = -1
  for (let i = from; i < to; i++) {
    const c = line[i]!
    if (c >= 48 && c <= 57) {
      if (mantissa !== 0 || c !== 48) digits++
      mantissa = mantissa * 10 + (c - 48)
      if (decimals !== -1) decimals++
    } else if (c === 46 && decimals === -1 && i > from) decimals = 0
    else return Number(value)
  }
  if (from === to || decimals === 0 || digits > 15 || decimals > 22) return Number(value)
  return decimals === -1 ? mantissa : mantissa / POWERS_OF_TEN[decimals]!
}

/**
 * Where `": "` is in an all-ASCII line; -1 when it is not there or a byte is not ASCII (such a
 * line is read as text).
 */
const asciiColon = (line: Uint8Array): number => {
  let colon = -1
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c >= 0x80) return -1
    if (colon === -1 && c === 58 && line[i + 1] === 32) colon = i
  }
  return colon
}

/**
 * Reads checked statistics lines: cannot fail. A line of ASCII bytes (all the server sends) is
 * read from its bytes: the name matched against the known ones, the number parsed without a
 * string in between, as this runs once per query. Counters go to locals and the result is built
 * once with a fixed shape (an object filled by computed keys turns into a slow dictionary).
 */
const readStatistics = (lines: ReadonlyArray<Uint8Array | string>): Statistics => {
  let labelsAdded = 0
  let labelsRemoved = 0
  let nodesCreated = 0
  let nodesDeleted = 0
  let propertiesSet = 0
  let propertiesRemoved = 0
  let relationshipsCreated = 0
  let relationshipsDeleted = 0
  let indicesCreated = 0
  let indicesDeleted = 0
  let constraintsCreated = 0
  let constraintsDeleted = 0
  let cachedExecution = false
  let executionTimeMs: number | undefined
  let graphVersion: number | undefined
  const entries: Array<readonly [string, string]> = new Array(lines.length)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    let known: number
    let value: string
    let number: number
    const colon = typeof line === "string" ? -1 : asciiColon(line)
    if (colon !== -1) {
      const bytes = line as Uint8Array
      // The value is the first token after ": " (a unit may follow).
      let end = colon + 2
      while (end < bytes.length && bytes[end] !== 32) end++
      known = knownStatistic(bytes, colon)
      value = ascii(bytes, colon + 2, end)
      entries[i] = [known === -1 ? ascii(bytes, 0, colon) : STATISTIC_NAMES[known], value]
      if (known === -1) continue
      number = known === 12 ? 0 : statisticNumber(bytes, colon + 2, end, value)
    } else {
      const text_ = text(line)!
      const at = text_.indexOf(": ")
      if (at === -1) {
        // Unknown shape: kept, never fatal.
        entries[i] = [text_, ""]
        continue
      }
      const name = text_.slice(0, at)
      const space = text_.indexOf(" ", at + 2)
      value = space === -1 ? text_.slice(at + 2) : text_.slice(at + 2, space)
      entries[i] = [name, value]
      known = (STATISTIC_NAMES as ReadonlyArray<string>).indexOf(name)
      if (known === -1) continue
      number = known === 12 ? 0 : Number(value)
    }
    switch (known) {
      case 0:
        labelsAdded = number
        break
      case 1:
        labelsRemoved = number
        break
      case 2:
        nodesCreated = number
        break
      case 3:
        nodesDeleted = number
        break
      case 4:
        propertiesSet = number
        break
      case 5:
        propertiesRemoved = number
        break
      case 6:
        relationshipsCreated = number
        break
      case 7:
        relationshipsDeleted = number
        break
      case 8:
        indicesCreated = number
        break
      case 9:
        indicesDeleted = number
        break
      case 10:
        constraintsCreated = number
        break
      case 11:
        constraintsDeleted = number
        break
      case 12:
        cachedExecution = value === "1"
        break
      case 13:
        executionTimeMs = number
        break
      case 14:
        graphVersion = number
        break
    }
  }
  return {
    labelsAdded,
    labelsRemoved,
    nodesCreated,
    nodesDeleted,
    propertiesSet,
    propertiesRemoved,
    relationshipsCreated,
    relationshipsDeleted,
    indicesCreated,
    indicesDeleted,
    constraintsCreated,
    constraintsDeleted,
    cachedExecution,
    executionTimeMs,
    graphVersion,
    entries
  }
}

/**
 * An envelope whose statistics are read when first asked for (a stream of a whole reply never
 * asks). Their shape is checked at once, so a malformed reply still fails where it is parsed.
 */
class LazyEnvelope implements Envelope {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Reply>
  private lines: ReadonlyArray<Uint8Array | string> | undefined
  private read: Statistics | undefined
  constructor(columns: ReadonlyArray<string>, rows: ReadonlyArray<Reply>, statistics: Reply) {
    this.columns = columns
    this.rows = rows
    this.lines = checkStatistics(statistics)
  }
  get statistics(): Statistics {
    if (this.read === undefined) {
      this.read = readStatistics(this.lines!)
      this.lines = undefined
    }
    return this.read
  }
}

const noColumns: ReadonlyArray<string> = []
const noRows: ReadonlyArray<Reply> = []

/**
 * Parses the envelope: `[header, rows, stats]`, `[stats]` for queries without `RETURN`,
 * and the defensive `[header, stats]`. The schema-version mismatch shape
 * `[error, version]` becomes a `VersionMismatch` error; a legacy trailing error element
 * becomes the server error it carries. The statistics are read when first asked for.
 */
export const parseEnvelope = (reply: Reply, graph: string, command: string): Envelope => {
  if (!isArray(reply)) {
    throw malformed(`${command} replied ${describe(reply)}, not an array`)
  }
  const last = reply[reply.length - 1]
  if (
    reply.length === 2 &&
    reply[0] instanceof ErrorReply &&
    (typeof reply[1] === "number" || typeof reply[1] === "bigint")
  ) {
    throw new FalkorError({
      reason: new VersionMismatch({ serverMessage: reply[0].message, graph, command, currentVersion: reply[1] })
    })
  }
  if (last instanceof ErrorReply) throw fromServer(last.message, { graph, command })
  switch (reply.length) {
    case 1:
      return new LazyEnvelope(noColumns, noRows, reply[0]!)
    case 2:
      return new LazyEnvelope(parseHeader(reply[0]!), noRows, reply[1]!)
    case 3: {
      const columns = parseHeader(reply[0]!)
      const rows = reply[1]!
      if (!isArray(rows)) throw malformed("the rows are not an array")
      return new LazyEnvelope(columns, rows, reply[2]!)
    }
    default:
      throw malformed(`a query reply has 1 to 3 elements, this one has ${reply.length}`)
  }
}

/**
 * The column names of a compact (or verbose) header; a malformed one throws `FalkorError`
 * (reason `Decode`), as `parseEnvelope` does.
 */
export const parseHeader = (reply: Reply): ReadonlyArray<string> => {
  if (!isArray(reply)) throw malformed("the header is not an array")
  return reply.map((cell, i) => {
    // Compact cells are [columnType, name]; verbose headers are plain names.
    const name = isArray(cell) ? (cell.length === 2 ? text(cell[1]!) : undefined) : text(cell)
    if (name === undefined) throw malformed(`header cell ${i} is not [type, name]`)
    return name
  })
}

/**
 * The statistics of a `[header, rows, statistics]` reply whose header was already read
 * (`parseHeader`, when it arrived): what `parseEnvelope` makes of the whole reply, without
 * reading the header a second time. A legacy trailing error becomes the server error it carries.
 */
export const parseTrailer = (statistics: Reply, graph: string, command: string): Statistics => {
  if (statistics instanceof ErrorReply) throw fromServer(statistics.message, { graph, command })
  return readStatistics(checkStatistics(statistics))
}

const describe = (reply: Reply): string => {
  if (reply === null) return "null"
  if (reply instanceof Uint8Array) return `the bulk string ${JSON.stringify(decodeUtf8(reply.subarray(0, 40)))}`
  if (typeof reply === "string") return `the simple string ${JSON.stringify(reply.slice(0, 40))}`
  return typeof reply === "object" ? reply.constructor.name : typeof reply
}

/** Where a value sits, for error messages; set per row. */
interface Cursor {
  row: number
  column: string
  /** The first id the lookup did not know, if any: the row is decoded again after a refresh. */
  miss: SchemaMiss | undefined
}

/**
 * Parses a C `%g` double as the server prints it, including `inf`, `-inf`, `nan`, `-nan`.
 */
export const parseDouble = (s: string): number | undefined => {
  switch (s) {
    case "inf":
    case "+inf":
    case "Infinity":
      return Number.POSITIVE_INFINITY
    case "-inf":
    case "-Infinity":
      return Number.NEGATIVE_INFINITY
    case "nan":
    case "-nan":
    case "NaN":
      return Number.NaN
  }
  if (s.length === 0) return undefined
  const n = Number(s)
  return Number.isNaN(n) ? undefined : n
}

const integer = (payload: Reply, what: string, at: Cursor): number | bigint => {
  if (typeof payload === "number" && Number.isInteger(payload)) return payload
  if (typeof payload === "bigint") return payload
  throw malformed(`${what} is not an integer`, at.row, at.column)
}

const schemaId = (payload: Reply, what: string, at: Cursor): number => {
  if (typeof payload === "number" && Number.isSafeInteger(payload) && payload >= 0) return payload
  throw malformed(`${what} is not a schema id`, at.row, at.column)
}

/** The name of an id; an unknown one is noted on the cursor (the row is then discarded) and read as "". */
const lookup = (names: Names, kind: SchemaKind, id: number, at: Cursor): string => {
  const name = names(kind, id)
  if (name !== undefined) return name
  if (at.miss === undefined) at.miss = { _tag: "SchemaMiss", kind, id }
  return ""
}

const temporalSeconds = (payload: Reply, what: string, at: Cursor): number => {
  if (typeof payload === "number" && Number.isSafeInteger(payload)) return payload
  throw malformed(`${what} payload is not a safe integer number of seconds`, at.row, at.column)
}

const decodeProperties = (payload: Reply, names: Names, at: Cursor): FalkorMap => {
  if (!isArray(payload)) throw malformed("entity properties are not an array", at.row, at.column)
  const out: Record<string, FalkorValue> = {}
  for (const triple of payload) {
    if (!isArray(triple) || triple.length !== 3)
      throw malformed("a property is not [keyId, type, value]", at.row, at.column)
    const key = lookup(names, "propertyKeys", schemaId(triple[0]!, "a property key id", at), at)
    const value = decodeTyped(triple[1]!, triple[2]!, names, at)
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
    } else out[key] = value
  }
  return out
}

const decodeNode = (payload: Reply, names: Names, at: Cursor): Node => {
  if (!isArray(payload) || payload.length !== 3)
    throw malformed("a node is not [id, labels, properties]", at.row, at.column)
  const labelIds = payload[1]!
  if (!isArray(labelIds)) throw malformed("node labels are not an array", at.row, at.column)
  const labels = labelIds.map((id) => lookup(names, "labels", schemaId(id, "a label id", at), at))
  return new Node(integer(payload[0]!, "a node id", at), labels, decodeProperties(payload[2]!, names, at))
}

const decodeEdge = (payload: Reply, names: Names, at: Cursor): Edge => {
  if (!isArray(payload) || payload.length !== 5) {
    throw malformed("an edge is not [id, type, source, destination, properties]", at.row, at.column)
  }
  return new Edge(
    integer(payload[0]!, "an edge id", at),
    lookup(names, "relationshipTypes", schemaId(payload[1]!, "a relationship type id", at), at),
    integer(payload[2]!, "an edge source id", at),
    integer(payload[3]!, "an edge destination id", at),
    decodeProperties(payload[4]!, names, at)
  )
}

const pairs = (payload: Reply, expected: number, what: string, at: Cursor): ReadonlyArray<Reply> => {
  if (!isArray(payload)) throw malformed(`${what} is not an array`, at.row, at.column)
  const out: Array<Reply> = []
  for (const pair of payload) {
    if (!isArray(pair) || pair.length !== 2 || pair[0] !== expected) {
      throw malformed(`${what} holds an element that is not [${expected}, …]`, at.row, at.column)
    }
    out.push(pair[1]!)
  }
  return out
}

const decodePath = (payload: Reply, names: Names, at: Cursor): Path => {
  if (!isArray(payload) || payload.length !== 2) throw malformed("a path is not [nodes, edges]", at.row, at.column)
  const nodesPart = payload[0]!
  const edgesPart = payload[1]!
  if (!isArray(nodesPart) || nodesPart.length !== 2 || nodesPart[0] !== TypeCode.Array) {
    throw malformed("path nodes are not an array value", at.row, at.column)
  }
  if (!isArray(edgesPart) || edgesPart.length !== 2 || edgesPart[0] !== TypeCode.Array) {
    throw malformed("path edges are not an array value", at.row, at.column)
  }
  const nodes = pairs(nodesPart[1]!, TypeCode.Node, "path nodes", at).map((n) => decodeNode(n, names, at))
  const edges = pairs(edgesPart[1]!, TypeCode.Edge, "path edges", at).map((e) => decodeEdge(e, names, at))
  return new Path(nodes, edges)
}

const decodeMap = (payload: Reply, names: Names, at: Cursor): FalkorMap => {
  if (!isArray(payload) || payload.length % 2 !== 0) throw malformed("a map is not [key, value, …]", at.row, at.column)
  const out: Record<string, FalkorValue> = {}
  for (let i = 0; i < payload.length; i += 2) {
    const key = text(payload[i]!)
    if (key === undefined) throw malformed("a map key is not a string", at.row, at.column)
    const value = decodeValue(payload[i + 1]!, names, at)
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
    } else out[key] = value
  }
  return out
}

const doubleOf = (payload: Reply, what: string, at: Cursor): number => {
  if (typeof payload === "number") return payload // RESP3 double
  const s = text(payload)
  const n = s === undefined ? undefined : parseDouble(s)
  if (n === undefined) throw malformed(`${what} is not a double (${describe(payload)})`, at.row, at.column)
  return n
}

const decodeTyped = (typeCode: Reply, payload: Reply, names: Names, at: Cursor): FalkorValue => {
  switch (typeCode) {
    case TypeCode.Null:
      if (payload !== null) throw malformed("a null carries a payload", at.row, at.column)
      return null
    case TypeCode.String: {
      const s = text(payload)
      if (s === undefined) throw malformed("a string value is not a string", at.row, at.column)
      return s
    }
    case TypeCode.Integer:
      return integer(payload, "an integer value", at)
    case TypeCode.Boolean: {
      if (typeof payload === "boolean") return payload
      const s = text(payload)
      if (s === "true") return true
      if (s === "false") return false
      throw malformed(`a boolean value is ${describe(payload)}`, at.row, at.column)
    }
    case TypeCode.Double:
      return doubleOf(payload, "a double value", at)
    case TypeCode.Array: {
      if (!isArray(payload)) throw malformed("an array value is not an array", at.row, at.column)
      const out: Array<FalkorValue> = new Array(payload.length)
      for (let i = 0; i < payload.length; i++) out[i] = decodeValue(payload[i]!, names, at)
      return out
    }
    case TypeCode.Edge:
      return decodeEdge(payload, names, at)
    case TypeCode.Node:
      return decodeNode(payload, names, at)
    case TypeCode.Path:
      return decodePath(payload, names, at)
    case TypeCode.Map:
      return decodeMap(payload, names, at)
    case TypeCode.Point: {
      if (!isArray(payload) || payload.length !== 2) throw malformed("a point is not [lat, lon]", at.row, at.column)
      return new Point(doubleOf(payload[0]!, "a latitude", at), doubleOf(payload[1]!, "a longitude", at))
    }
    case TypeCode.Vector: {
      if (!isArray(payload)) throw malformed("a vector is not an array", at.row, at.column)
      const out = new Float32Array(payload.length)
      for (let i = 0; i < payload.length; i++) out[i] = doubleOf(payload[i]!, "a vector element", at)
      return out
    }
    case TypeCode.DateTime:
      return new Temporal.DateTime(temporalSeconds(payload, "a datetime", at))
    case TypeCode.Date:
      return new Temporal.Date(temporalSeconds(payload, "a date", at))
    case TypeCode.Time:
      return new Temporal.Time(temporalSeconds(payload, "a time", at))
    case TypeCode.Duration:
      return new Temporal.Duration(temporalSeconds(payload, "a duration", at))
    default:
      throw malformed(
        `unknown value type code ${describe(typeCode)}${typeof typeCode === "number" ? ` (${typeCode})` : ""}`,
        at.row,
        at.column
      )
  }
}

const decodeValue = (cell: Reply, names: Names, at: Cursor): FalkorValue => {
  if (!isArray(cell) || cell.length !== 2) throw malformed("a value is not [type, payload]", at.row, at.column)
  return decodeTyped(cell[0]!, cell[1]!, names, at)
}

/** Decodes one compact value `[type, payload]`; a `SchemaMiss` when it names an unknown id. */
export const decodeCell = (cell: Reply, names: Names, row = 0, column = ""): FalkorValue | SchemaMiss => {
  const at: Cursor = { row, column, miss: undefined }
  const value = decodeValue(cell, names, at)
  return at.miss ?? value
}

/**
 * Decodes one row into its values, in column order; a `SchemaMiss` when it names an id the
 * lookup does not know. Throws `FalkorError` (reason `Decode`, naming row and column) for a
 * malformed row.
 */
export const decodeRow = (
  raw: Reply,
  row: number,
  columns: ReadonlyArray<string>,
  names: Names
): Array<FalkorValue> | SchemaMiss => {
  if (!isArray(raw) || raw.length !== columns.length) {
    throw malformed(`row ${row} does not have ${columns.length} cells`, row)
  }
  const at: Cursor = { row, column: "", miss: undefined }
  const out: Array<FalkorValue> = new Array(raw.length)
  for (let i = 0; i < raw.length; i++) {
    at.column = columns[i]!
    out[i] = decodeValue(raw[i]!, names, at)
    // Stop at the first unknown id: the row is decoded again once the names are known.
    if (at.miss !== undefined) return at.miss
  }
  return out
}

/**
 * Reads a verbose single-column reply of names (the schema procedures):
 * `[header, [[name], …], stats]`.
 */
export const parseNameList = (reply: Reply, graph: string, command: string): ReadonlyArray<string> => {
  const envelope = parseEnvelope(reply, graph, command)
  return envelope.rows.map((row, i) => {
    const name = isArray(row) && row.length === 1 ? text(row[0]!) : undefined
    if (name === undefined) throw malformed(`schema row ${i} is not [name]`, i)
    return name
  })
}
