/**
 * The policy of a self-sizing multiplexed client (`connections: { min, max }`): from what the
 * engines show on each tick it decides how many engines should be active. Pure (no sockets,
 * no clock): `ElasticEngines` samples and applies.
 *
 * - **Window-bound**: callers wait for window permits on several ticks in a row. More
 *   engines mean more permits, so an engine is added at once (no trial).
 * - **Busy**: two or more commands are owed on most ticks (one pipe serialises them), but the
 *   window has room. An extra engine helps only where the bottleneck is per socket (a server
 *   that runs one command per connection at a time, like FalkorDB's queries, or a socket at
 *   its limit); where the client's own CPU is the limit it costs. So it is tried: one engine
 *   more for a few ticks, kept if the routed rate rose by `gain`, else retired, with a
 *   doubling back-off before the next try.
 * - **Probe down**: while busy with more than `min` engines, one fewer is tried now and then
 *   and kept if the rate held within `loss`.
 * - **Light**: at most one command owed and nobody waiting for a whole second: one engine
 *   fewer (down to `min`), no trial.
 *
 * @internal
 */

/** What the engines showed on one tick. */
export interface Sample {
  /** Commands routed during the tick (closed loop: the completion rate). */
  readonly routed: number
  /** Window permits in use over the active engines at the tick (queued plus owed commands). */
  readonly inUse: number
  /** Callers waiting for window permits at the tick. */
  readonly waiting: number
}

/** The policy's knobs, in ticks (the client ticks every `TICK_MILLIS`). */
export interface Settings {
  readonly windowTicks: number
  readonly busyTicks: number
  readonly lightTicks: number
  /** Ticks skipped after a change (key migration, connection warm-up) before measuring. */
  readonly settleTicks: number
  readonly trialTicks: number
  /** A trial engine is kept if the rate rose by this fraction. */
  readonly gain: number
  /** A probe down is kept if the rate fell by less than this fraction. */
  readonly loss: number
  readonly upBackoff: number
  readonly downBackoff: number
  readonly maxBackoff: number
}

/** How often the client samples its engines. */
export const TICK_MILLIS = 50

export const defaultSettings: Settings = {
  windowTicks: 3,
  busyTicks: 20,
  lightTicks: 20,
  settleTicks: 2,
  trialTicks: 6,
  gain: 0.1,
  loss: 0.05,
  upBackoff: 200,
  downBackoff: 200,
  maxBackoff: 2400
}

interface Trial {
  readonly direction: 1 | -1
  readonly baseline: number
  settle: number
  readonly rates: Array<number>
}

const mean = (values: ReadonlyArray<number>): number =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length

/**
 * @internal
 */
export class EngineSizer {
  readonly min: number
  readonly max: number
  readonly settings: Settings
  private tickCount = 0
  private windowRun = 0
  private busyRun = 0
  private lightRun = 0
  private readonly recent: Array<number> = []
  private trial: Trial | undefined = undefined
  private upAt: number
  private downAt: number
  private upBackoff: number
  private downBackoff: number
  /** Trials run and kept, for tests and the bench. */
  trials = 0
  kept = 0

  constructor(min: number, max: number, settings: Settings = defaultSettings) {
    this.min = min
    this.max = max
    this.settings = settings
    this.upBackoff = settings.upBackoff
    this.downBackoff = settings.downBackoff
    this.upAt = 0
    this.downAt = settings.downBackoff
  }

  /** A trial is running (its engine is on probation). */
  get trying(): boolean {
    return this.trial !== undefined
  }

  /**
   * Takes one tick's sample with `active` engines and returns the number of engines wanted
   * now, or `undefined` for no change. The caller reports the outcome with `applied`.
   */
  tick(sample: Sample, active: number): number | undefined {
    const s = this.settings
    const now = ++this.tickCount
    const windowBound = sample.waiting > 0
    const busy = sample.inUse >= 2
    const light = sample.inUse <= 1 && !windowBound
    this.windowRun = windowBound ? this.windowRun + 1 : 0
    this.busyRun = busy ? this.busyRun + 1 : 0
    this.lightRun = light ? this.lightRun + 1 : 0

    const trial = this.trial
    if (trial !== undefined) {
      if (trial.settle > 0) {
        trial.settle--
        return undefined
      }
      if (!busy) {
        // The load fell away mid-trial: it proves nothing either way, so no back-off.
        this.trial = undefined
        this.recent.length = 0
        if (trial.direction === 1) {
          this.upAt = now + s.busyTicks
          return active - 1
        }
        this.downAt = now + this.downBackoff
        return undefined
      }
      trial.rates.push(sample.routed)
      if (trial.rates.length < s.trialTicks) return undefined
      this.trial = undefined
      this.recent.length = 0
      const rate = mean(trial.rates)
      if (trial.direction === 1) {
        if (rate >= trial.baseline * (1 + s.gain)) {
          this.kept++
          this.upBackoff = s.upBackoff
          this.downAt = now + this.downBackoff
          // It helped: try one more at once, against the rate just measured.
          if (active < this.max && sample.waiting === 0) return this.startTrial(1, active, rate)
          return undefined
        }
        this.upBackoff = Math.min(this.upBackoff * 2, s.maxBackoff)
        this.upAt = now + this.upBackoff
        return active - 1
      }
      if (rate >= trial.baseline * (1 - s.loss)) {
        this.kept++
        this.downBackoff = s.downBackoff
        this.downAt = now + this.downBackoff
        return undefined
      }
      this.downBackoff = Math.min(this.downBackoff * 2, s.maxBackoff)
      this.downAt = now + this.downBackoff
      // Back to the size that did better; no trial up from there for a while either.
      this.upAt = now + this.upBackoff
      return active + 1
    }

    this.recent.push(sample.routed)
    if (this.recent.length > s.busyTicks) this.recent.shift()
    if (this.windowRun >= s.windowTicks && active < this.max) {
      this.windowRun = 0
      this.recent.length = 0
      return active + 1
    }
    if (this.lightRun >= s.lightTicks && active > this.min) {
      this.lightRun = 0
      this.recent.length = 0
      return active - 1
    }
    if (this.busyRun >= s.busyTicks && this.windowRun === 0) {
      if (active < this.max && now >= this.upAt) return this.startTrial(1, active)
      if (active > this.min && now >= this.downAt) return this.startTrial(-1, active)
    }
    return undefined
  }

  private startTrial(direction: 1 | -1, active: number, baseline: number = mean(this.recent)): number {
    this.trials++
    this.trial = { direction, baseline, settle: this.settings.settleTicks, rates: [] }
    this.recent.length = 0
    this.busyRun = 0
    return active + direction
  }

  /** The change the client made (it may differ from the wish, e.g. a connect failed). */
  applied(wanted: number, active: number): void {
    if (wanted !== active) this.trial = undefined
  }
}
