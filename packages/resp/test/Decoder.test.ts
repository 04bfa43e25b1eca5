import { Decoder } from "@effect-falkordb/resp/Decoder"
import { encodeCommands, encodeReply } from "@effect-falkordb/resp/Encoder"
import { ProtocolError } from "@effect-falkordb/resp/ProtocolError"
import {
  AttributedReply,
  ErrorReply,
  MapReply,
  PushReply,
  type Reply,
  replyToString,
  SetReply,
  VerbatimReply
} from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

const decodeChunks = (chunks: ReadonlyArray<Uint8Array>, options?: ConstructorParameters<typeof Decoder>[1]) => {
  const replies: Array<Reply> = []
  const decoder = new Decoder((reply) => replies.push(reply), options)
  let error: ProtocolError | undefined
  for (const chunk of chunks) {
    error = decoder.feed(chunk)
    if (error) break
  }
  return { replies, error, buffered: decoder.buffered }
}

/** Normalises replies for deep comparison (Uint8Array views → text, classes → tagged objects). */
const plain = (reply: Reply): unknown => {
  if (reply instanceof Uint8Array) return { bulk: text(reply) }
  if (reply instanceof ErrorReply) return { error: reply.message }
  if (reply instanceof MapReply) return { map: reply.flat.map(plain) }
  if (reply instanceof SetReply) return { set: reply.items.map(plain) }
  if (reply instanceof PushReply) return { push: reply.items.map(plain) }
  if (reply instanceof VerbatimReply) return { verbatim: reply.format, text: text(reply.text) }
  if (reply instanceof AttributedReply) return { attributes: plain(reply.attributes), value: plain(reply.value) }
  if (Array.isArray(reply)) return reply.map(plain)
  if (typeof reply === "bigint") return { bigint: reply.toString() }
  if (typeof reply === "number" && Number.isNaN(reply)) return { nan: true }
  if (Object.is(reply, -0)) return { negativeZero: true }
  return reply
}

// Every frame type of RESP2 and RESP3, with its expected value.
const corpus: ReadonlyArray<readonly [string, unknown]> = [
  ["+OK\r\n", "OK"],
  ["+\r\n", ""],
  ["-ERR unknown command\r\n", { error: "ERR unknown command" }],
  [":0\r\n", 0],
  [":-42\r\n", -42],
  [":9223372036854775807\r\n", { bigint: "9223372036854775807" }],
  [":-9223372036854775808\r\n", { bigint: "-9223372036854775808" }],
  [":9007199254740991\r\n", 9007199254740991],
  ["$5\r\nhello\r\n", { bulk: "hello" }],
  ["$0\r\n\r\n", { bulk: "" }],
  ["$-1\r\n", null],
  ["$4\r\na\r\nb\r\n", { bulk: "a\r\nb" }],
  ["*-1\r\n", null],
  ["*0\r\n", []],
  ["*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+y\r\n", [1, { bulk: "x" }, ["y"]]],
  ["*2\r\n-version mismatch\r\n:2394787923\r\n", [{ error: "version mismatch" }, 2394787923]],
  ["_\r\n", null],
  ["#t\r\n", true],
  ["#f\r\n", false],
  [",3.25\r\n", 3.25],
  [",inf\r\n", Infinity],
  [",-inf\r\n", -Infinity],
  [",nan\r\n", { nan: true }],
  [",1e-300\r\n", 1e-300],
  ["(3492890328409238509324850943850943825024385\r\n", { bigint: "3492890328409238509324850943850943825024385" }],
  ["!21\r\nSYNTAX invalid syntax\r\n", { error: "SYNTAX invalid syntax" }],
  ["=15\r\ntxt:Some string\r\n", { verbatim: "txt", text: "Some string" }],
  ["%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", { map: ["a", 1, "b", 2] }],
  ["%0\r\n", { map: [] }],
  ["~3\r\n:1\r\n:2\r\n:3\r\n", { set: [1, 2, 3] }],
  [">3\r\n+message\r\n+ch\r\n$2\r\nhi\r\n", { push: ["message", "ch", { bulk: "hi" }] }],
  [
    "|1\r\n+ttl\r\n:3600\r\n*2\r\n:2039123\r\n:9543892\r\n",
    { attributes: { map: ["ttl", 3600] }, value: [2039123, 9543892] }
  ],
  [
    "*2\r\n|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.1923\r\n$1\r\nx\r\n:7\r\n",
    [{ attributes: { map: ["key-popularity", { map: [{ bulk: "a" }, 0.1923] }] }, value: { bulk: "x" } }, 7]
  ],
  ["*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n", [[[[[]]]]]]
]

const all = corpus.map(([frame]) => frame).join("")
const allExpected = corpus.map(([, value]) => value)

describe("Decoder", () => {
  it("decodes each frame fed whole", () => {
    for (const [frame, expected] of corpus) {
      const { replies, error } = decodeChunks([bytes(frame)])
      assert.isUndefined(error, frame)
      assert.deepStrictEqual(replies.map(plain), [expected], JSON.stringify(frame))
    }
  })

  it("decodes each frame at every 2-way split point", () => {
    for (const [frame, expected] of corpus) {
      const b = bytes(frame)
      for (let cut = 0; cut <= b.length; cut++) {
        const { replies, error } = decodeChunks([b.subarray(0, cut), b.subarray(cut)])
        assert.isUndefined(error)
        assert.deepStrictEqual(replies.map(plain), [expected], `${JSON.stringify(frame)} cut at ${cut}`)
      }
    }
  })

  it("decodes the whole corpus back to back, whole and byte by byte", () => {
    const b = bytes(all)
    assert.deepStrictEqual(decodeChunks([b]).replies.map(plain), allExpected)
    const single = Array.from(b, (byte) => Uint8Array.of(byte))
    const { replies, error, buffered } = decodeChunks(single)
    assert.isUndefined(error)
    assert.strictEqual(buffered, 0)
    assert.deepStrictEqual(replies.map(plain), allExpected)
  })

  it("nested arrays that mix what the array fast path takes and what it leaves to the general path decode alike at every split", () => {
    // Arrays of integers, bulks and nulls (fast path) around a map, a set, an attribute, a
    // verbatim string, a bulk error, a double, a big number and an empty array (general path).
    const frame =
      "*4\r\n*3\r\n:1\r\n$3\r\nabc\r\n$-1\r\n" +
      "*4\r\n%1\r\n+k\r\n*2\r\n:7\r\n~1\r\n:8\r\n|1\r\n+a\r\n:1\r\n$1\r\nx\r\n=7\r\ntxt:abc\r\n!3\r\nERR\r\n" +
      "*4\r\n,1.5\r\n(12345678901234567890\r\n*0\r\n:99999999999999999\r\n" +
      "*1\r\n*1\r\n*1\r\n-ERR inner\r\n"
    const expected = [
      [1, { bulk: "abc" }, null],
      [
        { map: ["k", [7, { set: [8] }]] },
        { attributes: { map: ["a", 1] }, value: { bulk: "x" } },
        { verbatim: "txt", text: "abc" },
        { error: "ERR" }
      ],
      [1.5, { bigint: "12345678901234567890" }, [], { bigint: "99999999999999999" }],
      [[[{ error: "ERR inner" }]]]
    ]
    const b = bytes(frame)
    const whole = decodeChunks([b])
    assert.isUndefined(whole.error)
    assert.strictEqual(whole.replies.length, 1)
    const decoded = plain(whole.replies[0]!) as Array<unknown>
    assert.deepStrictEqual(decoded, expected)
    for (let cut = 0; cut <= b.length; cut++) {
      for (const second of [cut, Math.min(b.length, cut + 5)]) {
        const { replies, error } = decodeChunks([b.subarray(0, cut), b.subarray(cut, second), b.subarray(second)])
        assert.isUndefined(error)
        assert.deepStrictEqual(replies.map(plain), whole.replies.map(plain), `cut at ${cut}, ${second}`)
      }
    }
    // Malformed inside a fast-path array: the same typed error and offset, whole or split.
    const bad = bytes("*2\r\n*2\r\n:1\r\n:x\r\n:2\r\n")
    for (let cut = 0; cut <= bad.length; cut++) {
      const { error } = decodeChunks([bad.subarray(0, cut), bad.subarray(cut)])
      assert.strictEqual(error?.reason, "InvalidInteger", `cut at ${cut}`)
      assert.strictEqual(error?.offset, 13)
    }
  })

  it("decodes the corpus in random chunkings", () => {
    const b = bytes(all)
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: b.length }), { maxLength: 40 }), (cuts) => {
        const points = [...new Set(cuts)].sort((x, y) => x - y)
        const chunks: Array<Uint8Array> = []
        let last = 0
        for (const point of points) {
          chunks.push(b.subarray(last, point))
          last = point
        }
        chunks.push(b.subarray(last))
        const { replies, error } = decodeChunks(chunks)
        return error === undefined && JSON.stringify(replies.map(plain)) === JSON.stringify(allExpected)
      }),
      { numRuns: 300 }
    )
  })

  it("returns bulk payloads as zero-copy views when they arrive in one chunk", () => {
    const chunk = bytes("$5\r\nhello\r\n")
    const { replies } = decodeChunks([chunk])
    const bulk = replies[0] as Uint8Array
    assert.strictEqual(bulk.buffer, chunk.buffer)
  })

  it("gathers a large bulk that spans many chunks", () => {
    const payload = "x".repeat(1024 * 1024 + 3)
    const b = bytes(`$${payload.length}\r\n${payload}\r\n:1\r\n`)
    const chunks: Array<Uint8Array> = []
    for (let i = 0; i < b.length; i += 4096) chunks.push(b.subarray(i, i + 4096))
    const { replies, error } = decodeChunks(chunks)
    assert.isUndefined(error)
    assert.strictEqual(replies.length, 2)
    assert.strictEqual((replies[0] as Uint8Array).length, payload.length)
    assert.strictEqual(text(replies[0] as Uint8Array), payload)
    assert.strictEqual(replies[1], 1)
  })

  it("holds truncated input without a reply or an error", () => {
    for (const [frame] of corpus) {
      const b = bytes(frame)
      for (let cut = 1; cut < b.length; cut++) {
        const { replies, error } = decodeChunks([b.subarray(0, cut)])
        // A prefix may not be a complete frame: nothing is delivered, nothing fails.
        assert.isUndefined(error, `${JSON.stringify(frame)} prefix ${cut}`)
        assert.strictEqual(replies.length, 0, `${JSON.stringify(frame)} prefix ${cut}`)
      }
    }
  })

  it("fails malformed input with a typed error naming the offset, never a partial value", () => {
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      ["A\r\n", "UnexpectedType", 0],
      ["+OK\r\nX\r\n", "UnexpectedType", 5],
      [":12a\r\n", "InvalidInteger", 1],
      [":\r\n", "InvalidInteger", 1],
      ["$x\r\n", "InvalidLength", 1],
      ["$-2\r\n", "InvalidLength", 1],
      ["$3\r\nabcd\r\n", "MissingCRLF", 7],
      ["+OK\rX", "MissingCRLF", 4],
      ["+OK\n", "MissingCRLF", 3],
      [",abc\r\n", "InvalidDouble", 1],
      ["#x\r\n", "InvalidBoolean", 1],
      ["*2\r\n:1\r\n?\r\n", "UnexpectedType", 8],
      ["=3\r\ntxt\r\n", "InvalidLength", 4]
    ]
    for (const [input, reason, offset] of cases) {
      const { replies, error } = decodeChunks([bytes(input)])
      assert.instanceOf(error, ProtocolError, input)
      assert.strictEqual(error!.reason, reason, input)
      assert.strictEqual(error!.offset, offset, JSON.stringify(input))
      assert.match(error!.message, /at offset \d+/)
      if (input.startsWith("*2")) assert.strictEqual(replies.length, 0)
    }
  })

  it("stays failed after an error until reset", () => {
    const replies: Array<Reply> = []
    const decoder = new Decoder((reply) => replies.push(reply))
    const first = decoder.feed(bytes("?\r\n"))
    assert.instanceOf(first, ProtocolError)
    assert.strictEqual(decoder.feed(bytes("+OK\r\n")), first)
    decoder.reset()
    assert.isUndefined(decoder.feed(bytes("+OK\r\n")))
    assert.deepStrictEqual(replies, ["OK"])
  })

  it("enforces limits on bulk length, aggregate length and depth", () => {
    assert.strictEqual(decodeChunks([bytes("$11\r\n")], { maxBulkLength: 10 }).error?.reason, "BulkTooLong")
    assert.strictEqual(decodeChunks([bytes("*11\r\n")], { maxAggregateLength: 10 }).error?.reason, "AggregateTooLong")
    assert.strictEqual(decodeChunks([bytes("*1\r\n".repeat(5))], { maxDepth: 4 }).error?.reason, "TooDeep")
    assert.isUndefined(decodeChunks([bytes("*1\r\n".repeat(4) + ":1\r\n")], { maxDepth: 4 }).error)
    // A line that never ends is refused once it passes the limit, also when it arrives in pieces.
    const endless = decodeChunks([bytes("+aaaaaa"), bytes("aaaaaa")], { maxLineLength: 10 })
    assert.strictEqual(endless.error?.reason, "LineTooLong")
    assert.strictEqual(endless.error?.offset, 1)
    assert.isUndefined(decodeChunks([bytes("+aaaaaaaaaa\r\n")], { maxLineLength: 10 }).error)
    const late = decodeChunks([bytes(":1\r\n+aaaaaa"), bytes("aaaaaa\r\n")], { maxLineLength: 10 })
    assert.strictEqual(late.error?.reason, "LineTooLong")
    assert.strictEqual(late.error?.offset, 5)
  })

  it("caps lines at maxLineLength (64 KiB by default), apart from bulk payloads", () => {
    const cap = 64 * 1024
    for (const type of ["+", "-", ":", "$", "*", ","]) {
      // One byte over the cap fails, whether it arrives whole or in pieces; no CRLF needed.
      const over = bytes(type + "1".repeat(cap + 1))
      for (const chunks of [
        [over],
        [over.subarray(0, 1000), over.subarray(1000)],
        [over.subarray(0, cap), over.subarray(cap)]
      ]) {
        const { error, replies } = decodeChunks(chunks)
        assert.strictEqual(error?.reason, "LineTooLong", type)
        assert.strictEqual(error?.offset, 1)
        assert.strictEqual(replies.length, 0)
      }
      // Nested in an aggregate, the offset is the line's own.
      const nested = decodeChunks([bytes("*2\r\n:1\r\n"), over])
      assert.strictEqual(nested.error?.reason, "LineTooLong")
      assert.strictEqual(nested.error?.offset, 9)
    }
    const atCap = "a".repeat(cap)
    assert.deepStrictEqual(decodeChunks([bytes(`+${atCap}\r\n`)]).replies, [atCap])
    // A bulk payload is bounded by maxBulkLength, not by the line cap.
    const big = "b".repeat(cap * 4)
    const bulk = decodeChunks([bytes(`$${big.length}\r\n${big}\r\n`)], { maxLineLength: 16 })
    assert.strictEqual(text(bulk.replies[0] as Uint8Array), big)
    assert.strictEqual(
      decodeChunks([bytes(`+${"x".repeat(17)}\r\n`)], { maxLineLength: 16 }).error?.reason,
      "LineTooLong"
    )
  })

  it("decodes an unterminated line in work linear in its length: each chunk is examined once", () => {
    // Feeds `+` and n bytes without CRLF in 64 KiB chunks, then the CRLF and one more reply.
    const measure = (n: number, chunk: number) => {
      const replies: Array<Reply> = []
      const decoder = new Decoder((reply) => replies.push(reply), { maxLineLength: 64 * 1024 * 1024 })
      const body = new Uint8Array(n).fill(0x61)
      assert.isUndefined(decoder.feed(bytes("+")))
      for (let at = 0; at < n; at += chunk) assert.isUndefined(decoder.feed(body.subarray(at, at + chunk)))
      assert.strictEqual(decoder.buffered, n + 1)
      const held = decoder.work
      assert.isUndefined(decoder.feed(bytes("\r\n:7\r\n")))
      assert.strictEqual(replies.length, 2)
      assert.strictEqual((replies[0] as string).length, n)
      assert.strictEqual(replies[1], 7)
      return { held, done: decoder.work }
    }
    const mib = 1024 * 1024
    const eight = measure(8 * mib, 64 * 1024)
    const sixteen = measure(16 * mib, 64 * 1024)
    // While held: every byte examined once for CR/LF (plus the first chunk's own scan), never copied.
    assert.isAtMost(eight.held.scanned, 8 * mib + 64 * 1024 + 1)
    assert.strictEqual(eight.held.copied, 0)
    // In total: one join and one final scan of the whole line.
    assert.isAtMost(eight.done.scanned, 2 * (8 * mib + 64 * 1024 + 16))
    assert.isAtMost(eight.done.copied, 8 * mib + 16)
    // Twice the line, twice the work (the old decoder re-copied and re-scanned the held line per chunk: 4x).
    assert.closeTo(sixteen.done.scanned / eight.done.scanned, 2, 0.01)
    assert.closeTo(sixteen.done.copied / eight.done.copied, 2, 0.01)
    // Byte by byte too.
    const small = measure(20_000, 1)
    assert.isAtMost(small.done.scanned, 2 * 20_000 + 16)
    assert.isAtMost(small.done.copied, 20_000 + 16)
  })

  it("keeps a leading U+FEFF in every decoded text (no BOM stripping)", () => {
    const bom = "\uFEFF"
    const long = `${bom}${"é".repeat(40)}`
    const replies = decodeChunks([
      bytes(`+${bom}hi\r\n+${long}\r\n-${bom}ERR x\r\n!${bytes(`${bom}SYNTAX`).length}\r\n${bom}SYNTAX\r\n`)
    ]).replies
    assert.strictEqual(replies[0], `${bom}hi`)
    assert.strictEqual(replies[1], long)
    assert.strictEqual((replies[2] as ErrorReply).message, `${bom}ERR x`)
    assert.strictEqual((replies[3] as ErrorReply).message, `${bom}SYNTAX`)
    const payload = bytes(`${bom}text`)
    assert.strictEqual(replyToString(payload), `${bom}text`)
    assert.strictEqual(replyToString(new VerbatimReply("txt", payload)), `${bom}text`)
  })

  it("never throws on random garbage", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), (chunks) => {
        const { error } = decodeChunks(chunks)
        return error === undefined || error instanceof ProtocolError
      }),
      { numRuns: 2000 }
    )
  })
})

// Arbitrary reply trees that survive an encode/decode round trip unchanged in protocol 3.
const replyArbitrary: fc.Arbitrary<Reply> = fc.letrec<{ reply: Reply }>((tie) => ({
  reply: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.string().filter((s) => !/[\r\n]/.test(s)),
    fc.string().map((s) => new TextEncoder().encode(s) as Reply),
    fc.integer(),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).filter((n) => n < -(2n ** 53n) || n > 2n ** 53n),
    fc.double({ noNaN: true }).filter((d) => !Number.isInteger(d)),
    fc.boolean(),
    fc.constant(null),
    fc.string().map((s) => new ErrorReply(s.replace(/[\r\n]/g, " "))),
    fc.array(tie("reply"), { maxLength: 4 }),
    fc.array(tie("reply"), { maxLength: 3 }).map((items) => new SetReply(items)),
    fc.array(fc.tuple(tie("reply"), tie("reply")), { maxLength: 3 }).map((pairs) => new MapReply(pairs.flat()))
  )
})).reply

describe("Encoder", () => {
  it("round-trips arbitrary replies through encodeReply and the decoder (RESP3), at random splits", () => {
    fc.assert(
      fc.property(replyArbitrary, fc.nat(), (reply, seed) => {
        const b = encodeReply(reply, 3)
        const cut = b.length === 0 ? 0 : seed % b.length
        const { replies, error } = decodeChunks([b.subarray(0, cut), b.subarray(cut)])
        return error === undefined && JSON.stringify(replies.map(plain)) === JSON.stringify([plain(reply)])
      }),
      { numRuns: 500 }
    )
  })

  it("encodes commands as arrays of bulk strings, binary passed through", () => {
    const b = encodeCommands([
      ["SET", "ké", 12],
      ["GET", Uint8Array.of(0, 255), 10n]
    ])
    assert.strictEqual(
      Buffer.from(b).toString("latin1"),
      "*3\r\n$3\r\nSET\r\n$3\r\nk\u00c3\u00a9\r\n$2\r\n12\r\n*3\r\n$3\r\nGET\r\n$2\r\n\u0000\u00ff\r\n$2\r\n10\r\n"
    )
  })

  it("round-trips arbitrary commands through the decoder", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        (commands) => {
          const { replies } = decodeChunks([encodeCommands(commands)])
          return JSON.stringify(replies.map((r) => (r as Array<Uint8Array>).map(text))) === JSON.stringify(commands)
        }
      )
    )
  })

  it("refuses arguments that cannot be sent", () => {
    assert.throws(() => encodeCommands([["SET", "k", Number.NaN]]), /argument 2 is NaN/)
    assert.throws(() => encodeCommands([["SET", "k", Infinity]]), /cannot be sent/)
    assert.throws(() => encodeCommands([["SET", {} as never]]), /argument 1 has type object/)
    assert.throws(() => encodeCommands([[]]), /at least its name/)
  })
})

// The recorded FalkorDB replies: every one decodes to exactly one frame, whole and at random splits.
const fixturesDir = path.resolve(import.meta.dirname, "../../../../shared/fixtures")
describe("recorded FalkorDB replies", () => {
  const files = fs.existsSync(fixturesDir)
    ? fs.readdirSync(fixturesDir).flatMap((version) =>
        fs
          .readdirSync(path.join(fixturesDir, version))
          .filter((f) => f.endsWith(".json"))
          .map((f) => path.join(fixturesDir, version, f))
      )
    : []

  it("finds the fixtures", () => {
    assert.isAbove(files.length, 40)
  })

  it("decodes every recorded reply whole and split, to the same value", () => {
    let count = 0
    for (const file of files) {
      const scenario = JSON.parse(fs.readFileSync(file, "utf8")) as {
        exchanges: Array<{ reply_base64: string }>
      }
      for (const [index, exchange] of scenario.exchanges.entries()) {
        const b = new Uint8Array(Buffer.from(exchange.reply_base64, "base64"))
        const whole = decodeChunks([b])
        assert.isUndefined(whole.error, `${file} #${index}`)
        assert.strictEqual(whole.replies.length, 1, `${file} #${index}`)
        const cut = (index * 7919) % (b.length + 1)
        const split = decodeChunks([b.subarray(0, cut), b.subarray(cut)])
        assert.strictEqual(JSON.stringify(split.replies.map(plain)), JSON.stringify(whole.replies.map(plain)))
        count++
      }
    }
    assert.isAbove(count, 1000)
  })
})
