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
import { RedisClosed, RedisCommandError, RedisConfigError, type RedisError, RedisTimeout } from "../RedisError.ts"
import type { ResolvedOptions } from "../RedisOptions.ts"
import { type Engine, makeEngine, Request, validateCommand } from "./Engine.ts"

type Service = RedisConnection["Service"]

/** The timeout of one call in milliseconds (`Infinity` allowed). */
const timeoutOf = (options: CommandOptions | undefined, resolved: ResolvedOptions): number => {
  if (options?.timeout === undefined) return resolved.commandTimeout
  const millis = Duration.toMillis(Duration.fromInputUnsafe(options.timeout))
  return millis > 0 ? millis : 0
}

const invalidTimeout = (options: CommandOptions | undefined): RedisCommandError | undefined => {
  if (options?.timeout === undefined) return undefined
  const decoded = Duration.fromInput(options.timeout)
  if (decoded._tag === "None" || !(Duration.toMillis(decoded.value) > 0)) {
    return new RedisCommandError({
      reason: "InvalidArgument",
      message: `timeout must be a positive duration (got ${String(options.timeout)})`
    })
  }
  return undefined
}

/** Sends one command on an engine and waits; an interrupted caller's unwritten command is never sent. */
export const engineExecute = (
  engine: Engine,
  command: Command,
  options: CommandOptions | undefined
): Effect.Effect<Reply, RedisError> =>
  Effect.suspend(() => {
    const invalid = validateCommand(command) ?? invalidTimeout(options)
    if (invalid !== undefined) return Effect.fail(invalid)
    const request = new Request([command], false, 1, timeoutOf(options, engine.options))
    return Effect.onInterrupt(
      Effect.andThen(engine.admit(request), Deferred.await(request.deferred as Deferred.Deferred<Reply, RedisError>)),
      () => Effect.sync(() => engine.abandon(request))
    )
  })

/** Sends a contiguous batch on an engine; replies include error replies as values. */
export const enginePipeline = (
  engine: Engine,
  commands: ReadonlyArray<Command>,
  options: CommandOptions | undefined
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
        new RedisCommandError({
          reason: "BatchTooLarge",
          message: `a batch of ${commands.length} commands can never be admitted: the window is ${engine.window.size}`
        })
      )
    }
    const request = new Request(commands, true, commands.length, timeoutOf(options, engine.options))
    return Effect.onInterrupt(
      Effect.andThen(
        engine.admit(request),
        Deferred.await(request.deferred as Deferred.Deferred<ReadonlyArray<Reply>, RedisError>)
      ),
      () => Effect.sync(() => engine.abandon(request))
    )
  })

const makeFuture = <A>(request: Request): Future<A> => {
  const deferred = request.deferred as Deferred.Deferred<A, RedisError>
  return {
    await: Deferred.await(deferred),
    awaitTimeout: (timeout) => {
      const millis = Duration.toMillis(Duration.fromInputUnsafe(timeout))
      return Effect.timeoutOrElse(Deferred.await(deferred), {
        duration: millis,
        orElse: () =>
          Effect.fail(
            new RedisTimeout({
              written: request.written,
              timeout: millis,
              message: `stopped waiting after ${millis} ms; the command is ${request.written ? "sent and still owed a reply" : "still queued"} and was not cancelled`
            })
          )
      })
    },
    poll: Effect.suspend(() => (Deferred.isDoneUnsafe(deferred) ? Deferred.await(deferred) : Effect.succeed(undefined)))
  }
}

/** Puts a command on its way on an engine; the future is returned once it is admitted. */
export const engineSubmit = (
  engine: Engine,
  command: Command,
  options: CommandOptions | undefined
): Effect.Effect<Future<Reply>, RedisError> =>
  Effect.suspend(() => {
    const invalid = validateCommand(command) ?? invalidTimeout(options)
    if (invalid !== undefined) return Effect.fail(invalid)
    const request = new Request([command], false, 1, timeoutOf(options, engine.options))
    return Effect.as(engine.admit(request), makeFuture<Reply>(request))
  })

const exclusiveFace = (engine: Engine): ExclusiveConnection => ({
  execute: (command, options) => engineExecute(engine, command, options),
  pipeline: (commands, options) => enginePipeline(engine, commands, options)
})

/** A fresh connection of the caller's own for the scope of `use`, closed afterwards. */
const withExclusive =
  (resolved: ResolvedOptions) =>
  <A, E, R>(
    use: (connection: ExclusiveConnection) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>> =>
    Effect.scoped(Effect.flatMap(makeEngine(resolved), (engine) => use(exclusiveFace(engine))))

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
  const service: Service = {
    info,
    execute: (command, options) => engineExecute(engine, command, options),
    submit: (command, options) => engineSubmit(engine, command, options),
    pipeline: (commands, options) => enginePipeline(engine, commands, options),
    withExclusive: withExclusive(resolved)
  }
  return { service, engines: [engine] as ReadonlyArray<Engine> }
})

/** Several engines, each its own socket and window; "spread" picks the least loaded. */
export const makeMultiplexed = Effect.fnUntraced(function* (
  resolved: ResolvedOptions,
  connections: number,
  routing: "spread" | "key"
) {
  if (routing === "key") {
    return yield* new RedisConfigError({
      field: "routing",
      message: `routing: "key" is not available yet (command-key table pending); use routing: "spread"`
    })
  }
  const engines: Array<Engine> = []
  for (let i = 0; i < connections; i++) engines.push(yield* makeEngine(resolved))
  let next = 0
  const pick = (): Engine => {
    if (engines.length === 1) return engines[0]
    // Least in flight; ties go round-robin so idle engines all get used.
    const start = next
    next = (next + 1) % engines.length
    let best = engines[start]
    for (let i = 1; i < engines.length; i++) {
      const engine = engines[(start + i) % engines.length]
      if (engine.window.inUse < best.window.inUse) best = engine
    }
    return best
  }
  const info: ConnectionInfo = {
    strategy: "multiplexed",
    connections,
    window: resolved.window,
    routing,
    target: resolved.target,
    protocol: resolved.protocol
  }
  const service: Service = {
    info,
    execute: (command, options) => engineExecute(pick(), command, options),
    submit: (command, options) => engineSubmit(pick(), command, options),
    pipeline: (commands, options?: PipelineOptions) => enginePipeline(pick(), commands, options),
    withExclusive: withExclusive(resolved)
  }
  return { service, engines: engines as ReadonlyArray<Engine> }
})

/** A pool of connections; each call borrows one for itself. */
export const makePooled = Effect.fnUntraced(function* (resolved: ResolvedOptions, size: number) {
  const pool = yield* Pool.make({ acquire: makeEngine(resolved), size })
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
      if (closing) return Effect.fail(new RedisClosed({ message: `the client of ${resolved.target} is closed` }))
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
    f: (engine: Engine, options: CommandOptions | undefined) => Effect.Effect<A, RedisError>
  ): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      const invalid = invalidTimeout(options)
      if (invalid !== undefined) return Effect.fail(invalid)
      const timeout = timeoutOf(options, resolved)
      if (timeout === Number.POSITIVE_INFINITY) {
        return track(Effect.scoped(Effect.flatMap(Pool.get(pool), (e) => f(e, options))))
      }
      const start = performance.now()
      return track(
        Effect.scoped(
          Pool.get(pool).pipe(
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () =>
                Effect.fail(
                  new RedisTimeout({
                    written: false,
                    timeout,
                    message: `no pooled connection to ${resolved.target} became free within ${timeout} ms (size ${size}); the command was not sent`
                  })
                )
            }),
            Effect.flatMap((engine) =>
              f(engine, { ...options, timeout: Math.max(1, timeout - (performance.now() - start)) })
            )
          )
        )
      )
    })
  const info: ConnectionInfo = {
    strategy: "pooled",
    connections: size,
    window: 1,
    target: resolved.target,
    protocol: resolved.protocol
  }
  const service: Service = {
    info,
    execute: (command, options) => borrow(options, (engine, left) => engineExecute(engine, command, left)),
    // The borrow lasts until the reply has landed, so the connection stays the caller's own.
    submit: (command, options) =>
      Effect.gen(function* () {
        if (closing) return yield* new RedisClosed({ message: `the client of ${resolved.target} is closed` })
        const scope = yield* Scope.make()
        const engine = yield* Pool.get(pool).pipe(
          Scope.provide(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        const future = yield* engineSubmit(engine, command, options).pipe(
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        yield* future.await.pipe(Effect.exit, Effect.andThen(Scope.close(scope, Exit.void)), Effect.forkDetach)
        return future
      }),
    pipeline: (commands, options) => borrow(options, (engine, left) => enginePipeline(engine, commands, left)),
    withExclusive: withExclusive(resolved)
  }
  return { service, engines: [] as ReadonlyArray<Engine> }
})
