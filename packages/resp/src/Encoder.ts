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

const argumentText = (argument: unknown, index: number): string | Uint8Array => {
  switch (typeof argument) {
    case "string":
      return argument
    case "number":
      if (!Number.isFinite(argument)) {
        throw new EncodeError("NonFiniteNumber", `argument ${index} is ${argument}, which cannot be sent`)
      }
      return String(argument)
    case "bigint":
      return argument.toString()
    default:
      if (argument instanceof Uint8Array) return argument
      throw new EncodeError(
        "InvalidArgument",
        `argument ${index} has type ${argument === null ? "null" : typeof argument}; expected string, number, bigint or Uint8Array`
      )
  }
}

/**
 * Encodes a batch of commands into one buffer, each command as an array of bulk strings.
 * All-string batches are built as one string and written with a single UTF-8 encode.
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
export const encodeCommands = (commands: ReadonlyArray<Command>): Uint8Array => {
  let text = ""
  const parts: Array<Uint8Array> = []
  for (const command of commands) {
    if (command.length === 0) throw new EncodeError("EmptyCommand", "a command needs at least its name")
    text += `*${command.length}\r\n`
    for (let i = 0; i < command.length; i++) {
      const value = argumentText(command[i], i)
      if (typeof value === "string") {
        text += `$${Buffer.byteLength(value)}\r\n${value}\r\n`
      } else {
        parts.push(Buffer.from(`${text}$${value.length}\r\n`), value)
        text = "\r\n"
      }
    }
  }
  if (parts.length === 0) return Buffer.from(text)
  parts.push(Buffer.from(text))
  return Buffer.concat(parts)
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
