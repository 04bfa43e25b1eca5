import { Decoder, type ReplySink } from "@effect-falkordb/resp/Decoder"
import { encodeReply } from "@effect-falkordb/resp/Encoder"
import { AttributedReply, ErrorReply, MapReply, type Reply, SetReply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"

const bytes = (text: string) => new TextEncoder().encode(text)

/** Normalises replies for deep comparison. */
const plain = (reply: Reply): unknown => {
  if (reply instanceof Uint8Array) return { bulk: new TextDecoder().decode(reply) }
  if (reply instanceof ErrorReply) return { error: reply.message }
  if (reply instanceof MapReply) return { map: reply.flat.map(plain) }
  if (reply instanceof SetReply) return { set: reply.items.map(plain) }
  if (reply instanceof AttributedReply) return { attributes: plain(reply.attributes), value: plain(reply.value) }
  if (typeof reply === "bigint") return { big: String(reply) }
  if (Array.isArray(reply)) return reply.map(plain)
  return reply
}

type Event = readonly ["open", number, number] | readonly ["value", number, unknown] | readonly ["close", number]

/** A sink that records its events and rebuilds the tree they describe. */
const recorder = (depth: number) => {
  const events: Array<Event> = []
  const stack: Array<Array<Reply>> = []
  const rebuilt: Array<Reply> = []
  const sink: ReplySink = {
    depth,
    open: (d, length) => {
      assert.strictEqual(d, stack.length, "open depth")
      events.push(["open", d, length])
      stack.push([])
    },
    value: (d, value) => {
      assert.strictEqual(d, stack.length, "value depth")
      events.push(["value", d, plain(value)])
      stack[stack.length - 1]!.push(value)
    },
    close: (d) => {
      assert.strictEqual(d, stack.length - 1, "close depth")
      events.push(["close", d])
      const done = stack.pop()!
      if (stack.length === 0) rebuilt.push(done)
      else stack[stack.length - 1]!.push(done)
    }
  }
  return { sink, events, rebuilt }
}

/** Decodes `chunks` streaming every top-level array reply for which `wants(index)` holds. */
const run = (chunks: ReadonlyArray<Uint8Array>, depth: number, wants: (index: number) => boolean = () => true) => {
  const whole: Array<Reply> = []
  const order: Array<unknown> = []
  const record = recorder(depth)
  let asked = 0
  const decoder = new Decoder(
    (reply) => {
      whole.push(reply)
      order.push(plain(reply))
    },
    {
      selectSink: () => {
        const index = asked++
        if (!wants(index)) return undefined
        const before = record.rebuilt.length
        const sink = record.sink
        return {
          ...sink,
          close: (d: number) => {
            sink.close(d)
            if (d === 0) order.push({ streamed: plain(record.rebuilt[before]!) })
          }
        }
      }
    }
  )
  for (const chunk of chunks) {
    const error = decoder.feed(chunk)
    if (error !== undefined) throw error
  }
  return { whole, order, events: record.events, rebuilt: record.rebuilt, decoder }
}

const compact = (rows: number): string => {
  let out = "*3\r\n*2\r\n*2\r\n:1\r\n$1\r\na\r\n*2\r\n:1\r\n$1\r\nb\r\n"
  out += `*${rows}\r\n`
  for (let r = 0; r < rows; r++)
    out += `*2\r\n*2\r\n:3\r\n:${r}\r\n*2\r\n:2\r\n$3\r\nr${String(r).padStart(2, "0")}\r\n`
  return out + "*1\r\n$19\r\nCached execution: 0\r\n"
}

describe("Decoder streaming (ReplySink)", () => {
  it("hands over the rows of a compact reply one by one, at every split point", () => {
    const wire = bytes(`+before\r\n${compact(3)}:7\r\n`)
    const reference = run([wire], 2)
    assert.deepStrictEqual(reference.events.slice(0, 4), [
      ["open", 0, 3],
      ["open", 1, 2],
      ["value", 2, [1, { bulk: "a" }]],
      ["value", 2, [1, { bulk: "b" }]]
    ])
    assert.deepStrictEqual(
      reference.events.filter((e) => e[1] === 2 && e[0] === "value").length,
      2 + 3 + 1,
      "header cells, rows, statistics"
    )
    assert.deepStrictEqual(reference.order, ["before", { streamed: plain(rowsTree(3)) }, 7])
    for (let cut = 0; cut <= wire.length; cut++) {
      const split = run([wire.subarray(0, cut), wire.subarray(cut)], 2)
      assert.deepStrictEqual(split.events, reference.events, `cut at ${cut}`)
      assert.deepStrictEqual(split.order, reference.order, `cut at ${cut}`)
    }
    const byteByByte = run(
      Array.from(wire, (b) => Uint8Array.of(b)),
      2
    )
    assert.deepStrictEqual(byteByByte.events, reference.events)
  })

  it("delivers each row as soon as its last byte arrives, and holds no more than the row in progress", () => {
    const reply = compact(50)
    const wire = bytes(reply)
    const rows: Array<number> = []
    let fed = 0
    let deliveredAt: Array<number> = []
    const decoder = new Decoder(() => assert.fail("a streamed reply is not delivered whole"), {
      selectSink: () => ({
        depth: 2,
        open: () => {},
        value: (depth, value) => {
          if (depth === 2 && Array.isArray(value) && value.length === 2 && Array.isArray(value[0])) {
            rows.push(Number((value[0] as Array<Reply>)[1]))
            deliveredAt.push(fed)
          }
        },
        close: () => {}
      })
    })
    let maxBuffered = 0
    for (let i = 0; i < wire.length; i += 7) {
      const chunk = wire.subarray(i, i + 7)
      fed += chunk.length
      assert.strictEqual(decoder.feed(chunk), undefined)
      maxBuffered = Math.max(maxBuffered, decoder.buffered)
    }
    assert.deepStrictEqual(
      rows,
      Array.from({ length: 50 }, (_, i) => i)
    )
    // Row 0 arrived long before the reply's last byte.
    assert.isBelow(deliveredAt[0]!, wire.length / 10)
    // Every row was handed over at most one chunk after its end on the wire.
    deliveredAt.forEach((at, r) => {
      const end = reply.indexOf(`r${String(r).padStart(2, "0")}\r\n`) + 5
      assert.isAtLeast(at, end)
      assert.isBelow(at, end + 7)
    })
    // Bytes held between chunks never exceed one row's worth (a row is < 40 bytes).
    assert.isBelow(maxBuffered, 40)
    assert.strictEqual(decoder.offset, wire.length)
    deliveredAt = []
  })

  it("streams only the replies the selector picks; the others are built whole, in order", () => {
    const wire = bytes(`${compact(1)}*2\r\n:1\r\n:2\r\n${compact(2)}*0\r\n*-1\r\n-ERR x\r\n*1\r\n*1\r\n:5\r\n`)
    const result = run([wire], 1, (i) => i !== 1)
    assert.deepStrictEqual(result.order, [
      { streamed: plain(rowsTree(1)) },
      [1, 2],
      { streamed: plain(rowsTree(2)) },
      [],
      null,
      { error: "ERR x" },
      { streamed: [[5]] }
    ])
    // Depth 1: the header, rows and statistics arrive whole.
    assert.deepStrictEqual(
      result.events.slice(0, 2).map((e) => e[0] + e[1]),
      ["open0", "value1"]
    )
  })

  it("keeps an attribute with the value it describes (the value is then built whole)", () => {
    const wire = bytes("|1\r\n+key\r\n+val\r\n*2\r\n:1\r\n:2\r\n*2\r\n|1\r\n+k\r\n+v\r\n*1\r\n:3\r\n:4\r\n")
    const result = run([wire], 2)
    assert.deepStrictEqual(result.order[0], { attributes: { map: ["key", "val"] }, value: [1, 2] })
    assert.deepStrictEqual(result.order[1], {
      streamed: [{ attributes: { map: ["k", "v"] }, value: [3] }, 4]
    })
  })

  it("rebuilds exactly what whole decoding gives, for arbitrary replies and splits", () => {
    const tree: fc.Arbitrary<Reply> = fc.letrec<{ reply: Reply }>((tie) => ({
      reply: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.integer(),
        fc.string().map((s) => new TextEncoder().encode(s) as Reply),
        fc.constant(null),
        fc.string().map((s) => new ErrorReply(s.replace(/[\r\n]/g, " "))),
        fc.array(tie("reply"), { maxLength: 4 }),
        fc.array(fc.tuple(tie("reply"), tie("reply")), { maxLength: 2 }).map((pairs) => new MapReply(pairs.flat()))
      )
    })).reply
    fc.assert(
      fc.property(
        fc.array(tree, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (replies, depth, seeds) => {
          const wire = Buffer.concat(replies.map((r) => encodeReply(r, 3)))
          const cuts = [...new Set(seeds.map((s) => (wire.length === 0 ? 0 : s % wire.length)))].sort((a, b) => a - b)
          const chunks: Array<Uint8Array> = []
          let at = 0
          for (const cut of cuts) {
            chunks.push(wire.subarray(at, cut))
            at = cut
          }
          chunks.push(wire.subarray(at))
          const result = run(chunks, depth)
          const expected = replies.map((r) => (Array.isArray(r) && r.length > 0 ? { streamed: plain(r) } : plain(r)))
          return JSON.stringify(result.order) === JSON.stringify(expected)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("fails with a protocol error inside a streamed reply and forgets the stream on reset", () => {
    const result: Array<Event> = []
    const decoder = new Decoder(() => {}, { selectSink: () => recorderSink(result) })
    const error = decoder.feed(bytes("*2\r\n:1\r\n?oops\r\n"))
    assert.strictEqual(error?.reason, "UnexpectedType")
    decoder.reset()
    const replies: Array<Reply> = []
    const plainDecoder = new Decoder((r) => replies.push(r))
    plainDecoder.feed(bytes(":1\r\n"))
    assert.deepStrictEqual(replies, [1])
    assert.deepStrictEqual(result, [
      ["open", 0, 2],
      ["value", 1, 1]
    ])
  })
})

const recorderSink = (events: Array<Event>): ReplySink => ({
  depth: 1,
  open: (d, n) => events.push(["open", d, n]),
  value: (d, v) => events.push(["value", d, plain(v)]),
  close: (d) => events.push(["close", d])
})

/** The tree of `compact(rows)`. */
const rowsTree = (rows: number): Reply => {
  const replies: Array<Reply> = []
  new Decoder((r) => replies.push(r)).feed(bytes(compact(rows)))
  return replies[0]!
}
