/**
 * Work shared by every caller that waits for it (a map refresh, a node's first connect).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"

/**
 * Runs `work` on a fiber of `scope` and settles `done` with its outcome (after `settled`); the
 * caller waits for `done`. One caller's interruption does not cancel work others wait for, and
 * the work stays interruptible itself, so the timeouts inside it fire (an uninterruptible region
 * would make them wait for the work they are meant to cut short).
 */
export const launch = <A, E>(
  scope: Scope.Scope,
  work: Effect.Effect<A, E>,
  done: Deferred.Deferred<A, E>,
  settled: (exit: Exit.Exit<A, E>) => void
): Effect.Effect<A, E> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.andThen(
      Effect.forkIn(
        Effect.onExit(Effect.interruptible(work), (exit) =>
          Effect.sync(() => {
            settled(exit)
            Deferred.doneUnsafe(done, exit)
          })
        ),
        scope
      ),
      restore(Deferred.await(done))
    )
  )
