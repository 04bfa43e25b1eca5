/**
 * A rate limit shared by closed-loop callers, so two clients can be compared at the same
 * throughput: a client that drives a co-located server harder pays for it in kernel time
 * (more wake-ups, more contention for the same cores), which "CPU per query" at full speed
 * mixes into the client's own cost. Paced at one rate, both clients load the server alike.
 *
 * Permits are due at `perSecond` from the pacer's start; a caller takes one at once when one
 * is due, or waits for a 1 ms ticker that hands due permits to waiters in arrival order. The
 * same pacer (one timer, one promise per wait) serves Effect and promise clients alike.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/**
 * A started pacer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pacer {
  /** Undefined when a permit is due now (taken); else a promise that resolves with one. */
  readonly take: () => Promise<void> | undefined
  /** Stops the ticker (waiters still queued are released, so no caller hangs). */
  readonly stop: () => void
}

/**
 * Starts a pacer at `perSecond` permits per second (`now`: the clock in ms, for tests).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (perSecond: number, now: () => number = () => performance.now()): Pacer => {
  if (!(perSecond > 0) || !Number.isFinite(perSecond)) {
    throw new RangeError(`a pacer needs a positive, finite rate, not ${perSecond}`)
  }
  const origin = now()
  let issued = 0
  const waiters: Array<() => void> = []
  let head = 0
  const due = () => Math.floor(((now() - origin) * perSecond) / 1000)
  const timer = setInterval(() => {
    const allowed = due()
    while (issued < allowed && head < waiters.length) {
      issued++
      waiters[head++]!()
    }
    if (head === waiters.length) {
      waiters.length = 0
      head = 0
    }
  }, 1)
  return {
    take: () => {
      if (head === waiters.length && issued < due()) {
        issued++
        return undefined
      }
      return new Promise<void>((resolve) => {
        waiters.push(resolve)
      })
    },
    stop: () => {
      clearInterval(timer)
      for (let i = head; i < waiters.length; i++) waiters[i]!()
      waiters.length = 0
      head = 0
    }
  }
}

/**
 * Runs `use` with a pacer at `perSecond`, stopped after.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withRate = <A, E>(perSecond: number, use: (pacer: Pacer) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => start(perSecond)),
    use,
    (pacer) => Effect.sync(pacer.stop)
  )

/**
 * `op` behind a permit of `pacer`, for an Effect client (no wait, no extra step, when one is
 * due); `op` itself without a pacer.
 *
 * @since 0.1.0
 * @category combinators
 */
export const paced = <A, E>(pacer: Pacer | undefined, op: () => Effect.Effect<A, E>): (() => Effect.Effect<A, E>) =>
  pacer === undefined
    ? op
    : () =>
        Effect.suspend(() => {
          const wait = pacer.take()
          return wait === undefined
            ? op()
            : Effect.andThen(
                Effect.promise(() => wait),
                op
              )
        })

/**
 * `op` behind a permit of `pacer`, for a promise client; `op` itself without a pacer.
 *
 * @since 0.1.0
 * @category combinators
 */
export const pacedPromise = <A, Args extends ReadonlyArray<unknown> = []>(
  pacer: Pacer | undefined,
  op: (...args: Args) => Promise<A>
): ((...args: Args) => Promise<A>) =>
  pacer === undefined
    ? op
    : (...args) => {
        const wait = pacer.take()
        return wait === undefined ? op(...args) : wait.then(() => op(...args))
      }
