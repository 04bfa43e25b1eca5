import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Buffer } from "node:buffer"
import { EncodeError } from "../src/EncodeError.ts"
import { encodeCommand, encodeCommandParts, encodeCommands, LARGE_ARGUMENT } from "../src/Encoder.ts"

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1")

describe("Encoder", () => {
  it("encodes text, numbers and bigints with UTF-8 byte lengths", () => {
    assert.strictEqual(
      text(encodeCommand(["SET", "é", 12, 1.5, 9007199254740993n])),
      "*5\r\n$3\r\nSET\r\n$2\r\n\xc3\xa9\r\n$2\r\n12\r\n$3\r\n1.5\r\n$16\r\n9007199254740993\r\n"
    )
  })
  it("copies binary arguments through and batches in one buffer", () => {
    const out = encodeCommands([["SET", new Uint8Array([0, 13, 10, 255])], ["PING"]])
    assert.strictEqual(text(out), "*2\r\n$3\r\nSET\r\n$4\r\n\x00\r\n\xff\r\n*1\r\n$4\r\nPING\r\n")
  })
  it("encodes only the first count commands when told", () => {
    const commands = [["PING"], ["SET", "k", "v"], ["GET", "k"]]
    assert.strictEqual(text(encodeCommands(commands, 1)), "*1\r\n$4\r\nPING\r\n")
    assert.strictEqual(text(encodeCommands(commands, 3)), text(encodeCommands(commands)))
    assert.strictEqual(encodeCommands(commands, 0).length, 0)
  })
  it("rejects empty commands, non-finite numbers and foreign values", () => {
    const reason = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return e instanceof EncodeError ? e.reason : "other"
      }
      return "none"
    }
    assert.strictEqual(
      reason(() => encodeCommand([])),
      "EmptyCommand"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", Number.NaN])),
      "NonFiniteNumber"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", Infinity])),
      "NonFiniteNumber"
    )
    assert.strictEqual(
      reason(() => encodeCommand(["X", {} as never])),
      "InvalidArgument"
    )
  })
  it("matches the RESP definition for any arguments, short, long, non-ASCII or huge", () => {
    // The definition, written the obvious way: each argument's UTF-8 bytes behind its byte length.
    const reference = (commands: ReadonlyArray<ReadonlyArray<string | number | bigint | Uint8Array>>) =>
      Buffer.concat(
        commands.flatMap((command) => [
          Buffer.from(`*${command.length}\r\n`),
          ...command.flatMap((argument) => {
            const bytes = argument instanceof Uint8Array ? Buffer.from(argument) : Buffer.from(String(argument))
            return [Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from("\r\n")]
          })
        ])
      )
    const argument = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.integer().map((n) => String.fromCharCode(97 + (n & 15)).repeat(n & 0xfff)),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.bigInt(),
      fc.uint8Array({ maxLength: 300 })
    )
    fc.assert(
      fc.property(
        fc.array(fc.array(argument, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        (commands) => {
          assert.deepStrictEqual(Buffer.from(encodeCommands(commands)), reference(commands))
        }
      ),
      { numRuns: 300 }
    )
    // Batches share a pool: what was handed out stays intact while later batches (a huge one
    // that outgrows the pool included, and one that fails part-way) are encoded.
    const small = encodeCommand(["SET", "a", "1"])
    const big = Array.from({ length: 3 }, (_, i) => ["SET", `k${i}`, "é".repeat(400_000 + i)])
    const bigBytes = encodeCommands(big)
    assert.throws(() =>
      encodeCommands([
        ["SET", "x", "y".repeat(100_000)],
        ["X", Number.NaN]
      ])
    )
    const many = Array.from({ length: 5_000 }, (_, i) => ["SET", `key:${i}`, i])
    const manyBytes = encodeCommands(many)
    assert.strictEqual(text(encodeCommand(["PING"])), "*1\r\n$4\r\nPING\r\n")
    assert.strictEqual(text(small), "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert.deepStrictEqual(Buffer.from(bigBytes), reference(big))
    assert.deepStrictEqual(Buffer.from(manyBytes), reference(many))
  })
  it("encodeCommandParts: the same bytes as encodeCommands, large binary arguments by reference", () => {
    // Large buffers are filled from a seed rather than drawn byte by byte (fast-check would be slow).
    const filled = (length: number, seed: number) => {
      const bytes = new Uint8Array(length)
      for (let i = 0; i < length; i++) bytes[i] = (seed + i * 31) & 255
      return bytes
    }
    const argument = fc.oneof(
      { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
      { arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }), weight: 1 },
      { arbitrary: fc.integer(), weight: 1 },
      { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
      { arbitrary: fc.uint8Array({ maxLength: 200 }), weight: 2 },
      // Just below the threshold: copied, and enough of them outgrow the scratch (handed over, not copied).
      {
        arbitrary: fc
          .tuple(fc.integer({ min: 1, max: 64 }), fc.nat())
          .map(([n, seed]) => filled(LARGE_ARGUMENT - n, seed)),
        weight: 1
      },
      // At or above it: sent by reference.
      {
        arbitrary: fc
          .tuple(fc.integer({ min: 0, max: 4096 }), fc.nat())
          .map(([n, seed]) => filled(LARGE_ARGUMENT + n, seed)),
        weight: 2
      }
    )
    fc.assert(
      fc.property(
        fc.array(fc.array(argument, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (commands, skip) => {
          const count = commands.length - (skip % commands.length)
          const encoded = encodeCommandParts(commands, count)
          // Encoded after the parts were handed out: they must not share the scratch it reuses.
          const expected = Buffer.from(encodeCommands(commands, count))
          const parts = encoded instanceof Uint8Array ? [encoded] : encoded
          assert.deepStrictEqual(Buffer.concat(parts), expected)
          const large = commands
            .slice(0, count)
            .flat()
            .flatMap((argument) =>
              argument instanceof Uint8Array && argument.length >= LARGE_ARGUMENT ? [argument] : []
            )
          if (large.length === 0) assert.instanceOf(encoded, Uint8Array)
          assert.strictEqual(parts.length, 2 * large.length + 1)
          large.forEach((argument, k) => {
            assert.strictEqual(parts[2 * k + 1], argument, `large argument ${k} is the same object`)
          })
        }
      ),
      { numRuns: 150 }
    )
  })
  it("encodeCommandParts: a large argument's header ends the part before it, its terminator starts the next", () => {
    const blob = new Uint8Array(LARGE_ARGUMENT).fill(7)
    const parts = encodeCommandParts([
      ["SET", "k", blob],
      ["GET", "k"]
    ]) as ReadonlyArray<Uint8Array>
    assert.strictEqual(parts.length, 3)
    assert.strictEqual(text(parts[0]), `*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$${LARGE_ARGUMENT}\r\n`)
    assert.strictEqual(parts[1], blob)
    assert.strictEqual(text(parts[2]), "\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
    assert.throws(
      () =>
        encodeCommandParts([
          ["SET", "k", blob],
          ["X", Number.NaN]
        ]),
      EncodeError
    )
  })
})
