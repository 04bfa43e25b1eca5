/**
 * FalkorDB's temporal values: `localdatetime` (`DateTime`), `date` (`Date`), `localtime`
 * (`Time`) and `duration` (`Duration`). The server sends each as a whole number of
 * seconds (compact codes 13–16), so there is no sub-second precision and no time zone.
 *
 * The algebra is deliberately small and checked by the compiler: `DateTime − DateTime =
 * Duration`, `DateTime ± Duration = DateTime`. Nothing else type-checks (each class has a
 * distinct `_tag`, so a `Date` is never accepted where a `DateTime` is expected).
 *
 * @since 0.1.0
 */

const SECONDS_PER_DAY = 86400
/** The server stores a `localtime` as seconds since the epoch of 1900-01-01 at that time of day. */
const TIME_EPOCH_OFFSET = 2208988800

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))
const floorMod = (a: number, b: number): number => ((a % b) + b) % b

const utcParts = (seconds: number) => {
  const d = new globalThis.Date(seconds * 1000)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds()
  }
}

const checkSeconds = (seconds: number, what: string): number => {
  if (!Number.isSafeInteger(seconds)) throw new RangeError(`${what} needs a whole number of seconds (got ${seconds})`)
  return seconds
}

/**
 * A duration: a signed number of seconds. The server converts months and years by adding
 * them to 1970-01-01 (`P1M` is 31 days, `P1Y` 365 days), so this is all it carries.
 *
 * @since 0.1.0
 * @category models
 */
export class Duration {
  readonly _tag = "Duration"
  readonly seconds: number
  constructor(seconds: number) {
    this.seconds = checkSeconds(seconds, "Duration")
  }
  /** The duration with the opposite sign. */
  negate(): Duration {
    return new Duration(-this.seconds)
  }
  /**
   * The server's rendering: the calendar breakdown of `1970-01-01T00:00:00 + seconds`
   * (`P1DT2H`, `P` for zero, `P-1Y11M30DT23H` for minus one hour).
   */
  toString(): string {
    const p = utcParts(this.seconds)
    let out = "P"
    if (p.year !== 1970) out += `${p.year - 1970}Y`
    if (p.month !== 1) out += `${p.month - 1}M`
    if (p.day !== 1) out += `${p.day - 1}D`
    if (p.hour !== 0 || p.minute !== 0 || p.second !== 0) {
      out += "T"
      if (p.hour !== 0) out += `${p.hour}H`
      if (p.minute !== 0) out += `${p.minute}M`
      if (p.second !== 0) out += `${p.second}S`
    }
    return out
  }
  toJSON(): string {
    return this.toString()
  }
}

/**
 * A local date-time (`localdatetime`): seconds since 1970-01-01T00:00:00 of a wall-clock
 * time read as UTC.
 *
 * @example
 * ```ts
 * import * as Temporal from "@effect-falkordb/graph/Temporal"
 *
 * const launch = new Temporal.DateTime(Date.UTC(1969, 6, 16, 13, 32) / 1000)
 * const landing = launch.plus(new Temporal.Duration(4 * 86400 + 6 * 3600 + 45 * 60))
 * landing.since(launch).toString() // "P4DT6H45M"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class DateTime {
  readonly _tag = "DateTime"
  readonly epochSeconds: number
  constructor(epochSeconds: number) {
    this.epochSeconds = checkSeconds(epochSeconds, "DateTime")
  }
  /** `this + duration`. */
  plus(duration: Duration): DateTime {
    return new DateTime(this.epochSeconds + duration.seconds)
  }
  /** `this − duration`. */
  minus(duration: Duration): DateTime {
    return new DateTime(this.epochSeconds - duration.seconds)
  }
  /** `this − other`, as a duration. */
  since(other: DateTime): Duration {
    return new Duration(this.epochSeconds - other.epochSeconds)
  }
  /** The wall-clock time as a JS `Date` whose UTC fields are the local fields. */
  toJSDate(): globalThis.Date {
    return new globalThis.Date(this.epochSeconds * 1000)
  }
  /** `YYYY-MM-DDTHH:MM:SS`, as the server prints it. */
  toString(): string {
    const p = utcParts(this.epochSeconds)
    return `${p.year}-${pad2(p.month)}-${pad2(p.day)}T${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`
  }
  toJSON(): string {
    return this.toString()
  }
}

/**
 * A calendar date: seconds since the epoch of that date at 00:00:00 UTC.
 *
 * @since 0.1.0
 * @category models
 */
// biome-ignore lint/suspicious/noShadowRestrictedNames: used as Temporal.Date; the module reaches the global as globalThis.Date
export class Date {
  readonly _tag = "Date"
  readonly epochSeconds: number
  constructor(epochSeconds: number) {
    this.epochSeconds = checkSeconds(epochSeconds, "Date")
  }
  get year(): number {
    return utcParts(this.epochSeconds).year
  }
  get month(): number {
    return utcParts(this.epochSeconds).month
  }
  get day(): number {
    return utcParts(this.epochSeconds).day
  }
  /** `YYYY-MM-DD` with the year not zero-padded (`1-01-01`), as the server prints it. */
  toString(): string {
    const p = utcParts(this.epochSeconds)
    return `${p.year}-${pad2(p.month)}-${pad2(p.day)}`
  }
  toJSON(): string {
    return this.toString()
  }
}

/**
 * A local time of day. The wire value is seconds since the epoch of 1900-01-01 at that
 * time and is not reduced after arithmetic, so the time of day is taken with a floored
 * modulo; `raw` keeps the value as sent.
 *
 * @since 0.1.0
 * @category models
 */
export class Time {
  readonly _tag = "Time"
  readonly raw: number
  /** Seconds since midnight, 0 … 86399. */
  readonly secondOfDay: number
  constructor(raw: number) {
    this.raw = checkSeconds(raw, "Time")
    this.secondOfDay = floorMod(raw + TIME_EPOCH_OFFSET, SECONDS_PER_DAY)
  }
  get hour(): number {
    return Math.floor(this.secondOfDay / 3600)
  }
  get minute(): number {
    return Math.floor(this.secondOfDay / 60) % 60
  }
  get second(): number {
    return this.secondOfDay % 60
  }
  /** `HH:MM:SS`. */
  toString(): string {
    return `${pad2(this.hour)}:${pad2(this.minute)}:${pad2(this.second)}`
  }
  toJSON(): string {
    return this.toString()
  }
}

/**
 * A time from hours, minutes and seconds, encoded as the server does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const timeOf = (hour: number, minute: number, second: number): Time =>
  new Time(hour * 3600 + minute * 60 + second - TIME_EPOCH_OFFSET)

/**
 * `a − b` for two date-times.
 *
 * @since 0.1.0
 * @category combinators
 */
export const diff = (a: DateTime, b: DateTime): Duration => a.since(b)

/**
 * `dateTime + duration`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const plus = (dateTime: DateTime, duration: Duration): DateTime => dateTime.plus(duration)

/**
 * `dateTime − duration`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const minus = (dateTime: DateTime, duration: Duration): DateTime => dateTime.minus(duration)

/**
 * Any temporal value.
 *
 * @since 0.1.0
 * @category models
 */
export type Temporal = DateTime | Date | Time | Duration
