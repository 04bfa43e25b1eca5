/**
 * The FullDuplexWindow: a counting semaphore bounding the commands queued plus in flight
 * on one engine.
 *
 * It differs from `effect/Semaphore` in what the engine needs: a permit is taken by the
 * caller but released by whoever finally disposes of the request (usually the socket's
 * reader, outside any fiber), so release is a plain synchronous call; and taking has a
 * synchronous fast path, so an uncontended command costs no extra effect. Waiters are
 * served strictly first come, first served (a batch waiting for many permits is not
 * overtaken by later single commands).
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/**
 * A caller's place in the queue for permits, taken when it is made (`reserve`): whoever asks
 * later is served after it, whenever its caller's fiber next runs.
 *
 * @internal
 */
export class Reservation {
  readonly permits: number
  readonly onGrant: () => void
  granted = false
  /** Left the queue without taking anything. */
  cancelled = false
  resume: ((effect: Effect.Effect<void>) => void) | undefined = undefined
  constructor(permits: number, onGrant: () => void) {
    this.permits = permits
    this.onGrant = onGrant
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export class FullDuplexWindow {
  /** Total permits. */
  readonly size: number
  private taken = 0
  private readonly waiters: Array<Reservation> = []
  private waitersHead = 0
  private onIdle: (() => void) | undefined = undefined

  constructor(size: number) {
    this.size = size
  }

  /** Permits in use: commands queued or in flight. */
  get inUse(): number {
    return this.taken
  }

  /** Callers waiting for permits. */
  get waiting(): number {
    return this.waiters.length - this.waitersHead
  }

  /** Takes `n` permits if they are free and nobody waits before us. */
  tryTake(n: number): boolean {
    if (this.waitersHead === this.waiters.length && this.size - this.taken >= n) {
      this.taken += n
      return true
    }
    return false
  }

  /**
   * Queues for `n` permits now (the caller found no room with `tryTake`); `onGrant` runs
   * synchronously at the moment they are granted, so no interruption can fall between taking
   * the permits and handing the request over (the permits then belong to whoever disposes of
   * the request). Taking the place at once, not when the caller's fiber next runs, is what
   * keeps the engine's order the order in which requests were handed to it.
   */
  reserve(n: number, onGrant: () => void): Reservation {
    const reservation = new Reservation(n, onGrant)
    this.waiters.push(reservation)
    return reservation
  }

  /**
   * Waits until `reservation` is granted. Interrupted before, it leaves the queue without
   * taking anything; interrupted when already granted (at the same moment), `onLate` runs.
   */
  awaitGrant(reservation: Reservation, onLate: () => void): Effect.Effect<void> {
    if (reservation.granted) return Effect.void
    return Effect.callback<void>((resume) => {
      if (reservation.granted) return resume(Effect.void)
      reservation.resume = resume
      return Effect.sync(() => {
        reservation.resume = undefined
        if (reservation.granted) return onLate()
        if (reservation.cancelled) return
        reservation.cancelled = true
        this.compact()
        this.wake()
      })
    })
  }

  /** Returns `n` permits; safe to call from any callback. */
  release(n: number): void {
    this.taken -= n
    if (this.waitersHead < this.waiters.length) this.wake()
    if (this.taken === 0 && this.onIdle !== undefined) {
      const onIdle = this.onIdle
      this.onIdle = undefined
      onIdle()
    }
  }

  /** Resolves once no permit is in use. */
  awaitIdle: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (this.taken === 0) return resume(Effect.void)
    this.onIdle = () => resume(Effect.void)
  })

  private compact(): void {
    while (this.waitersHead < this.waiters.length && this.waiters[this.waitersHead].cancelled) {
      this.waitersHead++
    }
    if (this.waitersHead === this.waiters.length) {
      this.waiters.length = 0
      this.waitersHead = 0
    } else if (this.waitersHead > 1024 && this.waitersHead * 2 > this.waiters.length) {
      this.waiters.splice(0, this.waitersHead)
      this.waitersHead = 0
    }
  }

  private wake(): void {
    this.compact()
    while (this.waitersHead < this.waiters.length) {
      const waiter = this.waiters[this.waitersHead]
      if (waiter.cancelled) {
        this.waitersHead++
        continue
      }
      if (this.size - this.taken < waiter.permits) break
      this.taken += waiter.permits
      waiter.granted = true
      const resume = waiter.resume
      waiter.resume = undefined
      this.waitersHead++
      waiter.onGrant()
      resume?.(Effect.void)
    }
    this.compact()
  }
}
