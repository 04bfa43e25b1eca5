/**
 * The headers a graph's replies had lately, so that a query run again gets the `Header` it had
 * before: its column names are not decoded again, and the alias index a `Row.get` builds on a
 * header is built once per query shape instead of once per query. A header is reused only when
 * every column name has the same bytes; anything else is parsed as usual.
 *
 * @internal
 */
import type { Reply } from "@effect-falkordb/resp/Reply"
import { Header } from "../Row.ts"
import { parseHeader } from "./CompactReply.ts"

/** Headers kept per graph: a few query shapes alternate without pushing each other out. */
const SLOTS = 8

interface Entry {
  /** The names' bytes, copied (a reply's bytes may be views of a buffer that is reused). */
  readonly names: ReadonlyArray<Uint8Array>
  readonly header: Header
}

/** The bytes of name `i` of a compact header (`[[type, name], …]`), or undefined when it is not bytes. */
const nameAt = (raw: ReadonlyArray<Reply>, i: number): Uint8Array | undefined => {
  const cell = raw[i]
  if (!Array.isArray(cell) || cell.length !== 2) return undefined
  const name = cell[1]
  return name instanceof Uint8Array ? name : undefined
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** True when `raw` is a header whose names are `names`, byte for byte (no allocation: run per query). */
const matches = (raw: ReadonlyArray<Reply>, names: ReadonlyArray<Uint8Array>): boolean => {
  if (raw.length !== names.length) return false
  for (let i = 0; i < raw.length; i++) {
    const name = nameAt(raw, i)
    if (name === undefined || !sameBytes(name, names[i]!)) return false
  }
  return true
}

/** The recent headers of one graph (`GraphSchema.headers`). */
export class HeaderCache {
  private readonly entries: Array<Entry> = []
  private next = 0

  /**
   * The `Header` of a raw header reply: a cached one whose names have the same bytes, else a
   * new one (remembered). A malformed header throws as `parseHeader` does and is not kept.
   */
  read(raw: Reply): Header {
    if (Array.isArray(raw)) {
      for (let i = 0; i < this.entries.length; i++) {
        const entry = this.entries[i]!
        if (matches(raw, entry.names)) return entry.header
      }
    }
    const header = new Header(parseHeader(raw))
    // parseHeader accepted it, so it is an array; kept only when every name is bytes.
    const cells = raw as ReadonlyArray<Reply>
    const names: Array<Uint8Array> = new Array(cells.length)
    for (let i = 0; i < cells.length; i++) {
      const name = nameAt(cells, i)
      if (name === undefined) return header
      names[i] = name.slice()
    }
    const entry: Entry = { names, header }
    if (this.entries.length < SLOTS) this.entries.push(entry)
    else {
      this.entries[this.next] = entry
      this.next = (this.next + 1) % SLOTS
    }
    return header
  }
}
