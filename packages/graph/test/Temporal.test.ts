import { assert, describe, it } from "@effect/vitest"
import * as Temporal from "../src/Temporal.ts"

describe("Temporal", () => {
  it("DateTime − DateTime = Duration and DateTime ± Duration = DateTime", () => {
    const a = new Temporal.DateTime(1704164645) // 2024-01-02T03:04:05
    const b = new Temporal.DateTime(1704067200) // 2024-01-01T00:00:00
    const d = Temporal.diff(a, b)
    assert.instanceOf(d, Temporal.Duration)
    assert.strictEqual(d.seconds, 97445)
    assert.strictEqual(String(d), "P1DT3H4M5S")
    assert.strictEqual(String(Temporal.plus(b, d)), "2024-01-02T03:04:05")
    assert.strictEqual(String(Temporal.minus(a, d)), "2024-01-01T00:00:00")
    assert.strictEqual(String(a.minus(new Temporal.Duration(3600))), "2024-01-02T02:04:05")
  })

  it("nothing else type-checks", () => {
    const date = new Temporal.Date(1704153600)
    const time = Temporal.timeOf(3, 4, 5)
    const dt = new Temporal.DateTime(0)
    const d = new Temporal.Duration(1)
    // Checked by tsc (an unused @ts-expect-error is itself an error); never run.
    const typeChecks = () => {
      // @ts-expect-error a Date is not a DateTime
      Temporal.diff(date, dt)
      // @ts-expect-error a Time is not a Duration
      Temporal.plus(dt, time)
      // @ts-expect-error Duration + DateTime is not defined
      Temporal.plus(d, dt)
      // @ts-expect-error a DateTime is not a Duration
      dt.plus(dt)
      // @ts-expect-error Date − Date is not defined
      date.since(date)
    }
    assert.isFunction(typeChecks)
    assert.strictEqual(String(time), "03:04:05")
    assert.strictEqual(String(date), "2024-01-02")
  })

  it("renders durations as the server does", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "P"],
      [604800, "P7D"],
      [864000000, "P27Y4M18D"],
      [3600000000, "P114Y28DT16H"],
      [-3600, "P-1Y11M30DT23H"],
      [-2678400, "P-1Y11M"],
      [-90, "P-1Y11M30DT23H58M30S"]
    ]
    for (const [seconds, text] of cases) assert.strictEqual(String(new Temporal.Duration(seconds)), text)
  })

  it("refuses fractional seconds", () => {
    assert.throws(() => new Temporal.Duration(0.5))
  })
})
