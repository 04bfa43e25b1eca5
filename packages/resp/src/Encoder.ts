/**
 * RESP command encoder.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { EncodeError } from "./EncodeError.ts"
import { AttributedReply, ErrorReply, MapReply, PushReply, type Reply, SetReply, VerbatimReply } from "./Reply.ts"

/**
 * One argument of a command. Numbers and bigints are sent as their decimal text.
 *
 * @since 0.1.0
 * @category models
 */
export type Argument = string | Uint8Array | number | bigint

/**
 * A command: its name followed by its arguments, each sent as a RESP bulk string.
 *
 * @since 0.1.0
 * @category models
 */
export type Command = ReadonlyArray<Argument>

/** Strings up to this length are copied byte by byte when ASCII (cheaper than a call into C++). */
const SHORT_STRING = 64
/** The scratch buffer commands are encoded into; one per process (encoding is synchronous). */
const SCRATCH_SIZE = 16 * 1024
/** A batch that grew the scratch past this gets the grown buffer itself, and the scratch starts small again. */
const SCRATCH_KEEP = 1024 * 1024

let scratch: Buffer = Buffer.allocUnsafeSlow(SCRATCH_SIZE)

/** Makes room for `need` more bytes after `used`, keeping what is written. */
const reserve = (used: number, need: number): Buffer => {
  if (used + need <= scratch.length) return scratch
  const grown = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, used + need))
  scratch.copy(grown, 0, 0, used)
  scratch = grown
  return grown
}

/** Writes `<tag><n>\r\n` (an array or bulk header) at `at`; returns the offset after it. */
const header = (buffer: Buffer, at: number, tag: number, n: number): number => {
  buffer[at++] = tag
  if (n < 10) buffer[at++] = 48 + n
  else if (n < 100) {
    buffer[at++] = 48 + ((n / 10) | 0)
    buffer[at++] = 48 + (n % 10)
  } else {
    const digits = String(n)
    for (let i = 0; i < digits.length; i++) buffer[at++] = digits.charCodeAt(i)
  }
  buffer[at++] = 13
  buffer[at++] = 10
  return at
}

/** Writes one string argument as a bulk string at `at`; returns the offset after it. */
const bulkString = (value: string, at: number): number => {
  const length = value.length
  if (length <= SHORT_STRING) {
    // ASCII (the common case): its byte length is its length, copied without a call into C++.
    let buffer = reserve(at, length + 16)
    const body = header(buffer, at, 36, length)
    let i = 0
    for (; i < length; i++) {
      const code = value.charCodeAt(i)
      if (code > 127) break
      buffer[body + i] = code
    }
    if (i === length) {
      buffer[body + length] = 13
      buffer[body + length + 1] = 10
      return body + length + 2
    }
    // Not ASCII: start over with the UTF-8 length.
    const bytes = Buffer.byteLength(value)
    buffer = reserve(at, bytes + 16)
    const start = header(buffer, at, 36, bytes)
    buffer.write(value, start, bytes, "utf8")
    buffer[start + bytes] = 13
    buffer[start + bytes + 1] = 10
    return start + bytes + 2
  }
  const bytes = Buffer.byteLength(value)
  const buffer = reserve(at, bytes + 16)
  const start = header(buffer, at, 36, bytes)
  buffer.write(value, start, bytes, "utf8")
  buffer[start + bytes] = 13
  buffer[start + bytes + 1] = 10
  return start + bytes + 2
}

/** Writes argument `index` of a command at `at`; returns the offset after it. */
const bulkArgument = (argument: unknown, index: number, at: number): number => {
  switch (typeof argument) {
    case "string":
      return bulkString(argument, at)
    case "number":
      if (!Number.isFinite(argument)) {
        throw new EncodeError("NonFiniteNumber", `argument ${index} is ${argument}, which cannot be sent`)
      }
      return bulkString(String(argument), at)
    case "bigint":
      return bulkString(argument.toString(), at)
    default: {
      if (!(argument instanceof Uint8Array)) {
        throw new EncodeError(
          "InvalidArgument",
          `argument ${index} has type ${argument === null ? "null" : typeof argument}; expected string, number, bigint or Uint8Array`
        )
      }
      const buffer = reserve(at, argument.length + 16)
      const start = header(buffer, at, 36, argument.length)
      buffer.set(argument, start)
      const end = start + argument.length
      buffer[end] = 13
      buffer[end + 1] = 10
      return end + 2
    }
  }
}

/**
 * A `Uint8Array` argument of at least this many bytes is not copied by `encodeCommandParts`:
 * it becomes a part of its own, by reference (128 KiB: a smaller copy costs little and
 * keeps the batch in one buffer).
 *
 * @example
 * ```ts
 * import { LARGE_ARGUMENT } from "@effect-falkordb/resp/Encoder"
 *
 * const copied = new Uint8Array(LARGE_ARGUMENT - 1) // copied into the encoded bytes
 * const shared = new Uint8Array(LARGE_ARGUMENT) // sent as it is
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const LARGE_ARGUMENT = 128 * 1024

/** Hands out the first `at` bytes of the scratch; the scratch is free to be written from 0 again. */
const finish = (at: number): Uint8Array => {
  if (scratch.length > SCRATCH_KEEP) {
    // A huge batch: hand over the grown buffer itself rather than copy it, and do not keep it.
    const out = scratch.subarray(0, at)
    scratch = Buffer.allocUnsafeSlow(SCRATCH_SIZE)
    return out
  }
  const out = Buffer.allocUnsafe(at)
  scratch.copy(out, 0, 0, at)
  return out
}

/**
 * Encodes a batch of commands into one buffer, each command as an array of bulk strings.
 * The batch is written into a reused scratch buffer (no intermediate strings) and copied
 * out once. `count` encodes only the first `count` commands (a caller that reuses its array).
 * Throws `EncodeError` for an argument that cannot be sent or an empty command.
 *
 * @example
 * ```ts
 * import { encodeCommands } from "@effect-falkordb/resp/Encoder"
 *
 * // One buffer for a pipeline of two commands; numbers go as their decimal text.
 * const bytes: Uint8Array = encodeCommands([
 *   ["SET", "counter", 41],
 *   ["INCR", "counter"]
 * ])
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeCommands = (commands: ReadonlyArray<Command>, count: number = commands.length): Uint8Array => {
  let at = 0
  for (let c = 0; c < count; c++) {
    const command = commands[c]
    if (command.length === 0) throw new EncodeError("EmptyCommand", "a command needs at least its name")
    at = header(reserve(at, 16), at, 42, command.length)
    for (let i = 0; i < command.length; i++) at = bulkArgument(command[i], i, at)
  }
  return finish(at)
}

/**
 * Encodes a batch of commands like `encodeCommands`, without copying large binary arguments:
 * a `Uint8Array` of at least `LARGE_ARGUMENT` bytes is a part of its own, the very same
 * object, between the bytes up to its bulk header and the bytes from its `\r\n` on. Their
 * concatenation equals `encodeCommands(commands, count)`; with no large argument the result
 * is that one buffer. Write the parts in order (e.g. corked); the caller must leave a large
 * argument unchanged until it is written.
 *
 * @example
 * ```ts
 * import { encodeCommandParts, LARGE_ARGUMENT } from "@effect-falkordb/resp/Encoder"
 *
 * const blob = new Uint8Array(LARGE_ARGUMENT)
 * const encoded = encodeCommandParts([["SET", "blob", blob], ["GET", "blob"]])
 * // "*3\r\n$3\r\nSET\r\n$4\r\nblob\r\n$131072\r\n", blob itself, "\r\n*2\r\n$3\r\nGET\r\n…"
 * const parts: ReadonlyArray<Uint8Array> = encoded instanceof Uint8Array ? [encoded] : encoded
 * const same = parts[1] === blob // true: by reference, not copied
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeCommandParts = (
  commands: ReadonlyArray<Command>,
  count: number = commands.length
): Uint8Array | ReadonlyArray<Uint8Array> => {
  let parts: Array<Uint8Array> | undefined
  let at = 0
  for (let c = 0; c < count; c++) {
    const command = commands[c]
    if (command.length === 0) throw new EncodeError("EmptyCommand", "a command needs at least its name")
    at = header(reserve(at, 16), at, 42, command.length)
    for (let i = 0; i < command.length; i++) {
      const argument = command[i]
      if (typeof argument === "object" && argument instanceof Uint8Array && argument.length >= LARGE_ARGUMENT) {
        at = header(reserve(at, 16), at, 36, argument.length)
        if (parts === undefined) parts = []
        parts.push(finish(at), argument)
        // The scratch starts over (at least SCRATCH_SIZE long) with the argument's terminator.
        scratch[0] = 13
        scratch[1] = 10
        at = 2
      } else at = bulkArgument(argument, i, at)
    }
  }
  if (parts === undefined) return finish(at)
  parts.push(finish(at))
  return parts
}

/**
 * Encodes one command.
 *
 * @example
 * ```ts
 * import { encodeCommand } from "@effect-falkordb/resp/Encoder"
 *
 * const bytes = encodeCommand(["SET", "greeting", "hello", "EX", 60])
 * // "*5\r\n$3\r\nSET\r\n$8\r\ngreeting\r\n$5\r\nhello\r\n$2\r\nEX\r\n$2\r\n60\r\n"
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeCommand = (command: Command): Uint8Array => encodeCommands([command])

const formatDouble = (value: number): string =>
  Number.isNaN(value) ? "nan" : value === Infinity ? "inf" : value === -Infinity ? "-inf" : String(value)

const pushReply = (parts: Array<Uint8Array | string>, reply: Reply, protocol: 2 | 3): void => {
  const three = protocol === 3
  if (reply === null) parts.push(three ? "_\r\n" : "$-1\r\n")
  else if (typeof reply === "string") {
    if (/[\r\n]/.test(reply)) {
      parts.push(`$${Buffer.byteLength(reply)}\r\n${reply}\r\n`)
    } else parts.push(`+${reply}\r\n`)
  } else if (reply instanceof Uint8Array) parts.push(`$${reply.length}\r\n`, reply, "\r\n")
  else if (typeof reply === "number") {
    if (Number.isInteger(reply) && !Object.is(reply, -0)) parts.push(`:${reply}\r\n`)
    else if (three) parts.push(`,${formatDouble(reply)}\r\n`)
    else {
      const text = formatDouble(reply)
      parts.push(`$${text.length}\r\n${text}\r\n`)
    }
  } else if (typeof reply === "bigint") {
    if (reply >= -(2n ** 63n) && reply < 2n ** 63n) parts.push(`:${reply}\r\n`)
    else if (three) parts.push(`(${reply}\r\n`)
    else parts.push(`$${reply.toString().length}\r\n${reply}\r\n`)
  } else if (typeof reply === "boolean") parts.push(three ? (reply ? "#t\r\n" : "#f\r\n") : reply ? ":1\r\n" : ":0\r\n")
  else if (reply instanceof ErrorReply) {
    if (/[\r\n]/.test(reply.message)) {
      if (three) parts.push(`!${Buffer.byteLength(reply.message)}\r\n${reply.message}\r\n`)
      else parts.push(`-${reply.message.replace(/[\r\n]+/g, " ")}\r\n`)
    } else parts.push(`-${reply.message}\r\n`)
  } else if (reply instanceof MapReply) {
    parts.push(three ? `%${reply.size}\r\n` : `*${reply.flat.length}\r\n`)
    for (const item of reply.flat) pushReply(parts, item, protocol)
  } else if (reply instanceof SetReply || reply instanceof PushReply) {
    const type = !three ? "*" : reply instanceof SetReply ? "~" : ">"
    parts.push(`${type}${reply.items.length}\r\n`)
    for (const item of reply.items) pushReply(parts, item, protocol)
  } else if (reply instanceof VerbatimReply) {
    if (three) parts.push(`=${reply.text.length + 4}\r\n${reply.format}:`, reply.text, "\r\n")
    else parts.push(`$${reply.text.length}\r\n`, reply.text, "\r\n")
  } else if (reply instanceof AttributedReply) {
    if (three) {
      parts.push(`|${reply.attributes.size}\r\n`)
      for (const item of reply.attributes.flat) pushReply(parts, item, protocol)
    }
    pushReply(parts, reply.value, protocol)
  } else {
    const items = reply as ReadonlyArray<Reply>
    parts.push(`*${items.length}\r\n`)
    for (const item of items) pushReply(parts, item, protocol)
  }
}

/**
 * Encodes a reply, as a server would send it. In protocol 2 the RESP3-only types fall back
 * to their RESP2 forms (map → flat array, set/push → array, boolean → integer, double →
 * bulk, null → `$-1`, attributes dropped). Used by test servers and round-trip tests.
 *
 * @example
 * ```ts
 * import { encodeReply } from "@effect-falkordb/resp/Encoder"
 * import { ErrorReply, MapReply } from "@effect-falkordb/resp/Reply"
 *
 * // What a server sends: the same values in RESP2 or RESP3.
 * const resp3 = encodeReply(new MapReply(["role", "master"]), 3) // "%1\r\n…"
 * const resp2 = encodeReply([1, null, new ErrorReply("ERR no")], 2)
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeReply = (reply: Reply, protocol: 2 | 3): Uint8Array => {
  const parts: Array<Uint8Array | string> = []
  pushReply(parts, reply, protocol)
  return Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)))
}
