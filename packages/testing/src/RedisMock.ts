/**
 * A `RedisConnection` backed by `ioredis-mock` (an in-memory Redis), for tests of code that
 * sends plain Redis commands through this client. No socket, no server.
 *
 * Replies have the types the real client decodes from RESP2, so code under test sees the
 * same values against the mock and against `redis-server`:
 *
 * | mock result | reply |
 * |---|---|
 * | status of a status command (`SET`, `PING`, `TYPE`, `MSET`, `FLUSHALL` …) | `string` (`"OK"`) |
 * | any other string or Buffer | `Uint8Array` (bulk string, bytes preserved) |
 * | integer | `number` |
 * | nil | `null` |
 * | array | `ReadonlyArray<Reply>` |
 * | object (`HGETALL`) | flat array `[field, value, …]` in insertion order, as RESP2 sends it |
 *
 * Errors become a `RedisError` with reason `Reply` and the Redis code: ioredis-mock's "Key … does not
 * contain a list" is reported as Redis' `WRONGTYPE …`, an arithmetic command on a
 * non-integer as `ERR value is not an integer or out of range`, a message without a code
 * gets `ERR `, and a command ioredis-mock lacks is `ERR unknown command '…'` with a note
 * that the mock does not implement it.
 *
 * Connection semantics follow the real client: one connection, every command in submit
 * order; `pipeline` returns error replies as values; transactions (`MULTI`/`EXEC`,
 * `WATCH`), blocking commands and subscriptions are refused on the shared face with
 * a `RedisError` with reason `NotMultiplexable` and work through `withExclusive`,
 * which lends a connection of its own (its own `WATCH` set, over the same data).
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { createRequire } from "node:module"
import * as CommandKeys from "@effect-falkordb/redis/CommandKeys"
import {
  type CommandOptions,
  type ExclusiveConnection,
  type Future,
  makeExecuteAll,
  makeService,
  RedisConnection
} from "@effect-falkordb/redis/RedisConnection"
import {
  Closed,
  fromErrorReply,
  InvalidArgument,
  NotMultiplexable,
  RedisError,
  Timeout
} from "@effect-falkordb/redis/RedisError"
import type { Argument, Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** The slice of ioredis-mock's client this module uses (it ships no type declarations). */
interface MockClient {
  readonly [command: string]: unknown
  disconnect(): void
  flushall(): Promise<unknown>
}
type MockConstructor = new (options: {
  host: string
  port: number
  db: number
  data?: Record<string, unknown>
}) => MockClient

const load = createRequire(import.meta.url)
let loaded: MockConstructor | undefined
const mockConstructor = (): MockConstructor => {
  loaded ??= load("ioredis-mock") as MockConstructor
  return loaded
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RedisMockOptions {
  /**
   * Initial data, in ioredis-mock's form: `{ key: "value", list: ["a"], hash: { f: "1" } }`
   * (strings, arrays for lists, `Set` for sets, objects for hashes).
   */
  readonly data?: Record<string, unknown> | undefined
  /** Names the data set; mocks made with the same name share it. Default: a fresh one each time. */
  readonly name?: string | undefined
}

/** Commands whose successful string result is a status reply (`+OK`), not a bulk string. */
const STATUS = new Set([
  "SET",
  "MSET",
  "HMSET",
  "SETEX",
  "PSETEX",
  "TYPE",
  "FLUSHALL",
  "FLUSHDB",
  "RENAME",
  "LTRIM",
  "LSET",
  "SELECT",
  "QUIT",
  "AUTH",
  "WATCH",
  "UNWATCH",
  "DISCARD",
  "MULTI",
  "RESTORE",
  "SWAPDB",
  "SAVE",
  "BGSAVE",
  "BGREWRITEAOF",
  "PFMERGE",
  "XGROUP",
  "XSETID",
  "RESET"
])

const isStatus = (name: string, command: Command): boolean => {
  if (name === "PING") return command.length === 1
  // `SET … GET` answers the old value as a bulk string.
  if (name === "SET") return !command.some((arg, i) => i > 2 && typeof arg === "string" && arg.toUpperCase() === "GET")
  return STATUS.has(name)
}

const encoder = new TextEncoder()

const toArgument = (argument: Argument, index: number): string | Buffer => {
  if (typeof argument === "string") return argument
  if (typeof argument === "bigint") return argument.toString()
  if (typeof argument === "number") {
    if (!Number.isFinite(argument)) {
      throw new RedisError({
        reason: new InvalidArgument({ message: `argument ${index} is ${argument}, which cannot be sent` })
      })
    }
    return String(argument)
  }
  if (argument instanceof Uint8Array) return Buffer.from(argument.buffer, argument.byteOffset, argument.byteLength)
  throw new RedisError({
    reason: new InvalidArgument({
      message: `argument ${index} has type ${argument === null ? "null" : typeof argument}; expected string, number, bigint or Uint8Array`
    })
  })
}

const NOT_INTEGER = "ERR value is not an integer or out of range"

/** Converts what ioredis-mock resolved to the reply the real client would have decoded. */
const toReply = (value: unknown, status: boolean): Reply => {
  if (value === null || value === undefined) return null
  if (typeof value === "string") return status ? value : encoder.encode(value)
  if (value instanceof Uint8Array) return status ? Buffer.from(value).toString("utf8") : value
  if (typeof value === "number") {
    // ioredis-mock answers INCR on a non-integer with NaN where Redis replies an error.
    if (Number.isNaN(value)) return new ErrorReply(NOT_INTEGER)
    return Number.isInteger(value) ? value : encoder.encode(String(value))
  }
  if (typeof value === "bigint") return value
  if (typeof value === "boolean") return value ? 1 : 0
  if (value instanceof Error) return errorReply(value)
  if (Array.isArray(value)) return value.map((item) => toReply(item, false))
  if (typeof value === "object") {
    const flat: Array<Reply> = []
    for (const [field, item] of Object.entries(value as Record<string, unknown>)) {
      flat.push(encoder.encode(field), toReply(item, false))
    }
    return flat
  }
  return new ErrorReply(`ERR ioredis-mock returned a ${typeof value}, which has no RESP form`)
}

const errorReply = (cause: unknown): ErrorReply => {
  const message = cause instanceof Error ? cause.message : String(cause)
  if (/^Key .* does not contain a (list|set|sorted set|hash)$/.test(message)) {
    return new ErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value")
  }
  const word = message.split(" ", 1)[0] ?? ""
  return new ErrorReply(/^[A-Z][A-Z_]*$/.test(word) ? message : `ERR ${message}`)
}

const unknownCommand = (command: Command): ErrorReply => {
  const name = String(command[0])
  const args = command
    .slice(1, 4)
    .map((a) => `'${typeof a === "string" ? a : a instanceof Uint8Array ? Buffer.from(a).toString() : String(a)}'`)
    .join(" ")
  return new ErrorReply(
    `ERR unknown command '${name}', with args beginning with: ${args} (ioredis-mock does not implement it)`
  )
}

/** Runs one command against one mock client; never rejects. */
const call = async (client: MockClient, command: Command): Promise<Reply> => {
  const name = typeof command[0] === "string" ? command[0] : Buffer.from(String(command[0])).toString()
  const upper = name.toUpperCase()
  const lower = name.toLowerCase()
  const args = command.slice(1).map((a, i) => toArgument(a, i + 1))
  const status = isStatus(upper, command)
  // The Buffer variants keep binary values intact; status commands read as text either way.
  const method = (client[`${lower}Buffer`] ?? client[lower]) as ((...a: Array<unknown>) => unknown) | undefined
  if (typeof method !== "function") return unknownCommand(command)
  try {
    const result = await (method as (...a: Array<unknown>) => unknown).apply(client, args)
    return toReply(result, status)
  } catch (cause) {
    if (cause instanceof TypeError && cause.message.startsWith("Unsupported command")) return unknownCommand(command)
    return errorReply(cause)
  }
}

const commandName = (command: Command): string => String(command[0] ?? "").toUpperCase()

const TRANSACTION = new Set(["MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH"])

const refuseShared = (command: Command): RedisError | undefined => {
  const name = commandName(command)
  if (TRANSACTION.has(name) || CommandKeys.isBlocking(command) || CommandKeys.isConnectionState(command)) {
    return new RedisError({
      reason: new NotMultiplexable({
        command: name,
        message: `${name} changes or holds the connection; run it through withExclusive`
      })
    })
  }
  return undefined
}

let instances = 0

/**
 * Creates the mock connection for the life of the scope. After the scope closes, calls
 * fail with reason `Closed`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("RedisMock.make")(function* (options: RedisMockOptions = {}) {
  // ioredis-mock is a dependency of this package: failing to load it is a defect, not a result.
  const Mock = yield* Effect.sync(mockConstructor)
  // ioredis-mock shares data between clients of the same host:port/db; a unique host
  // gives each mock its own data set unless a name asks to share.
  const host = options.name ?? `redis-mock-${++instances}-${process.pid}`
  const target = `ioredis-mock://${host}/0`
  const clients: Array<MockClient> = []
  const open = (): MockClient => {
    const client = new Mock({
      host,
      port: 6379,
      db: 0,
      ...(options.data === undefined ? {} : { data: options.data })
    })
    clients.push(client)
    return client
  }
  const shared = open()
  let closed = false
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
      for (const client of clients) client.disconnect()
    })
  )

  /** A connection: a promise chain that runs its work one piece at a time, in order. */
  const lane = () => {
    let tail: Promise<unknown> = Promise.resolve()
    return <A>(work: () => Promise<A>): Promise<A> => {
      const next = tail.then(work)
      tail = next
      return next
    }
  }
  const sharedQueue = lane()
  const sharedLane = (command: Command) => sharedQueue(() => call(shared, command))

  const closedError = () =>
    new RedisError({ reason: new Closed({ written: false, message: `the mock connection ${target} is closed` }) })

  const admit = (command: Command): Effect.Effect<void, RedisError> =>
    Effect.suspend((): Effect.Effect<void, RedisError> => {
      if (closed) return Effect.fail(closedError())
      if (command.length === 0) {
        return Effect.fail(
          new RedisError({ reason: new InvalidArgument({ message: "a command needs at least its name" }) })
        )
      }
      try {
        for (let i = 0; i < command.length; i++) toArgument(command[i]!, i)
      } catch (error) {
        return Effect.fail(error as RedisError)
      }
      return Effect.void
    })

  const settle = (command: Command, reply: Reply): Effect.Effect<Reply, RedisError> =>
    reply instanceof ErrorReply ? Effect.fail(fromErrorReply(reply, commandName(command))) : Effect.succeed(reply)

  const withTimeout = <A>(
    effect: Effect.Effect<A, RedisError>,
    timeout: Duration.Input | undefined
  ): Effect.Effect<A, RedisError> =>
    timeout === undefined
      ? effect
      : Effect.timeoutOrElse(effect, {
          duration: timeout,
          orElse: () => {
            const millis = Duration.toMillis(Duration.fromInputUnsafe(timeout))
            return Effect.fail(
              new RedisError({
                reason: new Timeout({ written: true, timeout: millis, message: `no reply within ${millis} ms` })
              })
            )
          }
        })

  const run = (send: (command: Command) => Promise<Reply>, command: Command, options?: CommandOptions) =>
    withTimeout(
      Effect.flatMap(
        Effect.promise(() => send(command)),
        (reply) => settle(command, reply)
      ),
      options?.timeout
    )

  const execute = (command: Command, options?: CommandOptions): Effect.Effect<Reply, RedisError> =>
    Effect.flatMap(admit(command), () => {
      const refused = refuseShared(command)
      return refused === undefined ? run(sharedLane, command, options) : Effect.fail(refused)
    })

  const submit = (command: Command, options?: CommandOptions): Effect.Effect<Future<Reply>, RedisError> =>
    Effect.flatMap(admit(command), () =>
      Effect.suspend(() => {
        const refused = refuseShared(command)
        if (refused !== undefined) return Effect.fail(refused)
        // On its way now: the lane fixes its order among every other command.
        let done: Reply | undefined
        let arrived = false
        const promise = sharedLane(command).then((reply) => {
          done = reply
          arrived = true
          return reply
        })
        const awaitReply = Effect.flatMap(
          Effect.promise(() => promise),
          (reply) => settle(command, reply)
        )
        const future: Future<Reply> = {
          await: withTimeout(awaitReply, options?.timeout),
          awaitTimeout: (timeout) => withTimeout(awaitReply, timeout),
          poll: Effect.suspend(() => (arrived ? settle(command, done as Reply) : Effect.succeed(undefined)))
        }
        return Effect.succeed(future)
      })
    )

  /** Checks every command, then queues them all on the lane, in order, before any reply is awaited. */
  const queueAll = (
    send: (command: Command) => Promise<Reply>,
    commands: ReadonlyArray<Command>,
    check: (command: Command) => RedisError | undefined
  ): Effect.Effect<Array<Promise<Reply>>, RedisError> =>
    Effect.gen(function* () {
      for (const command of commands) {
        yield* admit(command)
        const refused = check(command)
        if (refused !== undefined) return yield* refused
      }
      return commands.map((command) => send(command))
    })

  const pipelineOn = (
    send: (command: Command) => Promise<Reply>,
    commands: ReadonlyArray<Command>,
    options: CommandOptions | undefined,
    check: (command: Command) => RedisError | undefined
  ): Effect.Effect<ReadonlyArray<Reply>, RedisError> =>
    // Queued together: contiguous, in order.
    Effect.flatMap(queueAll(send, commands, check), (replies) =>
      withTimeout(
        Effect.promise(() => Promise.all(replies)),
        options?.timeout
      )
    )

  /**
   * Independent commands: all checked, then all queued on the lane in order (other callers'
   * commands may come between them), each settled to a result with its own timeout.
   */
  const executeAllOn = (
    send: (command: Command) => Promise<Reply>,
    check: (command: Command) => RedisError | undefined
  ) =>
    makeExecuteAll((commands, options) =>
      Effect.flatMap(queueAll(send, commands, check), (replies) =>
        Effect.forEach(
          replies,
          (reply, i) =>
            Effect.result(
              withTimeout(
                Effect.flatMap(
                  Effect.promise(() => reply),
                  (settled) => settle(commands[i]!, settled)
                ),
                options?.timeout
              )
            ),
          { concurrency: "unbounded" }
        )
      )
    )

  const exclusive = (client: MockClient): ExclusiveConnection => {
    const enqueue = lane()
    const send = (command: Command) => enqueue(() => call(client, command))
    // MULTI … EXEC is kept here: ioredis-mock runs transactions as pipeline objects, not as
    // commands, so this connection queues them itself and runs them through `multi()`.
    let queued: Array<Command> | undefined
    let aborted = false
    const transactional = async (command: Command): Promise<Reply> => {
      const name = commandName(command)
      if (name === "MULTI") {
        if (queued !== undefined) return new ErrorReply("ERR MULTI calls can not be nested")
        queued = []
        aborted = false
        return "OK"
      }
      if (name === "DISCARD") {
        if (queued === undefined) return new ErrorReply("ERR DISCARD without MULTI")
        queued = undefined
        return send(["UNWATCH"])
      }
      if (name === "EXEC") {
        if (queued === undefined) return new ErrorReply("ERR EXEC without MULTI")
        const batch = queued
        queued = undefined
        if (aborted) {
          await send(["UNWATCH"])
          return new ErrorReply("EXECABORT Transaction discarded because of previous errors.")
        }
        return enqueue(() => runTransaction(client, batch))
      }
      if (queued !== undefined) {
        if (name === "WATCH") return new ErrorReply("ERR WATCH inside MULTI is not allowed")
        const method = client[`${name.toLowerCase()}Buffer`] ?? client[name.toLowerCase()]
        if (typeof method !== "function") {
          aborted = true
          return unknownCommand(command)
        }
        queued.push(command)
        return "QUEUED"
      }
      return send(command)
    }
    return {
      execute: (command, options) => Effect.flatMap(admit(command), () => run(transactional, command, options)),
      pipeline: (commands, options) => pipelineOn(transactional, commands, options, () => undefined),
      executeAll: executeAllOn(transactional, () => undefined)
    }
  }

  const runTransaction = async (client: MockClient, batch: ReadonlyArray<Command>): Promise<Reply> => {
    // multi() honours this client's WATCH set: a watched key changed by anyone else makes
    // exec() resolve null, as Redis' EXEC does.
    const multi = (client.multi as () => Record<string, (...a: Array<unknown>) => unknown>).call(client)
    for (const command of batch) {
      const lower = String(command[0]).toLowerCase()
      const method = multi[`${lower}Buffer`] ?? multi[lower]
      if (typeof method !== "function") return unknownCommand(command)
      method.apply(
        multi,
        command.slice(1).map((a, i) => toArgument(a, i + 1))
      )
    }
    const results = (await (multi.exec as () => Promise<Array<[unknown, unknown]> | null>).call(multi)) ?? null
    if (results === null) return null
    return results.map(([error, value], i) =>
      error != null ? errorReply(error) : toReply(value, isStatus(commandName(batch[i]!), batch[i]!))
    )
  }

  const service: RedisConnection["Service"] = makeService({
    info: { strategy: "mock", connections: 1, window: 1, target, protocol: 2 },
    execute,
    submit,
    pipeline: (commands, options) => pipelineOn(sharedLane, commands, options, refuseShared),
    executeAll: executeAllOn(sharedLane, refuseShared),
    withExclusive: <A, E, R>(use: (connection: ExclusiveConnection) => Effect.Effect<A, E, R>) =>
      Effect.suspend((): Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>> => {
        if (closed) return Effect.fail(closedError())
        return Effect.acquireUseRelease(
          Effect.sync(open),
          (client) => Effect.scoped(use(exclusive(client))),
          (client) =>
            Effect.sync(() => {
              client.disconnect()
              clients.splice(clients.indexOf(client), 1)
            })
        )
      })
  })
  return service
})

/**
 * The mock as a `RedisConnection` layer.
 *
 * @example
 * ```ts
 * import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
 * import * as RedisMock from "@effect-falkordb/testing/RedisMock"
 * import { Effect } from "effect"
 *
 * // Code that sends plain Redis commands, tested in memory.
 * const program = Effect.gen(function* () {
 *   const redis = yield* RedisConnection
 *   yield* redis.execute(["LPUSH", "queue", "job-1"])
 *   return yield* redis.execute(["LLEN", "queue"]) // 2
 * }).pipe(Effect.provide(RedisMock.layer({ data: { queue: ["job-0"] } })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: RedisMockOptions = {}): Layer.Layer<RedisConnection> =>
  Layer.effect(RedisConnection, make(options))
