// The GRAPH.BULK binary format (FalkorDB's bulk insert; learned from its public source and the
// falkordb-bulk-loader docs, written here from scratch):
//
//   GRAPH.BULK <graph> [BEGIN] <nodes> <relationships> <node tokens> <relationship tokens> <token>…
//
// A token is one binary argument: a header, then entities back to back, all little-endian.
//   header:        label(s) (":"-joined for nodes) NUL, u32 property count, each key NUL-terminated
//   node:          one value per property
//   relationship:  u64 source node id, u64 destination node id, one value per property
//   value:         u8 type, then NULL 0 (nothing) | BOOL 1 (u8) | DOUBLE 2 (f64) | STRING 3 (bytes NUL)
//                  | LONG 4 (i64) | ARRAY 5 (i64 length, values)
// Node ids are the server's internal ids: in a new graph, nodes get 0, 1, 2 … in the order sent.
// The server trusts the bytes (it asserts rather than checks), so everything is checked here.

const NULL = 0
const BOOL = 1
const DOUBLE = 2
const STRING = 3
const LONG = 4
const ARRAY = 5

const utf8 = new TextEncoder()

/** Why a value cannot be encoded; thrown by `Writer.value`, caught by the loader with the row's place. */
export class ValueProblem extends Error {}

/** A growable little-endian byte buffer. */
export class Writer {
  private bytes: Uint8Array
  private view: DataView
  length = 0

  constructor(capacity = 64 * 1024) {
    this.bytes = new Uint8Array(capacity)
    this.view = new DataView(this.bytes.buffer)
  }

  private reserve(extra: number): void {
    const needed = this.length + extra
    if (needed <= this.bytes.length) return
    let capacity = this.bytes.length * 2
    while (capacity < needed) capacity *= 2
    const grown = new Uint8Array(capacity)
    grown.set(this.bytes.subarray(0, this.length))
    this.bytes = grown
    this.view = new DataView(grown.buffer)
  }

  u8(n: number): void {
    this.reserve(1)
    this.bytes[this.length++] = n
  }

  u32(n: number): void {
    this.reserve(4)
    this.view.setUint32(this.length, n, true)
    this.length += 4
  }

  u64(n: number): void {
    this.reserve(8)
    this.view.setBigUint64(this.length, BigInt(n), true)
    this.length += 8
  }

  i64(n: bigint): void {
    this.reserve(8)
    this.view.setBigInt64(this.length, n, true)
    this.length += 8
  }

  f64(n: number): void {
    this.reserve(8)
    this.view.setFloat64(this.length, n, true)
    this.length += 8
  }

  /** A NUL-terminated UTF-8 string; a NUL inside would cut it short on the server. */
  cString(text: string): void {
    if (text.includes("\u0000"))
      throw new ValueProblem("a string contains a NUL character, which GRAPH.BULK cannot carry")
    const encoded = utf8.encode(text)
    this.reserve(encoded.length + 1)
    this.bytes.set(encoded, this.length)
    this.length += encoded.length
    this.bytes[this.length++] = 0
  }

  append(other: Writer): void {
    this.reserve(other.length)
    this.bytes.set(other.bytes.subarray(0, other.length), this.length)
    this.length += other.length
  }

  /** The bytes written, as a view (valid until the next write). */
  contents(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }

  reset(): void {
    this.length = 0
  }

  // Values -------------------------------------------------------------------------------

  null(): void {
    this.u8(NULL)
  }

  boolean(b: boolean): void {
    this.u8(BOOL)
    this.u8(b ? 1 : 0)
  }

  double(n: number): void {
    if (!Number.isFinite(n)) throw new ValueProblem(`${n} is not a finite double`)
    this.u8(DOUBLE)
    this.f64(n)
  }

  long(n: bigint): void {
    if (n < MIN_LONG || n > MAX_LONG) throw new ValueProblem(`${n} does not fit a 64-bit integer`)
    this.u8(LONG)
    this.i64(n)
  }

  string(text: string): void {
    this.u8(STRING)
    this.cString(text)
  }

  /**
   * A JavaScript value by its type: integers (safe integers and bigints) as LONG, other numbers
   * as DOUBLE, strings, booleans, null, arrays of those. Anything else is a `ValueProblem`.
   */
  value(v: unknown): void {
    if (v === null || v === undefined) {
      this.null()
      return
    }
    switch (typeof v) {
      case "string":
        this.string(v)
        return
      case "boolean":
        this.boolean(v)
        return
      case "bigint":
        this.long(v)
        return
      case "number":
        if (Number.isSafeInteger(v)) this.long(BigInt(v))
        else this.double(v)
        return
    }
    if (Array.isArray(v)) {
      this.u8(ARRAY)
      this.i64(BigInt(v.length))
      for (const element of v) this.value(element)
      return
    }
    throw new ValueProblem(
      `a ${Object.prototype.toString.call(v).slice(8, -1).toLowerCase()} is not a property value (integer, double, boolean, string, array)`
    )
  }
}

const MIN_LONG = -(2n ** 63n)
const MAX_LONG = 2n ** 63n - 1n

/** The header of a token: label(s) or type, then the property keys. */
export const header = (labels: string, keys: ReadonlyArray<string>): Uint8Array => {
  const writer = new Writer(256)
  writer.cString(labels)
  writer.u32(keys.length)
  for (const key of keys) writer.cString(key)
  return writer.contents().slice()
}

/** The arguments of one `GRAPH.BULK` command. */
export const command = (
  graph: string,
  begin: boolean,
  nodes: number,
  relationships: number,
  nodeTokens: ReadonlyArray<Uint8Array>,
  relationshipTokens: ReadonlyArray<Uint8Array>
): Array<string | Uint8Array> => [
  "GRAPH.BULK",
  graph,
  ...(begin ? ["BEGIN"] : []),
  String(nodes),
  String(relationships),
  String(nodeTokens.length),
  String(relationshipTokens.length),
  ...nodeTokens,
  ...relationshipTokens
]
