/**
 * The strategies behind the `RedisConnection` service: faces over one engine (single),
 * several engines (multiplexed) and a pool of engines each lent to one caller (pooled).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Cause from "effect/Cause"
import * as Pool from "effect/Pool"
import * as Scope from "effect/Scope"
import * as Channel from "effect/Channel"
import * as Deferred from "effect/Deferred"
import * as Stream from "effect/Stream"
import type * as Arr from "effect/Array"
import type {
  CommandOptions,
  ConnectionInfo,
  ExclusiveConnection,
  ExecuteAll as ExecuteAllFace,
  ExecuteAllOptions,
  Future,
  PipelineOptions,
  RedisConnection,
  ReplyFold,
  ReplyPart,
  StreamOptions
} from "../RedisConnection.ts"
import { makeService } from "./MakeService.ts"
import {
  BatchSpansEngines,
  BatchTooLarge,
  Closed,
  InvalidArgument,
  NotMultiplexable,
  RedisError,
  Unsupported
} from "../RedisError.ts"
import type { ResolvedOptions } from "../RedisOptions.ts"
import * as CommandKeys from "../CommandKeys.ts"
import * as ElasticEngines from "./ElasticEngines.ts"
import * as ExecuteAll from "./ExecuteAll.ts"
import { argumentText } from "./Text.ts"
import { commandName, validateCommand } from "./CommandValidation.ts"
import { type Engine, makeEngine } from "./Engine.ts"
import { boundUnsentWait, FutureRequest, Request } from "./Request.ts"
import * as EngineMetrics from "./EngineMetrics.ts"
import { ReplyStream } from "./ReplyStream.ts"
import { ReplyFolder, unfold } from "./Folded.ts"

type Service = RedisConnection["Service"]

// Admission: each face (shared, exclusive, pooled) checks a call once, before any engine
// sees it: the command's arguments (`validateCommand`) and its timeout, decoded once into
// milliseconds. The engine functions below take checked commands and a decoded timeout.

/** The call's timeout in milliseconds (`Infinity` allowed), or why it is invalid. */
const decodeTimeout = (options: CommandOptions | undefined, fallback: number): number | RedisError => {
  const timeout = options?.timeout
  if (timeout === undefined) return fallback
  // A number is already milliseconds (the graph client passes one on every query): no Option
  // and Duration to build per call.
  const decoded = typeof timeout === "number" ? undefined : Duration.fromInput(timeout)
  const millis =
    decoded === undefined
      ? (timeout as number)
      : decoded._tag === "None"
        ? Number.NaN
        : Duration.toMillis(decoded.value)
  if (millis > 0) return millis
  return new RedisError({
    reason: new InvalidArgument({ message: `timeout must be a positive duration (got ${String(timeout)})` })
  })
}

/**
 * Blocking commands without an explicit timeout wait as long as the command itself says
 * (its own server-side timeout), not the client's default.
 */
const callTimeout = (blocking: boolean, options: CommandOptions | undefined, fallback: number): number | RedisError =>
  options?.timeout === undefined && blocking ? Number.POSITIVE_INFINITY : decodeTimeout(options, fallback)

/** The first invalid command of a batch, named by its index. */
const validateBatch = (commands: ReadonlyArray<Command>): RedisError | undefined => {
  for (let i = 0; i < commands.length; i++) {
    const invalid = validateCommand(commands[i], i)
    if (invalid !== undefined) return invalid
  }
  return undefined
}

/**
 * Sends one checked command on an engine and waits; an interrupted caller's unwritten
 * command is never sent. `reportedTimeout` is the timeout its errors name when the engine
 * runs on what is left of a larger budget (pooled).
 */
const engineExecute = (
  engine: Lane,
  command: Command,
  timeout: number,
  reportedTimeout?: number
): Effect.Effect<Reply, RedisError> =>
  Effect.callback<Reply, RedisError>((resume) =>
    engine.start(new Request<Reply>([command], false, 1, timeout, reportedTimeout), resume)
  )

/**
 * `engineExecute` for a folded command (`executeFolded`): its array reply goes to `fold` as it
 * is read, and the request settles with what the fold built.
 */
const engineExecuteFolded = <A>(
  engine: Lane,
  command: Command,
  timeout: number,
  fold: ReplyFold<A>,
  reportedTimeout?: number
): Effect.Effect<A, RedisError> =>
  Effect.flatMap(
    Effect.callback<Reply, RedisError>((resume) => {
      const request = new Request<Reply>([command], false, 1, timeout, reportedTimeout)
      new ReplyFolder(request, fold)
      return engine.start(request, resume)
    }),
    (reply) => unfold(reply, fold)
  )

/**
 * Sends a checked, contiguous batch on an engine; replies include error replies as values.
 * The batch takes its place on the engine when this is called (in the step that routed it).
 */
const enginePipeline = (
  engine: Lane,
  commands: ReadonlyArray<Command>,
  timeout: number,
  reportedTimeout?: number
): Effect.Effect<ReadonlyArray<Reply>, RedisError> => {
  if (commands.length === 0) return Effect.succeed([])
  if (commands.length > engine.window.size) {
    return Effect.fail(
      new RedisError({
        reason: new BatchTooLarge({
          commands: commands.length,
          window: engine.window.size,
          message: `a batch of ${commands.length} commands can never be admitted: the window is ${engine.window.size}`
        })
      })
    )
  }
  return engine.run(new Request<ReadonlyArray<Reply>>(commands, true, commands.length, timeout, reportedTimeout))
}

/** The buffer bounds of a streamed command, or why they are invalid. */
const streamLimits = (options: StreamOptions | undefined) => {
  const depth = options?.depth ?? 2
  const highWaterMark = options?.highWaterMark ?? 1024 * 1024
  const maxBuffered = options?.maxBuffered ?? 64 * 1024 * 1024
  if (!Number.isInteger(depth) || depth < 1 || !(highWaterMark > 0) || !(maxBuffered >= highWaterMark)) {
    return new RedisError({
      reason: new InvalidArgument({
        message: `a streamed command needs an integer depth >= 1 and 0 < highWaterMark <= maxBuffered (got depth ${depth}, highWaterMark ${highWaterMark}, maxBuffered ${maxBuffered})`
      })
    })
  }
  return { depth, highWaterMark, maxBuffered }
}

/**
 * Streams a checked command's reply on the engine `acquire` gives (in the stream's scope),
 * with what is left of the command's `timeout` after waiting for it, or on the lane a router
 * picks (`acquire` a function: routed in the step that admits it, with the whole timeout).
 * `release`, when given, is called once the engine owes nothing more for the command (its
 * reply ended, failed, or it was never sent): a pooled borrow ends there, not when the
 * consumer finishes, so a call the consumer makes meanwhile (a schema lookup) can borrow it.
 */
const engineStream = (
  acquire: Effect.Effect<readonly [lane: Lane, left: number], RedisError, Scope.Scope> | (() => Lane),
  command: Command,
  timeout: number,
  options: StreamOptions | undefined,
  release?: (finished: Effect.Effect<void>) => Effect.Effect<void>
): Stream.Stream<ReplyPart, RedisError> =>
  Stream.fromChannel(
    Channel.fromTransform((_, scope) =>
      Effect.gen(function* () {
        const limits = streamLimits(options)
        if (limits instanceof RedisError) return yield* limits
        // The lane, and what is left of the timeout after waiting for it (a pooled borrow).
        const [engine, left] = Effect.isEffect(acquire)
          ? yield* Scope.provide(acquire, scope)
          : ([acquire(), timeout] as const)
        const request = new Request<any>([command], false, 1, left, timeout)
        const stream = new ReplyStream(engine, request, limits)
        if (release !== undefined) yield* release(Deferred.await(stream.finished))
        yield* Effect.onError(engine.admit(request), () => Effect.sync(() => stream.cancel()))
        yield* Scope.addFinalizer(
          scope,
          Effect.sync(() => stream.cancel())
        )
        return stream.pull as Effect.Effect<Arr.NonEmptyReadonlyArray<ReplyPart>, RedisError | Cause.Done>
      })
    )
  )

/**
 * Puts a checked command on its way on an engine; the future (the request itself) is returned
 * once it is admitted. Called while the submitting effect runs.
 */
const engineSubmit = (
  engine: Lane,
  command: Command,
  timeout: number,
  reportedTimeout?: number
): Effect.Effect<Future<Reply>, RedisError> => {
  const request = new FutureRequest<Reply>([command], false, 1, timeout, reportedTimeout)
  const admitted = engine.admit(request)
  // Admitted at once (`admit` says so with `Effect.void` itself): the future, without a step
  // to map it (an identity check: `Exit.isExit` allocates its arguments here).
  if (admitted === Effect.void) return Exit.succeed(request)
  return Effect.as(admitted, request)
}

/** Commands whose replies do not follow the one-request-one-reply rule: never sent by this client. */
const unsupported = (command: Command): RedisError | undefined => {
  const name = commandName(command)
  const sub = command.length > 1 ? commandName(command.slice(1)) : ""
  if (
    name === "SUBSCRIBE" ||
    name === "PSUBSCRIBE" ||
    name === "SSUBSCRIBE" ||
    name === "MONITOR" ||
    (name === "CLIENT" && sub === "REPLY")
  ) {
    return new RedisError({
      reason: new Unsupported({
        command: name === "CLIENT" ? "CLIENT REPLY" : name,
        message: `${name === "CLIENT" ? "CLIENT REPLY" : name} changes how the server replies (pushes or no replies), which this client does not support yet`
      })
    })
  }
  return undefined
}

const notMultiplexable = (command: Command): RedisError =>
  new RedisError({
    reason: new NotMultiplexable({
      command: commandName(command),
      message: `${commandName(command)} changes the state of the connection it runs on, so it cannot run on a shared connection; run it inside withExclusive`
    })
  })

/**
 * A batch may carry balanced MULTI … EXEC/DISCARD transactions (contiguous on the wire, so
 * they are safe on a shared connection); any other state-changing command is refused.
 */
const batchStateProblem = (commands: ReadonlyArray<Command>): RedisError | undefined => {
  let open = false
  for (const command of commands) {
    const problem = unsupported(command)
    if (problem !== undefined) return problem
    if (!CommandKeys.isConnectionState(command)) continue
    const name = commandName(command)
    if (name === "MULTI" && !open) open = true
    else if ((name === "EXEC" || name === "DISCARD") && open) open = false
    else return notMultiplexable(command)
  }
  if (open) {
    return new RedisError({
      reason: new NotMultiplexable({
        command: "MULTI",
        message: "the batch opens a MULTI without its EXEC or DISCARD; a transaction must be complete inside one batch"
      })
    })
  }
  return undefined
}

/**
 * Checks a batch of independent commands (`executeAll`) before anything is sent: every
 * command valid (named by its index), none that changes the state of its connection or
 * blocks it (refused with the same reasons as `submit`), and a valid timeout.
 */
export const refuseAll = (
  commands: ReadonlyArray<Command>,
  options: CommandOptions | undefined
): RedisError | undefined => {
  const invalid = validateBatch(commands)
  if (invalid !== undefined) return invalid
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i]
    // One table lookup per command.
    const sharing = CommandKeys.sharing(command)
    if (sharing === "shared") continue
    if (sharing === "connectionState") return unsupported(command) ?? notMultiplexable(command)
    return new RedisError({
      reason: new NotMultiplexable({
        command: commandName(command),
        message: `${commandName(command)} (command ${i} of the batch) blocks its connection, so it cannot ride with the batch's other commands; use execute (it is diverted to an exclusive connection) or withExclusive`
      })
    })
  }
  const timeout = decodeTimeout(options, 1)
  return timeout instanceof RedisError ? timeout : undefined
}

/** `refuseAll`, then the batch's decoded timeout, which must not outlast the stall detector. */
const checkAll = (
  commands: ReadonlyArray<Command>,
  options: CommandOptions | undefined,
  resolved: ResolvedOptions
): number | RedisError => {
  const refused = refuseAll(commands, options)
  if (refused !== undefined) return refused
  const timeout = decodeTimeout(options, resolved.commandTimeout) as number
  if (outlastsStall(timeout, resolved)) {
    return new RedisError({
      reason: new NotMultiplexable({
        command: commands.length === 0 ? "" : commandName(commands[0]),
        message: `a timeout of ${timeout} ms is at or above stallTimeout (${resolved.stallTimeout} ms), so the batch cannot ride the shared pipe; use execute (diverted to an exclusive connection) or withExclusive`
      })
    })
  }
  return timeout
}

/** A batch on an exclusive connection: valid commands, none unsupported; its decoded timeout. */
const checkExclusiveBatch = (
  engine: Engine,
  commands: ReadonlyArray<Command>,
  options: CommandOptions | undefined
): number | RedisError => {
  const invalid = validateBatch(commands)
  if (invalid !== undefined) return invalid
  for (const command of commands) {
    const problem = unsupported(command)
    if (problem !== undefined) return problem
  }
  return decodeTimeout(options, engine.options.commandTimeout)
}

const exclusiveFace = (engine: Engine): ExclusiveConnection => ({
  execute: (command, options) =>
    Effect.suspend(() => {
      const problem = validateCommand(command) ?? unsupported(command)
      if (problem !== undefined) return Effect.fail(problem)
      const timeout = callTimeout(CommandKeys.isBlocking(command), options, engine.options.commandTimeout)
      if (timeout instanceof RedisError) return Effect.fail(timeout)
      return engineExecute(engine, command, timeout)
    }),
  pipeline: (commands, options) =>
    Effect.suspend(() => {
      const timeout = checkExclusiveBatch(engine, commands, options)
      if (timeout instanceof RedisError) return Effect.fail(timeout)
      return enginePipeline(engine, commands, timeout)
    }),
  executeStreamed: (command, options) =>
    Stream.unwrap(
      Effect.sync(() => {
        const problem = validateCommand(command) ?? unsupported(command)
        if (problem !== undefined) return Stream.fail(problem)
        const timeout = callTimeout(CommandKeys.isBlocking(command), options, engine.options.commandTimeout)
        if (timeout instanceof RedisError) return Stream.fail(timeout)
        return engineStream(Effect.succeed([engine, timeout] as const), command, timeout, options)
      })
    ),
  // The connection is the caller's own: anything `pipeline` takes goes, in order.
  executeAll: ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
    Effect.suspend(() => {
      const timeout = checkExclusiveBatch(engine, commands, options)
      if (timeout instanceof RedisError) return Effect.fail(timeout)
      if (commands.length === 0) return Effect.succeed([])
      return ExecuteAll.onLanes(commands, () => engine, timeout, options?.mode === "result")
    })) as ExecuteAllFace
})

/**
 * A fresh engine of the caller's own for the scope of `use`, closed afterwards. Its own
 * connection: long or blocking commands are what it is for, so no stall detector.
 */
const onExclusiveEngine =
  (resolved: ResolvedOptions) =>
  <A, E, R>(
    use: (engine: Engine) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>> =>
    // No client-cache hooks: nothing read on it is cached, and its comings and goings must
    // not flush the cache. Metrics: the same series, no gauge of its own.
    Effect.scoped(
      Effect.flatMap(
        makeEngine({
          ...resolved,
          stallTimeout: Number.POSITIVE_INFINITY,
          hooks: undefined,
          exclusive: true,
          instruments: resolved.instruments?.exclusive
        }),
        use
      )
    )

/** `withExclusive`: a connection of the caller's own for the scope of `use`. */
const withExclusive =
  (resolved: ResolvedOptions) =>
  <A, E, R>(
    use: (connection: ExclusiveConnection) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>> =>
    onExclusiveEngine(resolved)((engine) => use(exclusiveFace(engine)))

/** A per-command timeout above the stall threshold would let the stall detector kill the shared pipe. */
const outlastsStall = (timeout: number, resolved: ResolvedOptions): boolean =>
  resolved.stallTimeout !== Number.POSITIVE_INFINITY && timeout >= resolved.stallTimeout

/**
 * Where a routed command goes: an engine, or (self-sizing key routing) a lane that holds a
 * moving key's commands until its old engine has answered the ones before them.
 */
export type Lane = Pick<Engine, "window" | "start" | "admit" | "run">

/** How a shared client picks an engine. */
export interface Router {
  /** `readOnly` commands may go to any engine (see `CommandOptions.readOnly`). */
  readonly forCommand: (command: Command, readOnly: boolean) => Lane
  /** The engine of a batch, or the error naming the keys and engines it spans. */
  readonly forBatch: (commands: ReadonlyArray<Command>, readOnly: boolean) => Lane | RedisError
}

/**
 * The face of a client over shared engines (single and multiplexed): connection-state
 * commands are refused, blocking commands are diverted to an exclusive connection.
 */
const sharedService = (resolved: ResolvedOptions, router: Router, info: ConnectionInfo): Service => {
  const exclusive = withExclusive(resolved)
  const onExclusive = onExclusiveEngine(resolved)
  /**
   * Why the shared pipe refuses the command, or whether it blocks (it then needs a connection
   * of its own): one table lookup per command.
   */
  const admission = (command: Command): RedisError | "blocking" | undefined => {
    const invalid = validateCommand(command)
    if (invalid !== undefined) return invalid
    const sharing = CommandKeys.sharing(command)
    if (sharing === "shared") return undefined
    if (sharing === "blocking") return sharing
    // Every unsupported command is also a connection-state one.
    return unsupported(command) ?? notMultiplexable(command)
  }
  /**
   * A single command's timeout and whether it needs a connection of its own (it blocks, or
   * may wait past `stallTimeout`), or why the shared pipe refuses it (`execute` inlines this).
   */
  const placement = (
    command: Command,
    options: CommandOptions | undefined
  ): RedisError | { readonly timeout: number; readonly ownConnection: boolean } => {
    const admitted = admission(command)
    if (admitted instanceof RedisError) return admitted
    const blocking = admitted === "blocking"
    const timeout = callTimeout(blocking, options, resolved.commandTimeout)
    if (timeout instanceof RedisError) return timeout
    return { timeout, ownConnection: blocking || outlastsStall(timeout, resolved) }
  }
  return makeService({
    info,
    // One Effect.callback per call: checks, routing and the hand-over to the engine all happen in it.
    execute: (command, options) =>
      Effect.callback<Reply, RedisError>((resume) => {
        const admitted = admission(command)
        if (admitted instanceof RedisError) return resume(Effect.fail(admitted))
        const blocking = admitted === "blocking"
        const timeout = callTimeout(blocking, options, resolved.commandTimeout)
        if (timeout instanceof RedisError) return resume(Effect.fail(timeout))
        if (blocking || outlastsStall(timeout, resolved)) {
          return resume(onExclusive((engine) => engineExecute(engine, command, timeout)))
        }
        const engine = router.forCommand(command, options?.readOnly === true)
        return engine.start(new Request<Reply>([command], false, 1, timeout), resume)
      }),
    executeFolded: (command, makeFold, options) =>
      Effect.suspend(() => {
        const placed = placement(command, options)
        if (placed instanceof RedisError) return Effect.fail(placed)
        const { ownConnection, timeout } = placed
        const fold = makeFold()
        if (ownConnection) return onExclusive((engine) => engineExecuteFolded(engine, command, timeout, fold))
        return engineExecuteFolded(router.forCommand(command, options?.readOnly === true), command, timeout, fold)
      }),
    submit: (command, options) =>
      Effect.suspend(() => {
        const admitted = admission(command)
        if (admitted instanceof RedisError) return Effect.fail(admitted)
        if (admitted === "blocking") {
          return Effect.fail(
            new RedisError({
              reason: new NotMultiplexable({
                command: commandName(command),
                message: `${commandName(command)} blocks its connection, so it cannot be submitted on the shared pipe; use execute (it is diverted to an exclusive connection) or withExclusive`
              })
            })
          )
        }
        const timeout = decodeTimeout(options, resolved.commandTimeout)
        if (timeout instanceof RedisError) return Effect.fail(timeout)
        if (outlastsStall(timeout, resolved)) {
          return Effect.fail(
            new RedisError({
              reason: new NotMultiplexable({
                command: commandName(command),
                message: `a timeout of ${timeout} ms is at or above stallTimeout (${resolved.stallTimeout} ms), so it cannot ride the shared pipe; use execute (diverted to an exclusive connection) or withExclusive`
              })
            })
          )
        }
        return engineSubmit(router.forCommand(command, options?.readOnly === true), command, timeout)
      }),
    pipeline: (commands, options?: PipelineOptions) =>
      Effect.suspend(() => {
        const problem = validateBatch(commands) ?? batchStateProblem(commands)
        if (problem !== undefined) return Effect.fail(problem)
        const timeout = decodeTimeout(options, resolved.commandTimeout)
        if (timeout instanceof RedisError) return Effect.fail(timeout)
        if (commands.some(CommandKeys.isBlocking) || outlastsStall(timeout, resolved)) {
          return onExclusive((engine) => enginePipeline(engine, commands, timeout))
        }
        const engine = router.forBatch(commands, options?.readOnly === true)
        if (engine instanceof RedisError) {
          if (options?.exclusiveFallback === true) {
            return onExclusive((exclusiveEngine) => enginePipeline(exclusiveEngine, commands, timeout))
          }
          return Effect.fail(engine)
        }
        return enginePipeline(engine, commands, timeout)
      }),
    executeAll: ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
      Effect.suspend(() => {
        const timeout = checkAll(commands, options, resolved)
        if (timeout instanceof RedisError) return Effect.fail(timeout)
        if (commands.length === 0) return Effect.succeed([])
        const readOnly = options?.readOnly === true
        return ExecuteAll.onLanes(
          commands,
          (command) => router.forCommand(command, readOnly),
          timeout,
          options?.mode === "result"
        )
      })) as ExecuteAllFace,
    executeStreamed: (command, options) =>
      Stream.unwrap(
        Effect.sync(() => {
          const placed = placement(command, options)
          if (placed instanceof RedisError) return Stream.fail(placed)
          const { ownConnection, timeout } = placed
          // Like execute: what must not ride the shared pipe gets a connection of its own.
          if (ownConnection) {
            return engineStream(
              Effect.map(
                makeEngine({ ...resolved, stallTimeout: Number.POSITIVE_INFINITY }),
                (engine) => [engine, timeout] as const
              ),
              command,
              timeout,
              options
            )
          }
          const readOnly = options?.readOnly === true
          return engineStream(() => router.forCommand(command, readOnly), command, timeout, options)
        })
      ),
    withExclusive: exclusive
  })
}

/**
 * With `metrics` on, the client's metric series, released when the client's scope closes;
 * the options its engines are made with carry them.
 */
const instrumented = Effect.fnUntraced(function* (resolved: ResolvedOptions, strategy: ConnectionInfo["strategy"]) {
  if (!resolved.metrics) return resolved
  const instruments = EngineMetrics.make(yield* Effect.context<never>(), strategy, resolved.target)
  yield* Effect.addFinalizer(() => Effect.sync(() => instruments.close()))
  return { ...resolved, instruments }
})

/** One engine behind the service. */
export const makeSingle = Effect.fnUntraced(function* (options: ResolvedOptions) {
  const resolved = yield* instrumented(options, "single")
  const engine = yield* makeEngine(resolved)
  const info: ConnectionInfo = {
    strategy: "single",
    connections: 1,
    window: resolved.window,
    target: resolved.target,
    protocol: resolved.protocol
  }
  const router: Router = { forCommand: () => engine, forBatch: () => engine }
  return { service: sharedService(resolved, router, info), engines: [engine] as ReadonlyArray<Engine> }
})

/**
 * Several engines, each its own socket and window. `"spread"` picks the least loaded
 * engine; `"key"` the engine of the first key's hash slot (keyless commands round-robin).
 */
export const makeMultiplexed = Effect.fnUntraced(function* (
  options: ResolvedOptions,
  connections: number,
  routing: "spread" | "key" | undefined
) {
  const resolved = yield* instrumented(options, "multiplexed")
  const engines: Array<Engine> = []
  for (let i = 0; i < connections; i++) engines.push(yield* makeEngine(resolved))
  // Several engines are picked by load, which compares their overdue replies.
  if (connections > 1) for (const engine of engines) engine.countsOverdue = true
  const { roundRobin, leastLoaded } = ElasticEngines.makePickers(() => engines)
  const engineIndexOf = (command: Command): number | undefined => {
    const slot = CommandKeys.firstKeySlot(command)
    return slot === undefined ? undefined : slot % engines.length
  }
  // No routing is allowed only for one engine, where there is nothing to choose.
  const router: Router =
    routing !== "key"
      ? { forCommand: leastLoaded, forBatch: leastLoaded }
      : {
          // A read-only command needs no order against its key's writes: the least loaded engine.
          forCommand: (command, readOnly) => {
            if (readOnly) return leastLoaded()
            const index = engineIndexOf(command)
            return index === undefined ? roundRobin() : engines[index]
          },
          forBatch: (commands, readOnly) => {
            if (readOnly) return leastLoaded()
            let chosen: number | undefined
            const placements: Array<string> = []
            let spans = false
            for (const command of commands) {
              const index = engineIndexOf(command)
              if (index === undefined) continue
              placements.push(`"${argumentText(CommandKeys.firstKey(command))}" -> engine ${index}`)
              if (chosen === undefined) chosen = index
              else if (chosen !== index) spans = true
            }
            if (spans) {
              return new RedisError({
                reason: new BatchSpansEngines({
                  message: `the batch's keys map to different engines (${placements.join(", ")}); keep them on one engine with a hash tag such as {user1}:a and {user1}:b, or pass { exclusiveFallback: true }`
                })
              })
            }
            return chosen === undefined ? roundRobin() : engines[chosen]
          }
        }
  const info: ConnectionInfo = {
    strategy: "multiplexed",
    connections,
    window: resolved.window,
    // Reported only when set: a one-engine client without one routes nothing.
    ...(routing === undefined ? {} : { routing }),
    target: resolved.target,
    protocol: resolved.protocol
  }
  return { service: sharedService(resolved, router, info), engines: engines as ReadonlyArray<Engine> }
})

/**
 * Between `sizing.min` and `sizing.max` engines, as many as the load needs (see
 * `EngineSizer` for when, `ElasticEngines` for how keys move without losing their order).
 */
export const makeSized = Effect.fnUntraced(function* (
  options: ResolvedOptions,
  sizing: ElasticEngines.Sizing,
  routing: "spread" | "key" | undefined,
  auto: boolean = true
) {
  const resolved = yield* instrumented(options, "multiplexed")
  const elastic = yield* ElasticEngines.make(resolved, sizing, routing, auto)
  const info: ConnectionInfo = {
    strategy: "multiplexed",
    connections: sizing.max,
    window: resolved.window,
    ...(routing === undefined ? {} : { routing }),
    sizing: { min: sizing.min, max: sizing.max },
    target: resolved.target,
    protocol: resolved.protocol
  }
  return { service: sharedService(resolved, elastic.router, info), elastic }
})

/** A pool of connections; each call borrows one for itself. */
export const makePooled = Effect.fnUntraced(function* (options: ResolvedOptions, size: number) {
  const resolved = yield* instrumented(options, "pooled")
  const metrics = resolved.instruments
  // The pool's engines, so that closing can tell each to stop admitting before it waits.
  const engines = new Set<Engine>()
  const acquire = Effect.tap(makeEngine(resolved), (engine) =>
    Effect.andThen(
      Effect.sync(() => engines.add(engine)),
      Effect.addFinalizer(() => Effect.sync(() => engines.delete(engine)))
    )
  )
  const pool = yield* Pool.make({ acquire, size })
  // Background work of this client (a submitted command's borrow) lives in its scope.
  const clientScope = yield* Effect.scope
  // Surface a wrong address at construction instead of at the first call.
  yield* Effect.scoped(Pool.get(pool))
  /**
   * Borrows a connection for one call. The call's timeout covers the wait for a free
   * connection too; the engine gets what is left of it.
   */
  // Closing: refuse new calls and let those holding or awaiting a connection finish
  // (bounded) before the pool itself shuts down and would interrupt them.
  let closing = false
  let active = 0
  let onIdle: (() => void) | undefined
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      closing = true
      // Calls that cannot complete (their connection is down) fail now, not after closeTimeout.
      for (const engine of engines) engine.stopAdmitting()
      if (active === 0) return Effect.void
      return Effect.timeoutOption(
        Effect.callback<void>((resume) => {
          onIdle = () => resume(Effect.void)
        }),
        resolved.closeTimeout
      )
    })
  )
  const track = <A>(effect: Effect.Effect<A, RedisError>): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      if (closing)
        return Effect.fail(
          new RedisError({
            reason: new Closed({ written: false, message: `the client of ${resolved.target} is closed` })
          })
        )
      active++
      return Effect.ensuring(
        effect,
        Effect.sync(() => {
          active--
          if (active === 0 && onIdle !== undefined) onIdle()
        })
      )
    })
  /**
   * A free connection for a call whose timeout is `timeout` ms (decoded once), in the scope:
   * the wait is bounded by it (reason `Timeout`, `written: false`: the command was not sent).
   * A connection that still owes a reply to a caller who timed out is replaced before it is lent.
   */
  const lend = (timeout: number): Effect.Effect<Engine, RedisError, Scope.Scope> => {
    const fresh = Effect.tap(Pool.get(pool), (engine) => engine.refresh)
    const measured =
      metrics === undefined
        ? fresh
        : Effect.suspend(() => {
            const asked = performance.now()
            return Effect.tap(fresh, () => Effect.sync(() => metrics.poolWait(performance.now() - asked)))
          })
    return boundUnsentWait(
      measured,
      { timeout, reportedTimeout: timeout },
      `no pooled connection to ${resolved.target} (size ${size}) became free`,
      metrics === undefined ? undefined : () => metrics.poolTimeout()
    )
  }
  /** What is left of a budget of `timeout` ms started at `start` (at least 1 ms). */
  const left = (timeout: number, start: number) =>
    timeout === Number.POSITIVE_INFINITY ? timeout : Math.max(1, timeout - (performance.now() - start))
  /**
   * Borrows a connection for one call whose timeout covers the wait for a free connection
   * too; the engine runs on what is left of it, its errors name the configured timeout.
   */
  const borrow = <A>(
    timeout: number,
    f: (engine: Engine, left: number, reportedTimeout: number) => Effect.Effect<A, RedisError>
  ): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      const start = performance.now()
      return track(Effect.scoped(Effect.flatMap(lend(timeout), (engine) => f(engine, left(timeout, start), timeout))))
    })
  const exclusive = withExclusive(resolved)
  const onExclusive = onExclusiveEngine(resolved)
  // State set on a pooled connection would leak to the next borrower.
  const pooledRefusal = (command: Command): RedisError | undefined =>
    validateCommand(command) ??
    unsupported(command) ??
    (CommandKeys.isConnectionState(command) ? notMultiplexable(command) : undefined)
  const info: ConnectionInfo = {
    strategy: "pooled",
    connections: size,
    window: 1,
    target: resolved.target,
    protocol: resolved.protocol
  }
  /**
   * One command by `execute`'s rules: `send` puts it on a borrowed connection with what is
   * left of its timeout (`reported`: the timeout its errors name), or on one of its own.
   */
  const single = <A>(
    command: Command,
    options: CommandOptions | undefined,
    send: (engine: Lane, timeout: number, reported?: number) => Effect.Effect<A, RedisError>
  ): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      const refused = pooledRefusal(command)
      if (refused !== undefined) return Effect.fail(refused)
      // A borrowed connection is the caller's own, so a blocking command may wait on it.
      const blocking = CommandKeys.isBlocking(command)
      const timeout = callTimeout(blocking, options, resolved.commandTimeout)
      if (timeout instanceof RedisError) return Effect.fail(timeout)
      if (resolved.stallTimeout !== Number.POSITIVE_INFINITY && (blocking || outlastsStall(timeout, resolved))) {
        // The pooled connections watch for stalls; a wait longer than that needs a connection without the detector.
        return onExclusive((engine) => send(engine, timeout))
      }
      return borrow(timeout, (engine, left, reported) => send(engine, left, reported))
    })
  const service: Service = makeService({
    info,
    execute: (command, options) =>
      single(command, options, (engine, timeout, reported) => engineExecute(engine, command, timeout, reported)),
    executeFolded: (command, makeFold, options) =>
      single(command, options, (engine, timeout, reported) =>
        engineExecuteFolded(engine, command, timeout, makeFold(), reported)
      ),
    // The borrow lasts until the reply has landed, so the connection stays the caller's own.
    submit: (command, options) =>
      Effect.gen(function* () {
        if (closing)
          return yield* new RedisError({
            reason: new Closed({ written: false, message: `the client of ${resolved.target} is closed` })
          })
        const refused = pooledRefusal(command)
        if (refused !== undefined) return yield* refused
        const timeout = decodeTimeout(options, resolved.commandTimeout)
        if (timeout instanceof RedisError) return yield* timeout
        // The wait for a free connection is part of the command's timeout, as for execute.
        const start = performance.now()
        const scope = yield* Scope.make()
        const engine = yield* lend(timeout).pipe(
          Scope.provide(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        const future = yield* engineSubmit(engine, command, left(timeout, start), timeout).pipe(
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        yield* future.await.pipe(
          Effect.exit,
          Effect.ensuring(Scope.close(scope, Exit.void)),
          Effect.forkIn(clientScope)
        )
        return future
      }),
    pipeline: (commands, options) =>
      Effect.suspend(() => {
        const problem = validateBatch(commands) ?? batchStateProblem(commands)
        if (problem !== undefined) return Effect.fail(problem)
        const timeout = decodeTimeout(options, resolved.commandTimeout)
        if (timeout instanceof RedisError) return Effect.fail(timeout)
        return borrow(timeout, (engine, left, reported) => enginePipeline(engine, commands, left, reported))
      }),
    // One borrowed connection carries the whole batch, in order (the borrow lasts until the last reply).
    executeAll: ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
      Effect.suspend(() => {
        const timeout = checkAll(commands, options, resolved)
        if (timeout instanceof RedisError) return Effect.fail(timeout)
        if (commands.length === 0) return Effect.succeed([])
        const results = options?.mode === "result"
        return borrow(timeout, (engine, left, reported) =>
          ExecuteAll.onLanes(commands, () => engine, left, results, reported)
        )
      })) as ExecuteAllFace,
    // The borrow lasts until the engine owes nothing for the command, not until the consumer ends.
    executeStreamed: (command, options) =>
      Stream.unwrap(
        Effect.sync(() => {
          const refused = pooledRefusal(command)
          if (refused !== undefined) return Stream.fail(refused)
          const timeout = callTimeout(CommandKeys.isBlocking(command), options, resolved.commandTimeout)
          if (timeout instanceof RedisError) return Stream.fail(timeout)
          let borrowScope: Scope.Closeable | undefined
          // The wait for a free connection is part of the command's timeout, as for execute.
          const acquire = Effect.gen(function* () {
            if (closing) {
              return yield* new RedisError({
                reason: new Closed({ written: false, message: `the client of ${resolved.target} is closed` })
              })
            }
            const start = performance.now()
            const scope = yield* Scope.make()
            borrowScope = scope
            const engine = yield* lend(timeout).pipe(
              Scope.provide(scope),
              Effect.onError(() => Scope.close(scope, Exit.void))
            )
            return [engine, left(timeout, start)] as const
          })
          const release = (finished: Effect.Effect<void>) =>
            Effect.asVoid(Effect.forkIn(Effect.ensuring(finished, Scope.close(borrowScope!, Exit.void)), clientScope))
          return engineStream(acquire, command, timeout, options, release)
        })
      ),
    withExclusive: exclusive
  })
  return { service, engines: [] as ReadonlyArray<Engine> }
})
