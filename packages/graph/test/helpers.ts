// Test doubles of the RedisConnection service: a scripted one and an in-memory fixture replay.
import type { Command } from "@effect-falkordb/resp/Encoder"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import {
  type CommandOptions,
  makeExecuteAll,
  makeService,
  RedisConnection
} from "@effect-falkordb/redis/RedisConnection"
import { fromErrorReply, type RedisError } from "@effect-falkordb/redis/RedisError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { FalkorError } from "../src/FalkorError.ts"
import * as CompactReply from "../src/internal/CompactReply.ts"
import type { FalkorValue } from "../src/Value.ts"
import { decodeReply, type Scenario } from "./fixtures.ts"

export const resp = (text: string): Reply => {
  const out: Array<Reply> = []
  const error = new Decoder((r) => out.push(r)).feed(Buffer.from(text.replace(/\n/g, "\r\n")))
  if (error !== undefined) throw error
  if (out.length !== 1) throw new Error(`expected one reply, got ${out.length}`)
  return out[0]!
}

export const bulk = (s: string) => `$${Buffer.byteLength(s)}\n${s}\n`

/** A verbose schema-procedure reply listing `names`. */
export const nameList = (column: string, names: ReadonlyArray<string>): Reply =>
  resp(
    `*3\n*1\n${bulk(column)}*${names.length}\n${names.map((n) => `*1\n${bulk(n)}`).join("")}*1\n${bulk("Cached execution: 0")}`
  )

export const commandText = (command: Command) => command.map(String)

/** A RedisConnection whose replies come from `handler`; top-level error replies fail like the engine. */
export const scripted = (
  handler: (command: ReadonlyArray<string>) => Effect.Effect<Reply, RedisError>,
  target = "test:1"
) => {
  const calls: Array<ReadonlyArray<string>> = []
  const options: Array<CommandOptions | undefined> = []
  const execute = (command: Command, commandOptions?: CommandOptions) =>
    Effect.suspend(() => {
      const args = commandText(command)
      calls.push(args)
      options.push(commandOptions)
      return handler(args)
    }).pipe(
      Effect.flatMap((reply) =>
        reply instanceof ErrorReply ? Effect.fail(fromErrorReply(reply, String(command[0]))) : Effect.succeed(reply)
      )
    )
  const service = makeService({
    info: { strategy: "mock", connections: 1, window: 1, target, protocol: 2 },
    execute,
    submit: () => Effect.die("submit is not scripted"),
    pipeline: (commands) => Effect.forEach(commands, (c) => execute(c)),
    executeAll: makeExecuteAll((commands, o) => Effect.forEach(commands, (c) => Effect.result(execute(c, o)))),
    withExclusive: () => Effect.die("withExclusive is not scripted")
  })
  return { calls, options, service, layer: Layer.succeed(RedisConnection, service) }
}

/** Serves one scenario's compact pass (and its schema refresh) by exact request, queue per key. */
export const replay = (scenario: Scenario) => {
  const queues = new Map<string, Array<string>>()
  for (const e of scenario.exchanges) {
    if (e.pass !== "compact") continue
    const key = JSON.stringify(e.request)
    const q = queues.get(key) ?? []
    q.push(e.reply_base64)
    queues.set(key, q)
  }
  return scripted((args) => {
    const q = queues.get(JSON.stringify(args))
    if (q === undefined) return Effect.succeed(new ErrorReply(`ERR no recording for ${JSON.stringify(args)}`))
    const next = q.length > 1 ? q.shift()! : q[0]!
    return Effect.succeed(decodeReply(next))
  }, `replay:${scenario.scenario}`)
}

/** The server's line of a server-classified failure, if it has one. */
export const serverMessageOf = (e: FalkorError): string | undefined =>
  "serverMessage" in e.reason ? e.reason.serverMessage : undefined

/** A row decoded with names that must all be known (a miss is a test failure). */
export const decodeKnown = (
  raw: Reply,
  row: number,
  columns: ReadonlyArray<string>,
  names: CompactReply.Names
): Array<FalkorValue> => {
  const values = CompactReply.decodeRow(raw, row, columns, names)
  if (CompactReply.isSchemaMiss(values)) throw new Error(`row ${row} names an unknown ${values.kind} id ${values.id}`)
  return values
}

/** A cell decoded with names that must all be known (a miss is a test failure). */
export const cellKnown = (cell: Reply, names: CompactReply.Names): FalkorValue => {
  const value = CompactReply.decodeCell(cell, names)
  if (CompactReply.isSchemaMiss(value)) throw new Error(`the cell names an unknown ${value.kind} id ${value.id}`)
  return value
}
