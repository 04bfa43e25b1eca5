/**
 * `executeAll`: N independent commands whose one caller is suspended once and resumed when
 * the last of them has settled (a `RequestGroup` counts them down), instead of once per
 * command as awaiting N futures does.
 *
 * - Admission is synchronous while the window has room: each command goes to the lane its
 *   router picks (its first key's engine, or the least loaded one), in the array's order.
 * - A command that finds no room (or a lane that holds a moving key) takes its place in the
 *   window's queue at once, in order (`Lane.admit`); it is admitted when replies return
 *   permits, without the caller (a batch larger than the window goes out in pieces, never
 *   deadlocks). The caller waits for those admissions, bounded together by the call's
 *   timeout: past it the commands not yet written fail with `Timeout { written: false }` and
 *   are never sent.
 * - Each admitted command has its own timeout for its reply, swept by its engine as usual.
 * - An interrupted caller abandons every command: the unwritten ones are never sent, the
 *   written ones are owed (their late replies are read and dropped in position).
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { ExecuteAll, ExecuteAllOptions } from "../RedisConnection.ts"
import { RedisError, Timeout } from "../RedisError.ts"
import type { Lane } from "./Strategies.ts"
import { Engine } from "./Engine.ts"
import { abandonRequest, Request, type RequestGroup } from "./Request.ts"

/** One outcome per command, in command order. */
export type Results = ReadonlyArray<Result.Result<Reply, RedisError>>

/** The replies in order, or the first failure in command order. */
const firstFailure = (results: Results): Effect.Effect<ReadonlyArray<Reply>, RedisError> => {
  const replies: Array<Reply> = new Array(results.length)
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!
    if (result._tag === "Failure") return Effect.fail(result.failure)
    replies[i] = result.success
  }
  return Effect.succeed(replies)
}

/**
 * An `executeAll` from a function that settles every command to a `Result` (wrappers, mocks,
 * a cluster's split): `mode: "result"` hands the results over, the default mode fails with
 * the first failure in command order.
 */
export const fromResults = (
  settle: (
    commands: ReadonlyArray<Command>,
    options: ExecuteAllOptions | undefined
  ) => Effect.Effect<Results, RedisError>
): ExecuteAll =>
  ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
    options?.mode === "result"
      ? settle(commands, options)
      : Effect.flatMap(settle(commands, options), firstFailure)) as ExecuteAll

/**
 * Runs `commands` split into groups by `keyOf` (a node, a primary or replica side), the
 * groups concurrently, and puts the results back in command order. A group that fails as a
 * whole (its node cannot be reached) fails each of its commands with that error.
 */
export const scatter = <K>(
  commands: ReadonlyArray<Command>,
  keyOf: (command: Command, index: number) => K,
  run: (key: K, commands: ReadonlyArray<Command>) => Effect.Effect<Results, RedisError>
): Effect.Effect<Results, RedisError> =>
  Effect.suspend(() => {
    const groups = new Map<K, Array<number>>()
    for (let i = 0; i < commands.length; i++) {
      const key = keyOf(commands[i]!, i)
      const group = groups.get(key)
      if (group === undefined) groups.set(key, [i])
      else group.push(i)
    }
    if (groups.size <= 1) {
      const only = groups.keys().next()
      return only.done === true ? Effect.succeed([]) : run(only.value, commands)
    }
    const out: Array<Result.Result<Reply, RedisError>> = new Array(commands.length)
    return Effect.as(
      Effect.forEach(
        groups,
        ([key, indices]) =>
          Effect.map(
            Effect.catch(
              run(
                key,
                indices.map((i) => commands[i]!)
              ),
              (error) => Effect.succeed(indices.map(() => Result.fail(error)))
            ),
            (results) => {
              for (let j = 0; j < indices.length; j++) out[indices[j]!] = results[j]!
            }
          ),
        { concurrency: "unbounded", discard: true }
      ),
      out
    )
  })

/** The batch in flight: its requests, where each was admitted, and the caller to wake. */
class Batch implements RequestGroup {
  remaining: number
  resume: ((effect: Effect.Effect<any, RedisError>) => void) | undefined = undefined
  readonly requests: Array<Request<Reply>>
  /** The lane each request was handed to (undefined: refused, never handed over). */
  readonly lanes: Array<Lane | undefined>
  readonly results: boolean
  /**
   * Requests (by index, in order) that took their place in a full window or a held lane: the
   * caller waits for their admissions, `admissions[k]` being the k-th one's.
   */
  rest: Array<number> | undefined = undefined
  admissions: Array<Effect.Effect<void, RedisError>> | undefined = undefined
  constructor(size: number, results: boolean) {
    this.remaining = size
    this.requests = new Array(size)
    this.lanes = new Array(size)
    this.results = results
  }

  readonly settled = (): void => {
    if (--this.remaining > 0) return
    const resume = this.resume
    if (resume !== undefined) {
      this.resume = undefined
      resume(this.outcome())
    }
  }

  /** Every request has settled: the replies (or the first failure), or one result each. */
  outcome(): Effect.Effect<any, RedisError> {
    const requests = this.requests
    if (this.results) {
      const results: Array<Result.Result<Reply, RedisError>> = new Array(requests.length)
      for (let i = 0; i < requests.length; i++) {
        const exit = requests[i]!.exit!
        // A request fails only with `Exit.fail(error)`: its error is always there.
        results[i] = Exit.isSuccess(exit)
          ? Result.succeed(exit.value)
          : Result.fail(Option.getOrThrow(Exit.findErrorOption(exit)))
      }
      return Effect.succeed(results)
    }
    const replies: Array<Reply> = new Array(requests.length)
    for (let i = 0; i < requests.length; i++) {
      const exit = requests[i]!.exit!
      // An exit is an effect: the first failure in command order is the outcome.
      if (!Exit.isSuccess(exit)) return exit
      replies[i] = exit.value
    }
    return Effect.succeed(replies)
  }

  /** Request `i`'s caller is gone: unwritten, it is never sent (even if granted later); written, it is owed. */
  abandonOne(i: number): void {
    const lane = this.lanes[i]
    const request = this.requests[i]!
    if (lane === undefined || request.done) return
    if (lane instanceof Engine) lane.abandon(request)
    else abandonRequest(request)
  }

  /** The caller is gone: unwritten commands are never sent, written ones are owed. */
  readonly abandon = (): void => {
    this.resume = undefined
    for (let i = 0; i < this.requests.length; i++) this.abandonOne(i)
  }

  /** Waits for the last request to settle (no wait when it already has). */
  readonly wait: Effect.Effect<any, RedisError> = Effect.callback<any, RedisError>((resume) => {
    if (this.remaining === 0) return resume(this.outcome())
    this.resume = resume
    return Effect.sync(this.abandon)
  })
}

/**
 * Waits, in order, for the admissions of the requests that found no room; the waits are
 * bounded together by `budget` ms. Past it, each of them not yet written fails with
 * `Timeout { written: false }` and is never sent (granted later, it is skipped); one already
 * written keeps its own timeout.
 */
const admitRest = (batch: Batch, budget: number, reportedTimeout: number): Effect.Effect<void> => {
  const rest = batch.rest!
  const admissions = batch.admissions!
  let next = 0
  const waitAll = Effect.gen(function* () {
    for (; next < rest.length; next++) {
      const request = batch.requests[rest[next]!]!
      // Refused (closed, offline) or timed out on its own bound: that command's outcome.
      yield* Effect.catch(admissions[next]!, (error) => Effect.sync(() => request.complete(Exit.fail(error))))
    }
  })
  if (budget === Number.POSITIVE_INFINITY) return waitAll
  return Effect.timeoutOrElse(waitAll, {
    duration: budget,
    orElse: () =>
      Effect.sync(() => {
        const error = new RedisError({
          reason: new Timeout({
            written: false,
            timeout: reportedTimeout,
            message: `no room in the window within ${reportedTimeout} ms for ${rest.length - next} of the batch's commands; those not sent by then never will be`
          })
        })
        for (; next < rest.length; next++) {
          const index = rest[next]!
          const request = batch.requests[index]!
          if (request.done || request.written) continue
          batch.abandonOne(index)
          request.complete(Exit.fail(error))
        }
      })
  })
}

/**
 * Sends checked commands on the lanes `laneOf` picks and resumes the caller once, when
 * the last has settled. `timeout` is each command's (decoded once); `reportedTimeout` is what
 * errors name (a pooled call runs on what is left of its budget). Every command takes its
 * place on its lane in this synchronous step, in the array's order, even when the lane's
 * window is full (`Lane.admit` queues it at once), so nothing routed later overtakes it.
 */
export const onLanes = (
  commands: ReadonlyArray<Command>,
  laneOf: (command: Command) => Lane,
  timeout: number,
  results: boolean,
  reportedTimeout: number = timeout
): Effect.Effect<any, RedisError> =>
  Effect.callback<any, RedisError>((resume) => {
    const size = commands.length
    const batch = new Batch(size, results)
    for (let i = 0; i < size; i++) {
      const command = commands[i]!
      const request = new Request<Reply>([command], false, 1, timeout, reportedTimeout)
      request.group = batch
      batch.requests[i] = request
      const lane = laneOf(command)
      batch.lanes[i] = lane
      if (lane instanceof Engine) {
        // The engine's own fast path, without an effect per command.
        const refusal = lane.refusal()
        if (refusal !== undefined) {
          batch.lanes[i] = undefined
          request.complete(Exit.fail(refusal))
          continue
        }
        if (lane.window.tryTake(1)) {
          if (lane.metrics !== undefined) request.startedAt = performance.now()
          lane.enqueue(request)
          continue
        }
      }
      // A full window (or a lane holding a moving key): its place is taken now, the wait comes later.
      ;(batch.rest ??= []).push(i)
      ;(batch.admissions ??= []).push(lane.admit(request))
    }
    if (batch.rest === undefined) {
      if (batch.remaining === 0) return resume(batch.outcome())
      batch.resume = resume
      return Effect.sync(batch.abandon)
    }
    resume(
      Effect.onInterrupt(Effect.andThen(admitRest(batch, timeout, reportedTimeout), batch.wait), () =>
        Effect.sync(batch.abandon)
      )
    )
    return undefined
  })
