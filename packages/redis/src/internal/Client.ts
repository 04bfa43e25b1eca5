/**
 * The strategies behind the `RedisConnection` service: faces over one engine (single),
 * several engines (multiplexed) and a pool of engines each lent to one caller (pooled).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pool from "effect/Pool"
import * as Scope from "effect/Scope"
import type {
  CommandOptions,
  ConnectionInfo,
  ExclusiveConnection,
  Future,
  PipelineOptions,
  RedisConnection
} from "../RedisConnection.ts"
import {
  BatchSpansEngines,
  BatchTooLarge,
  Closed,
  InvalidArgument,
  NotMultiplexable,
  RedisError,
  Timeout,
  Unsupported
} from "../RedisError.ts"
import type { ResolvedOptions } from "../RedisOptions.ts"
import * as CommandKeys from "../CommandKeys.ts"
import { argumentText } from "./Text.ts"
import { commandName, type Engine, makeEngine, Request, validateCommand } from "./Engine.ts"

type Service = RedisConnection["Service"]

/** The timeout of one call in milliseconds (`Infinity` allowed). */
const timeoutOf = (options: CommandOptions | undefined, resolved: ResolvedOptions): number => {
  if (options?.timeout === undefined) return resolved.commandTimeout
  const millis = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
  return Math.max(millis, 0)
}

const invalidTimeout = (options: CommandOptions | undefined): RedisError | undefined => {
  if (options?.timeout === undefined) return undefined
  const decoded = Duration.fromInput(options.timeout)
  if (decoded._tag === "None" || !(Duration.toMillis(decoded.value) > 0)) {
    return new RedisError({
      reason: new InvalidArgument({
        message: `timeout must be a positive duration (got ${String(options.timeout)})`
      })
    })
  }
  return undefined
}

/**
 * Starts one command on an engine for an `Effect.callback` registration and returns its
 * canceller: an interrupted caller's unwritten command is never sent. The uncontended path
 * takes permits and hands the request over synchronously, and the reader resumes the caller
 * directly (no Deferred).
 */
const startExecute = (
  engine: Engine,
  command: Command,
  options: CommandOptions | undefined,
  validated: boolean,
  resume: (effect: Effect.Effect<Reply, RedisError>) => void,
  reportedTimeout?: number
): Effect.Effect<void> | undefined => {
  const invalid = (validated ? undefined : validateCommand(command)) ?? invalidTimeout(options) ?? engine.refusal()
  if (invalid !== undefined) {
    resume(Effect.fail(invalid))
    return undefined
  }
  const request = new Request([command], false, 1, timeoutOf(options, engine.options), reportedTimeout)
  if (engine.window.tryTake(1)) {
    request.resume = resume
    engine.enqueue(request)
    return Effect.sync(() => engine.abandon(request))
  }
  // The window is full: wait for room (bounded by the timeout), then for the reply.
  resume(
    Effect.onInterrupt(
      Effect.andThen(engine.admit(request), Deferred.await(request.deferred as Deferred.Deferred<Reply, RedisError>)),
      () => Effect.sync(() => engine.abandon(request))
    )
  )
  return undefined
}

/**
 * Sends one command on an engine and waits; an interrupted caller's unwritten command is never
 * sent. `reportedTimeout` is the timeout its errors name when the engine runs on what is left
 * of a larger budget (pooled).
 */
export const engineExecute = (
  engine: Engine,
  command: Command,
  options: CommandOptions | undefined,
  reportedTimeout?: number
): Effect.Effect<Reply, RedisError> =>
  Effect.callback<Reply, RedisError>((resume) => startExecute(engine, command, options, false, resume, reportedTimeout))

/** Sends a contiguous batch on an engine; replies include error replies as values. */
export const enginePipeline = (
  engine: Engine,
  commands: ReadonlyArray<Command>,
  options: CommandOptions | undefined,
  reportedTimeout?: number
): Effect.Effect<ReadonlyArray<Reply>, RedisError> =>
  Effect.suspend(() => {
    if (commands.length === 0) return Effect.succeed([])
    for (let i = 0; i < commands.length; i++) {
      const invalid = validateCommand(commands[i], i)
      if (invalid !== undefined) return Effect.fail(invalid)
    }
    const invalid = invalidTimeout(options)
    if (invalid !== undefined) return Effect.fail(invalid)
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
    const request = new Request(commands, true, commands.length, timeoutOf(options, engine.options), reportedTimeout)
    return Effect.onInterrupt(
      Effect.andThen(
        engine.admit(request),
        Deferred.await(request.deferred as Deferred.Deferred<ReadonlyArray<Reply>, RedisError>)
      ),
      () => Effect.sync(() => engine.abandon(request))
    )
  })

/**
 * Waits for a request's outcome without cancelling it. The first waiter takes the request's
 * resume slot (no Deferred); further concurrent waiters share a Deferred made on demand.
 * Giving up the wait only frees the slot: the command stays on its way.
 */
const awaitRequest = <A>(request: Request): Effect.Effect<A, RedisError> =>
  Effect.callback<A, RedisError>((resume) => {
    if (request.exit !== undefined) return resume(request.exit)
    if (request.resume !== undefined) {
      return resume(Deferred.await(request.deferred as Deferred.Deferred<A, RedisError>))
    }
    request.resume = resume
    return Effect.sync(() => {
      if (request.resume === resume) request.resume = undefined
    })
  })

/**
 * The future of a submitted request. Its faces are made when they are read (each read gives
 * an equivalent effect), so a submit allocates one small object, not a set of closures.
 */
class RequestFuture<A> implements Future<A> {
  readonly request: Request
  constructor(request: Request) {
    this.request = request
  }
  get await(): Effect.Effect<A, RedisError> {
    return awaitRequest<A>(this.request)
  }
  get awaitTimeout(): (timeout: Duration.Input) => Effect.Effect<A, RedisError> {
    const request = this.request
    return (timeout) => {
      const millis = Duration.toMillis(Duration.fromInputUnsafe(timeout))
      return Effect.timeoutOrElse(awaitRequest<A>(request), {
        duration: millis,
        orElse: () =>
          Effect.fail(
            new RedisError({
              reason: new Timeout({
                written: request.written,
                timeout: millis,
                message: `stopped waiting after ${millis} ms; the command is ${request.written ? "sent and still owed a reply" : "still queued"} and was not cancelled`
              })
            })
          )
      })
    }
  }
  get poll(): Effect.Effect<A | undefined, RedisError> {
    const request = this.request
    return Effect.suspend(() =>
      request.exit !== undefined ? (request.exit as Effect.Effect<A, RedisError>) : Effect.succeed(undefined)
    )
  }
}

/** Puts a command on its way on an engine; the future is returned once it is admitted. */
export const engineSubmit = (
  engine: Engine,
  command: Command,
  options: CommandOptions | undefined,
  validated = false
): Effect.Effect<Future<Reply>, RedisError> =>
  Effect.suspend(() => {
    const invalid = (validated ? undefined : validateCommand(command)) ?? invalidTimeout(options)
    if (invalid !== undefined) return Effect.fail(invalid)
    const request = new Request([command], false, 1, timeoutOf(options, engine.options))
    const future = new RequestFuture<Reply>(request)
    const refusal = engine.refusal()
    if (refusal !== undefined) return Effect.fail(refusal)
    if (engine.window.tryTake(1)) {
      engine.enqueue(request)
      return Effect.succeed(future)
    }
    return Effect.as(engine.admit(request), future)
  })

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
 * Blocking commands without an explicit timeout wait as long as the command itself says
 * (its own server-side timeout), not the client's default.
 */
const blockingOptions = (options: CommandOptions | undefined): CommandOptions =>
  options?.timeout === undefined ? { ...options, timeout: "Infinity" } : options

const exclusiveFace = (engine: Engine): ExclusiveConnection => ({
  execute: (command, options) =>
    Effect.suspend(() => {
      const problem = unsupported(command)
      if (problem !== undefined) return Effect.fail(problem)
      return engineExecute(engine, command, CommandKeys.isBlocking(command) ? blockingOptions(options) : options)
    }),
  pipeline: (commands, options) =>
    Effect.suspend(() => {
      for (const command of commands) {
        const problem = unsupported(command)
        if (problem !== undefined) return Effect.fail(problem)
      }
      return enginePipeline(engine, commands, options)
    })
})

/** A fresh connection of the caller's own for the scope of `use`, closed afterwards. */
const withExclusive =
  (resolved: ResolvedOptions) =>
  <A, E, R>(
    use: (connection: ExclusiveConnection) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>> =>
    // Its own connection: long or blocking commands are what it is for, so no stall detector.
    Effect.scoped(
      Effect.flatMap(makeEngine({ ...resolved, stallTimeout: Number.POSITIVE_INFINITY }), (engine) =>
        use(exclusiveFace(engine))
      )
    )

/** A per-command timeout above the stall threshold would let the stall detector kill the shared pipe. */
const outlastsStall = (options: CommandOptions | undefined, resolved: ResolvedOptions): boolean =>
  resolved.stallTimeout !== Number.POSITIVE_INFINITY &&
  options?.timeout !== undefined &&
  timeoutOf(options, resolved) >= resolved.stallTimeout

/** How a shared client picks an engine. */
interface Router {
  readonly forCommand: (command: Command) => Engine
  /** The engine of a batch, or the error naming the keys and engines it spans. */
  readonly forBatch: (commands: ReadonlyArray<Command>) => Engine | RedisError
}

/**
 * The face of a client over shared engines (single and multiplexed): connection-state
 * commands are refused, blocking commands are diverted to an exclusive connection.
 */
const sharedService = (resolved: ResolvedOptions, router: Router, info: ConnectionInfo): Service => {
  const exclusive = withExclusive(resolved)
  const refusal = (command: Command): RedisError | undefined => {
    const invalid = validateCommand(command)
    if (invalid !== undefined) return invalid
    // Every unsupported command is also a connection-state one: one table lookup for the rest.
    if (!CommandKeys.isConnectionState(command)) return undefined
    return unsupported(command) ?? notMultiplexable(command)
  }
  return {
    info,
    // One Effect.callback per call: checks, routing and the hand-over to the engine all happen in it.
    execute: (command, options) =>
      Effect.callback<Reply, RedisError>((resume) => {
        const refused = refusal(command)
        if (refused !== undefined) return resume(Effect.fail(refused))
        if (CommandKeys.isBlocking(command) || outlastsStall(options, resolved)) {
          return resume(exclusive((connection) => connection.execute(command, options)))
        }
        return startExecute(router.forCommand(command), command, options, true, resume)
      }),
    submit: (command, options) =>
      Effect.suspend(() => {
        const refused = refusal(command)
        if (refused !== undefined) return Effect.fail(refused)
        if (outlastsStall(options, resolved)) {
          return Effect.fail(
            new RedisError({
              reason: new NotMultiplexable({
                command: commandName(command),
                message: `a timeout of ${timeoutOf(options, resolved)} ms is at or above stallTimeout (${resolved.stallTimeout} ms), so it cannot ride the shared pipe; use execute (diverted to an exclusive connection) or withExclusive`
              })
            })
          )
        }
        if (CommandKeys.isBlocking(command)) {
          return Effect.fail(
            new RedisError({
              reason: new NotMultiplexable({
                command: commandName(command),
                message: `${commandName(command)} blocks its connection, so it cannot be submitted on the shared pipe; use execute (it is diverted to an exclusive connection) or withExclusive`
              })
            })
          )
        }
        return engineSubmit(router.forCommand(command), command, options, true)
      }),
    pipeline: (commands, options?: PipelineOptions) =>
      Effect.suspend(() => {
        for (let i = 0; i < commands.length; i++) {
          const invalid = validateCommand(commands[i], i)
          if (invalid !== undefined) return Effect.fail(invalid)
        }
        const problem = batchStateProblem(commands)
        if (problem !== undefined) return Effect.fail(problem)
        if (commands.some(CommandKeys.isBlocking) || outlastsStall(options, resolved)) {
          return exclusive((connection) => connection.pipeline(commands, options))
        }
        const engine = router.forBatch(commands)
        if (engine instanceof RedisError) {
          if (options?.exclusiveFallback === true) {
            return exclusive((connection) => connection.pipeline(commands, options))
          }
          return Effect.fail(engine)
        }
        return enginePipeline(engine, commands, options)
      }),
    withExclusive: exclusive
  }
}

/** One engine behind the service. */
export const makeSingle = Effect.fnUntraced(function* (resolved: ResolvedOptions) {
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
  resolved: ResolvedOptions,
  connections: number,
  routing: "spread" | "key" | undefined
) {
  const engines: Array<Engine> = []
  for (let i = 0; i < connections; i++) engines.push(yield* makeEngine(resolved))
  let next = 0
  const roundRobin = (): Engine => {
    const engine = engines[next]
    next = (next + 1) % engines.length
    return engine
  }
  /**
   * An engine that owes the reply of a command its caller gave up on may be busy with it for
   * long (FalkorDB runs one query per connection at a time): any engine that owes none is
   * preferred, then the one with the fewest commands in flight.
   */
  const lighter = (a: Engine, b: Engine): boolean =>
    (a.overdue === 0) !== (b.overdue === 0) ? a.overdue === 0 : a.window.inUse < b.window.inUse
  const leastLoaded = (): Engine => {
    if (engines.length === 1) return engines[0]
    // Ties go round-robin so idle engines all get used.
    const start = next
    next = (next + 1) % engines.length
    let best = engines[start]
    for (let i = 1; i < engines.length; i++) {
      const engine = engines[(start + i) % engines.length]
      if (lighter(engine, best)) best = engine
    }
    return best
  }
  const engineIndexOf = (command: Command): number | undefined => {
    const slot = CommandKeys.firstKeySlot(command)
    return slot === undefined ? undefined : slot % engines.length
  }
  // No routing is allowed only for one engine, where there is nothing to choose.
  const router: Router =
    routing !== "key"
      ? { forCommand: leastLoaded, forBatch: leastLoaded }
      : {
          forCommand: (command) => {
            const index = engineIndexOf(command)
            return index === undefined ? roundRobin() : engines[index]
          },
          forBatch: (commands) => {
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

/** A pool of connections; each call borrows one for itself. */
export const makePooled = Effect.fnUntraced(function* (resolved: ResolvedOptions, size: number) {
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
  const borrow = <A>(
    options: CommandOptions | undefined,
    f: (engine: Engine, options: CommandOptions | undefined, reportedTimeout?: number) => Effect.Effect<A, RedisError>
  ): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      const invalid = invalidTimeout(options)
      if (invalid !== undefined) return Effect.fail(invalid)
      const timeout = timeoutOf(options, resolved)
      // A connection that still owes a reply to a caller who timed out is replaced before it is lent.
      const lend = Effect.tap(Pool.get(pool), (engine) => engine.refresh)
      if (timeout === Number.POSITIVE_INFINITY) {
        return track(Effect.scoped(Effect.flatMap(lend, (e) => f(e, options))))
      }
      const start = performance.now()
      return track(
        Effect.scoped(
          lend.pipe(
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () =>
                Effect.fail(
                  new RedisError({
                    reason: new Timeout({
                      written: false,
                      timeout,
                      message: `no pooled connection to ${resolved.target} became free within ${timeout} ms (size ${size}); the command was not sent`
                    })
                  })
                )
            }),
            // The engine runs on what is left of the budget; its errors name the configured timeout.
            Effect.flatMap((engine) =>
              f(engine, { ...options, timeout: Math.max(1, timeout - (performance.now() - start)) }, timeout)
            )
          )
        )
      )
    })
  const exclusive = withExclusive(resolved)
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
  const service: Service = {
    info,
    execute: (command, options) =>
      Effect.suspend(() => {
        const refused = pooledRefusal(command)
        if (refused !== undefined) return Effect.fail(refused)
        // A borrowed connection is the caller's own, so a blocking command may wait on it.
        const effective = CommandKeys.isBlocking(command) ? blockingOptions(options) : options
        if (
          resolved.stallTimeout !== Number.POSITIVE_INFINITY &&
          (CommandKeys.isBlocking(command) || outlastsStall(options, resolved))
        ) {
          // The pooled connections watch for stalls; a wait longer than that needs a connection without the detector.
          return exclusive((connection) => connection.execute(command, options))
        }
        return borrow(effective, (engine, left, reported) => engineExecute(engine, command, left, reported))
      }),
    // The borrow lasts until the reply has landed, so the connection stays the caller's own.
    submit: (command, options) =>
      Effect.gen(function* () {
        if (closing)
          return yield* new RedisError({
            reason: new Closed({ written: false, message: `the client of ${resolved.target} is closed` })
          })
        const refused = pooledRefusal(command)
        if (refused !== undefined) return yield* refused
        const scope = yield* Scope.make()
        const engine = yield* Pool.get(pool).pipe(
          Effect.tap((engine) => engine.refresh),
          Scope.provide(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        const future = yield* engineSubmit(engine, command, options).pipe(
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
        const problem = batchStateProblem(commands)
        if (problem !== undefined) return Effect.fail(problem)
        return borrow(options, (engine, left, reported) => enginePipeline(engine, commands, left, reported))
      }),
    withExclusive: exclusive
  }
  return { service, engines: [] as ReadonlyArray<Engine> }
})
