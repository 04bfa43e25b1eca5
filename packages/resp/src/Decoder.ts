/**
 * A synchronous, push-based, resumable RESP2/RESP3 decoder.
 *
 * Bytes are fed as they arrive; every complete top-level frame is handed to `onReply` in
 * order. Aggregates under construction live on an explicit stack, so a frame split across
 * chunks is resumed where it stopped: completed elements are never parsed again, and a bulk
 * payload that spans chunks is gathered with a single concatenation. Bulk payloads that sit
 * inside one chunk are zero-copy `subarray` views.
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "./Text.ts"
import { ProtocolError, type ProtocolErrorReason } from "./ProtocolError.ts"
import { AttributedReply, ErrorReply, MapReply, PushReply, type Reply, SetReply, VerbatimReply } from "./Reply.ts"

/**
 * Limits that protect against hostile or broken peers.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecoderOptions {
  /** Largest accepted bulk/verbatim/bulk-error payload in bytes. Default 512 MiB. */
  readonly maxBulkLength?: number
  /**
   * Longest accepted line (simple string, error, integer, double, big number, or the length
   * line of a bulk or aggregate), in bytes without its type byte and CRLF. Default 64 KiB:
   * such lines from Redis are short, and a peer that never ends a line is refused early.
   */
  readonly maxLineLength?: number
  /** Largest accepted aggregate element count. Default 2^31 − 1. */
  readonly maxAggregateLength?: number
  /** Deepest accepted aggregate nesting. Default 128. */
  readonly maxDepth?: number
  /**
   * Asked when a top-level array reply begins: a `ReplySink` streams that reply instead of
   * building it (see `ReplySink`); `undefined` builds it whole as usual. Not asked for other
   * top-level frames (simple values, errors, maps, pushes), nor for `*0` / `*-1`.
   */
  readonly selectSink?: (() => ReplySink | undefined) | undefined
}

/**
 * Receives one reply piece by piece instead of as a whole tree: the outer `depth` levels of
 * arrays are never built, their elements are handed over as each completes (deeper values
 * arrive whole). For a FalkorDB reply `[header, rows, stats]` with `depth` 2 that is: the
 * reply opens (depth 0), the header opens (depth 1), its cells arrive (depth 2), it closes;
 * the rows open, each row arrives as it completes, they close; likewise the statistics;
 * finally `close(0)`. Only non-empty arrays (`*n`, n > 0) are opened; an empty or null array
 * and any other value at a streamed level arrives as a `value`. The calls are made from
 * inside `feed`, synchronously, in wire order.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplySink {
  /** How many levels of arrays are streamed (1: the reply's elements; 2: theirs too). */
  readonly depth: number
  /** An array at `depth` (0 = the reply) began with `length` elements. */
  readonly open: (depth: number, length: number) => void
  /** A complete element of the open array at `depth - 1`. */
  readonly value: (depth: number, value: Reply) => void
  /** The array at `depth` is complete; `close(0)` ends the reply. */
  readonly close: (depth: number) => void
}

const Kind = { Array: 0, Map: 1, Set: 2, Push: 3, Attribute: 4 } as const
type Kind = (typeof Kind)[keyof typeof Kind]

interface Frame {
  readonly kind: Kind
  readonly items: Array<Reply>
  readonly expected: number
}

const CR = 13
const LF = 10
const latin1 = new TextDecoder("latin1")
const EMPTY = new Uint8Array(0)
/** The items of a streamed frame: never written, its elements go to the sink. */
const STREAMED_ITEMS: Array<Reply> = []

/** Short ASCII lines ("OK", "QUEUED") are built directly: far cheaper than a TextDecoder call. */
const lineText = (buffer: Uint8Array, from: number, to: number): string => {
  // "OK", the most common reply, is not built at all.
  if (to - from === 2 && buffer[from] === 79 && buffer[from + 1] === 75) return "OK"
  if (to - from <= 32) {
    let out = ""
    for (let i = from; i < to; i++) {
      const byte = buffer[i]!
      if (byte >= 0x80) return decodeUtf8(buffer.subarray(from, to))
      out += String.fromCharCode(byte)
    }
    return out
  }
  return decodeUtf8(buffer.subarray(from, to))
}

/** Signals "the current element is incomplete; wait for more bytes". */
const INCOMPLETE = Symbol("incomplete")

/**
 * The decoder.
 *
 * @example
 * ```ts
 * import { Decoder } from "@effect-falkordb/resp/Decoder"
 * import type { Reply } from "@effect-falkordb/resp/Reply"
 *
 * const replies: Array<Reply> = []
 * const decoder = new Decoder((reply) => replies.push(reply), { maxDepth: 32 })
 * decoder.feed(new TextEncoder().encode("+OK\r\n$5\r\nhel")) // "OK" is complete; the bulk string waits
 * decoder.feed(new TextEncoder().encode("lo\r\n")) // resumes where it stopped
 * // replies: ["OK", Uint8Array("hello")]
 * const failure = decoder.feed(new TextEncoder().encode("?\r\n"))
 * if (failure !== undefined) console.log(failure.reason, failure.offset) // "UnexpectedType" 16
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export class Decoder {
  private readonly onReply: (reply: Reply) => void
  private readonly maxBulkLength: number
  private readonly maxLineLength: number
  private readonly maxAggregateLength: number
  private readonly maxDepth: number

  private buffer: Uint8Array = EMPTY
  private position = 0
  /** Absolute stream offset of `buffer[0]`. */
  private base = 0
  private stack: Array<Frame> = []
  /** Attributes waiting for the value they describe, per nesting level. */
  private pendingAttributes: Array<MapReply | undefined> = []
  /** How many entries of `pendingAttributes` are set: lets the hot path skip the lookup. */
  private attributeCount = 0
  /** While a bulk payload spans chunks: bytes the held element needs in total, and the parts so far. */
  private need = 0
  private parts: Array<Uint8Array> = []
  private partsLength = 0
  /**
   * While a line without its CRLF is held (in `parts`): each chunk is scanned once for CR or
   * LF and kept, and the line is joined only when its end may have arrived, so an unterminated
   * line costs time linear in its length, not quadratic.
   */
  private lineHeld = false
  /** The held line's last byte was CR: the next byte decides. */
  private lineEndsInCR = false
  /** Set by `lineEnd` when it ran out of bytes before a CRLF. */
  private lineOpen = false
  private scannedCount = 0
  private copiedCount = 0
  private failure: ProtocolError | undefined = undefined
  private readonly selectSink: (() => ReplySink | undefined) | undefined
  /** The sink of the reply being streamed, if any. */
  private sink: ReplySink | undefined = undefined
  /** How many frames at the bottom of the stack are streamed (their items are not kept). */
  private streamed = 0
  /** Elements seen so far by each streamed frame. */
  private readonly streamCounts: Array<number> = []
  private errorAt: { reason: ProtocolErrorReason; detail: string; offset: number } | undefined

  constructor(onReply: (reply: Reply) => void, options?: DecoderOptions) {
    this.onReply = onReply
    this.maxBulkLength = options?.maxBulkLength ?? 512 * 1024 * 1024
    this.maxLineLength = options?.maxLineLength ?? 64 * 1024
    this.maxAggregateLength = options?.maxAggregateLength ?? 2 ** 31 - 1
    this.maxDepth = options?.maxDepth ?? 128
    this.selectSink = options?.selectSink
  }

  /** Absolute stream offset of the next byte to parse: what a sink counts wire bytes with. */
  get offset(): number {
    return this.base + this.position
  }

  /** Bytes of an incomplete element currently held. */
  get buffered(): number {
    return this.need > 0 || this.lineHeld ? this.partsLength : this.buffer.length - this.position
  }

  /**
   * Work counters, for tests and diagnostics: bytes examined while looking for line ends, and
   * bytes copied to join chunks. Both grow linearly with the input, whatever its chunking.
   */
  get work(): { readonly scanned: number; readonly copied: number } {
    return { scanned: this.scannedCount, copied: this.copiedCount }
  }

  /** Forgets all state, including a previous failure. */
  reset(): void {
    this.buffer = EMPTY
    this.position = 0
    this.base = 0
    this.stack = []
    this.partial.length = 0
    this.pendingAttributes = []
    this.attributeCount = 0
    this.failure = undefined
    this.errorAt = undefined
    this.need = 0
    this.parts = []
    this.partsLength = 0
    this.lineHeld = false
    this.lineEndsInCR = false
    this.lineOpen = false
    this.sink = undefined
    this.streamed = 0
    this.streamCounts.length = 0
  }

  /** Joins the held parts into one buffer (one copy). */
  private joinParts(): void {
    const joined = new Uint8Array(this.partsLength)
    let at = 0
    for (const part of this.parts) {
      joined.set(part, at)
      at += part.length
    }
    this.copiedCount += this.partsLength
    this.parts = []
    this.partsLength = 0
    this.buffer = joined
  }

  /**
   * Feeds bytes. Never throws on any input: returns `undefined`, or the `ProtocolError`
   * (after which the decoder stays failed until `reset`).
   */
  feed(chunk: Uint8Array): ProtocolError | undefined {
    if (this.failure !== undefined) return this.failure
    if (this.lineHeld) {
      // Only the new chunk is examined: CR or LF in it (or a CR ending the held part) means
      // the line may end here, so it is joined once and parsed; otherwise it stays held.
      this.parts.push(chunk)
      this.partsLength += chunk.length
      this.scannedCount += chunk.length
      if (!this.lineEndsInCR && chunk.indexOf(CR) === -1 && chunk.indexOf(LF) === -1) {
        // The held part starts with the type byte; the line is what follows it.
        if (this.partsLength - 1 > this.maxLineLength) {
          return this.failWith(
            "LineTooLong",
            `line longer than the limit ${this.maxLineLength} (maxLineLength) without CRLF`,
            this.base + 1
          )
        }
        return undefined
      }
      this.lineHeld = false
      this.lineEndsInCR = false
      this.joinParts()
    } else if (this.need > 0) {
      // Gather the chunks of a large bulk and concatenate once, when all of it is here.
      this.parts.push(chunk)
      this.partsLength += chunk.length
      if (this.partsLength < this.need) return undefined
      this.need = 0
      this.base += this.position
      this.joinParts()
    } else if (this.position < this.buffer.length) {
      const rest = this.buffer.length - this.position
      const joined = new Uint8Array(rest + chunk.length)
      joined.set(this.buffer.subarray(this.position), 0)
      joined.set(chunk, rest)
      this.copiedCount += rest + chunk.length
      this.base += this.position
      this.buffer = joined
    } else {
      this.base += this.buffer.length
      this.buffer = chunk
    }
    this.position = 0
    while (this.position < this.buffer.length) {
      const start = this.position
      this.lineOpen = false
      const value = this.parseElement()
      if (value === INCOMPLETE) {
        if (this.errorAt !== undefined) {
          const e = this.errorAt
          return this.failWith(e.reason, e.detail, e.offset)
        }
        this.position = start
        if (this.need > 0) {
          const held = this.buffer.subarray(start)
          this.parts = [held]
          this.partsLength = held.length
        } else if (this.lineOpen) {
          // The element's first line has no CRLF yet: hold it (see `lineHeld`).
          const held = this.buffer.subarray(start)
          this.parts = [held]
          this.partsLength = held.length
          this.lineHeld = true
          this.lineEndsInCR = held[held.length - 1] === CR
          this.base += start
          this.buffer = EMPTY
          this.position = 0
          return undefined
        }
        break
      }
      if (value !== undefined) this.complete(value)
    }
    if (this.need === 0 && this.position >= this.buffer.length) {
      this.base += this.buffer.length
      this.buffer = EMPTY
      this.position = 0
    }
    return undefined
  }

  /** Enters the failed state (until `reset`). */
  private failWith(reason: ProtocolErrorReason, detail: string, offset: number): ProtocolError {
    this.failure = new ProtocolError(reason, detail, offset)
    this.stack = []
    this.sink = undefined
    this.streamed = 0
    this.buffer = EMPTY
    this.position = 0
    this.parts = []
    this.partsLength = 0
    this.lineHeld = false
    return this.failure
  }

  private fail(reason: ProtocolErrorReason, detail: string, at: number): typeof INCOMPLETE {
    this.errorAt = { reason, detail, offset: this.base + at }
    return INCOMPLETE
  }

  /** Places a finished value into its parent aggregate, or delivers it at the top level. */
  private complete(initial: Reply): void {
    let value = initial
    for (;;) {
      const level = this.stack.length
      if (this.attributeCount > 0) {
        const attributes = this.pendingAttributes[level]
        if (attributes !== undefined) {
          this.pendingAttributes[level] = undefined
          this.attributeCount--
          value = new AttributedReply(attributes, value)
        }
      }
      // Never read stack[-1]: an out-of-range index falls off V8's fast element path.
      if (level === 0) {
        this.onReply(value)
        return
      }
      if (level <= this.streamed) {
        this.deliver(value, level)
        return
      }
      const top = this.stack[level - 1]!
      top.items.push(value)
      if (top.items.length < top.expected) return
      this.stack.pop()
      const finished = this.finish(top)
      if (finished === undefined) return
      value = finished
    }
  }

  /**
   * Hands a value completed directly inside the streamed frame at `level - 1` to the sink,
   * then closes the streamed frames it completes (the last one ends the reply).
   */
  private deliver(value: Reply, level: number): void {
    const sink = this.sink!
    sink.value(level, value)
    for (let depth = level - 1; ; depth--) {
      const seen = ++this.streamCounts[depth]!
      if (seen < this.stack[depth]!.expected) return
      this.stack.pop()
      this.streamed--
      if (depth === 0) this.sink = undefined
      sink.close(depth)
      if (depth === 0) return
    }
  }

  /**
   * Opens an array of `count` (> 0) elements at the current level as a streamed frame when a
   * sink wants it: at the top level when `selectSink` returns one, below while the sink's
   * depth is not reached. False: build it as usual.
   */
  private openStreamed(count: number): boolean {
    const level = this.stack.length
    if (level === 0) {
      const sink = this.selectSink!()
      if (sink === undefined || sink.depth < 1) return false
      this.sink = sink
    } else if (level >= this.sink!.depth) return false
    // An attribute waiting for this value would be lost: build the value whole instead.
    if (this.attributeCount > 0 && this.pendingAttributes[level] !== undefined) {
      if (level === 0) this.sink = undefined
      return false
    }
    this.stack.push({ kind: Kind.Array, items: STREAMED_ITEMS, expected: count })
    this.streamCounts[level] = 0
    this.streamed++
    this.sink!.open(level, count)
    return true
  }

  private finish(frame: Frame): Reply | undefined {
    switch (frame.kind) {
      case Kind.Array:
        return frame.items
      case Kind.Map:
        return new MapReply(frame.items)
      case Kind.Set:
        return new SetReply(frame.items)
      case Kind.Push:
        return new PushReply(frame.items)
      case Kind.Attribute:
        this.pendingAttributes[this.stack.length] = new MapReply(frame.items)
        this.attributeCount++
        return undefined
    }
  }

  /** Finds the CRLF ending the line that starts at `from`; -1 when not yet received. */
  private lineEnd(from: number): number {
    const buffer = this.buffer
    // Lines are capped (maxLineLength), so a peer that never sends CRLF cannot make the
    // decoder hold much memory, nor pass a huge line off as a reply.
    const limit = Math.min(buffer.length, from + this.maxLineLength + 1)
    for (let i = from; i < limit; i++) {
      if (buffer[i] === CR) {
        this.scannedCount += i - from + 1
        if (i + 1 >= buffer.length) {
          this.lineOpen = true
          return -1
        }
        if (buffer[i + 1] !== LF) {
          this.fail("MissingCRLF", "expected LF after CR", i + 1)
          return -2
        }
        return i
      }
      if (buffer[i] === LF) {
        this.fail("MissingCRLF", "LF without CR", i)
        return -2
      }
    }
    this.scannedCount += limit - from
    if (limit < buffer.length || buffer.length - from > this.maxLineLength) {
      this.fail("LineTooLong", `line longer than the limit ${this.maxLineLength} (maxLineLength) without CRLF`, from)
      return -2
    }
    this.lineOpen = true
    return -1
  }

  /** Parses a signed decimal integer in [from, to); undefined when malformed. */
  private parseInteger(from: number, to: number): number | bigint | undefined {
    const buffer = this.buffer
    let i = from
    let negative = false
    if (buffer[i] === 45 /* - */) {
      negative = true
      i++
    } else if (buffer[i] === 43 /* + */) i++
    if (i >= to) return undefined
    if (to - i < 16) {
      let n = 0
      for (; i < to; i++) {
        const d = buffer[i]! - 48
        if (d < 0 || d > 9) return undefined
        n = n * 10 + d
      }
      return negative ? -n : n
    }
    for (let j = i; j < to; j++) {
      const d = buffer[j]! - 48
      if (d < 0 || d > 9) return undefined
    }
    const big = BigInt(latin1.decode(buffer.subarray(from, to)))
    return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big
  }

  /**
   * Parses one element at `position`. Returns the value, `undefined` when an aggregate was
   * opened (its elements follow), or INCOMPLETE (with `errorAt` set on malformed input).
   */
  /**
   * Fast path for the most common lines: an optional '-', at most 15 digits, CRLF. Reads the
   * number in the same pass that finds the line end and sets `scanNext` past the CRLF.
   * Anything else returns undefined and takes the general path (which reports errors).
   */
  private scanNext = 0
  private scanInteger(from: number): number | undefined {
    const buffer = this.buffer
    let i = from
    const negative = buffer[i] === 45
    if (negative) i++
    const digits = i
    // At most 16 digits are looked at: longer numbers take the general path.
    const limit = Math.min(buffer.length, digits + 16)
    let n = 0
    for (; i < limit; i++) {
      const d = buffer[i]! - 48
      if (d < 0 || d > 9) break
      n = n * 10 + d
    }
    if (i === digits || i - digits > 15 || i + 1 >= buffer.length || buffer[i] !== CR || buffer[i + 1] !== LF) {
      return undefined
    }
    this.scanNext = i + 2
    return negative ? -n : n
  }

  /** Arrays the fast path opened but could not finish, innermost first (see `wholeArray`). */
  private readonly partial: Array<Frame> = []

  /**
   * Parses an array recursively into preallocated arrays: no frame objects, no pushes, while
   * its elements are in the buffer. When the buffer ends inside it, or at anything left to
   * the general path (maps, sets, attributes, bulk errors, verbatim strings, nesting at the
   * depth limit), it records the arrays it has open in `partial`, with what they hold so
   * far, leaves `position` at the element it stopped before, and returns INCOMPLETE; the
   * caller moves them onto the stack and the resumable path goes on from there, so nothing
   * is parsed twice. Malformed scalars set `errorAt` exactly as the general path does.
   */
  private wholeArray(count: number, depth: number): Array<Reply> | typeof INCOMPLETE {
    const buffer = this.buffer
    const items = new Array<Reply>(count)
    for (let k = 0; k < count; k++) {
      const at = this.position
      if (at >= buffer.length) return this.stopAt(at, items, k, count)
      const type = buffer[at]!
      if (type === 58 /* : */) {
        const n = this.scanInteger(at + 1)
        if (n !== undefined) {
          this.position = this.scanNext
          items[k] = n
          continue
        }
      } else if (type === 36 /* $ */) {
        const length = this.scanInteger(at + 1)
        if (length === undefined || length < -1 || length > this.maxBulkLength) return this.stopAt(at, items, k, count)
        const next = this.scanNext
        if (length === -1) {
          this.position = next
          items[k] = null
          continue
        }
        if (next + length + 2 > buffer.length || buffer[next + length] !== CR || buffer[next + length + 1] !== LF) {
          return this.stopAt(at, items, k, count)
        }
        this.position = next + length + 2
        items[k] = buffer.subarray(next, next + length)
        continue
      } else if (type === 42 /* * */) {
        const inner = this.scanInteger(at + 1)
        if (inner === undefined || inner < -1 || inner > this.maxAggregateLength || depth >= this.maxDepth) {
          return this.stopAt(at, items, k, count)
        }
        this.position = this.scanNext
        if (inner <= 0) {
          items[k] = inner === 0 ? [] : null
          continue
        }
        const child = this.wholeArray(inner, depth + 1)
        if (child === INCOMPLETE) {
          if (this.errorAt === undefined)
            this.partial.push({ kind: Kind.Array, items: items.slice(0, k), expected: count })
          return INCOMPLETE
        }
        items[k] = child
        continue
      } else if (type === 37 || type === 126 || type === 62 || type === 124 || type === 33 || type === 61) {
        return this.stopAt(at, items, k, count)
      }
      // Other scalars (simple strings, errors, doubles, booleans, nulls, big numbers, long integers).
      const value = this.parseElement()
      if (value === INCOMPLETE || value === undefined) {
        return this.errorAt === undefined ? this.stopAt(at, items, k, count) : INCOMPLETE
      }
      items[k] = value
    }
    return items
  }

  private stopAt(at: number, items: Array<Reply>, filled: number, expected: number): typeof INCOMPLETE {
    this.position = at
    this.partial.push({ kind: Kind.Array, items: items.slice(0, filled), expected })
    return INCOMPLETE
  }

  private parseElement(): Reply | undefined | typeof INCOMPLETE {
    const buffer = this.buffer
    const start = this.position
    const type = buffer[start]!
    if (type === 58 /* : */) {
      const n = this.scanInteger(start + 1)
      if (n !== undefined) {
        this.position = this.scanNext
        return n
      }
    } else if (type === 42 /* * */) {
      const count = this.scanInteger(start + 1)
      if (count !== undefined && count > 0 && count <= this.maxAggregateLength && this.stack.length < this.maxDepth) {
        this.position = this.scanNext
        // One property test on the usual path: streaming is off unless a selector was given.
        if (this.selectSink !== undefined && this.stack.length === this.streamed && this.openStreamed(count)) {
          return undefined
        }
        if (this.attributeCount > 0) {
          // Attributes are matched to values per nesting level: the general path tracks that.
          this.stack.push({ kind: Kind.Array, items: [], expected: count })
          return undefined
        }
        const whole = this.wholeArray(count, this.stack.length + 1)
        if (whole !== INCOMPLETE) return whole
        if (this.errorAt !== undefined) return INCOMPLETE
        // Opened but not finished here: continue on the stack where the fast path stopped.
        for (let i = this.partial.length - 1; i >= 0; i--) this.stack.push(this.partial[i]!)
        this.partial.length = 0
        return undefined
      }
    } else if (type === 36 /* $ */) {
      const length = this.scanInteger(start + 1)
      if (length !== undefined && length >= 0 && length <= this.maxBulkLength) {
        const next = this.scanNext
        if (next + length + 2 <= buffer.length && buffer[next + length] === CR && buffer[next + length + 1] === LF) {
          this.position = next + length + 2
          return buffer.subarray(next, next + length)
        }
      }
    }
    const end = this.lineEnd(start + 1)
    if (end < 0) return INCOMPLETE
    const next = end + 2
    switch (type) {
      case 43 /* + */:
        {
          this.position = next
          return lineText(buffer, start + 1, end)
        }
      case 45 /* - */:
        {
          this.position = next
          return new ErrorReply(lineText(buffer, start + 1, end))
        }
      case 58 /* : */:
        {
          const n = this.parseInteger(start + 1, end)
          if (n === undefined) return this.fail("InvalidInteger", "malformed integer", start + 1)
          this.position = next
          return n
        }
      case 40 /* ( */:
        {
          const n = this.parseInteger(start + 1, end)
          if (n === undefined) return this.fail("InvalidInteger", "malformed big number", start + 1)
          this.position = next
          return BigInt(n)
        }
      case 44 /* , */:
        {
          const text = latin1.decode(buffer.subarray(start + 1, end))
          const lower = text.toLowerCase()
          let value: number
          if (lower === "inf" || lower === "+inf") value = Number.POSITIVE_INFINITY
          else if (lower === "-inf") value = Number.NEGATIVE_INFINITY
          else if (lower === "nan" || lower === "-nan") value = Number.NaN
          else if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) value = Number(text)
          else return this.fail("InvalidDouble", `malformed double ${JSON.stringify(text)}`, start + 1)
          this.position = next
          return value
        }
      case 35 /* # */:
        {
          if (end !== start + 2 || (buffer[start + 1] !== 116 && buffer[start + 1] !== 102)) {
            return this.fail("InvalidBoolean", "boolean must be #t or #f", start + 1)
          }
          this.position = next
          return buffer[start + 1] === 116
        }
      case 95 /* _ */:
        {
          if (end !== start + 1) return this.fail("InvalidLength", "null must be an empty line", start + 1)
          this.position = next
          return null
        }
      case 36 /* $ */:
      case 33 /* ! */:
      case 61 /* = */:
        {
          const length = this.parseInteger(start + 1, end)
          if (typeof length !== "number" || length < -1) {
            return this.fail("InvalidLength", "malformed bulk length", start + 1)
          }
          if (length === -1) {
            if (type !== 36) return this.fail("InvalidLength", "only $ may have length -1", start + 1)
            this.position = next
            return null
          }
          if (length > this.maxBulkLength) {
            return this.fail("BulkTooLong", `bulk length ${length} exceeds the limit ${this.maxBulkLength}`, start + 1)
          }
          if (next + length + 2 > buffer.length) {
            // Only worth gathering parts when the payload is larger than a typical chunk.
            if (length > 65536) this.need = next + length + 2 - start
            return INCOMPLETE
          }
          if (buffer[next + length] !== CR || buffer[next + length + 1] !== LF) {
            return this.fail("MissingCRLF", "bulk payload not followed by CRLF", next + length)
          }
          this.position = next + length + 2
          const payload = buffer.subarray(next, next + length)
          if (type === 36) return payload
          if (type === 33) return new ErrorReply(decodeUtf8(payload))
          if (length < 4 || payload[3] !== 58) {
            return this.fail("InvalidLength", "verbatim string needs a 3-byte format and ':'", next)
          }
          return new VerbatimReply(latin1.decode(payload.subarray(0, 3)), payload.subarray(4))
        }
      case 42 /* * */:
      case 37 /* % */:
      case 126 /* ~ */:
      case 62 /* > */:
      case 124 /* | */:
        {
          const count = this.parseInteger(start + 1, end)
          if (typeof count !== "number" || count < -1) {
            return this.fail("InvalidLength", "malformed aggregate length", start + 1)
          }
          if (count === -1) {
            if (type !== 42) return this.fail("InvalidLength", "only * may have length -1", start + 1)
            this.position = next
            return null
          }
          const isPairs = type === 37 || type === 124
          const elements = isPairs ? count * 2 : count
          if (count > this.maxAggregateLength) {
            return this.fail(
              "AggregateTooLong",
              `aggregate length ${count} exceeds the limit ${this.maxAggregateLength}`,
              start + 1
            )
          }
          if (this.stack.length >= this.maxDepth) {
            return this.fail("TooDeep", `nesting deeper than ${this.maxDepth}`, start)
          }
          this.position = next
          const kind =
            type === 42
              ? Kind.Array
              : type === 37
                ? Kind.Map
                : type === 126
                  ? Kind.Set
                  : type === 62
                    ? Kind.Push
                    : Kind.Attribute
          if (elements === 0) {
            const frame: Frame = { kind, items: [], expected: 0 }
            return this.finish(frame)
          }
          if (
            type === 42 &&
            this.selectSink !== undefined &&
            this.stack.length === this.streamed &&
            this.openStreamed(count)
          ) {
            return undefined
          }
          this.stack.push({ kind, items: [], expected: elements })
          return undefined
        }
      default:
        return this.fail(
          "UnexpectedType",
          `unexpected type byte 0x${type.toString(16).padStart(2, "0")} (${JSON.stringify(String.fromCharCode(type))})`,
          start
        )
    }
  }
}
