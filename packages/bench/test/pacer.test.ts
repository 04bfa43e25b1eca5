import { assert, describe, it } from "@effect/vitest"
import * as Pacer from "../src/pacer.ts"

describe("bench pacer", () => {
  it("grants no permit before it is due, then hands due permits to waiters in arrival order", async () => {
    let clock = 0
    const pacer = Pacer.start(1000, () => clock)
    try {
      clock = 3 // three permits due
      assert.strictEqual(pacer.take(), undefined)
      assert.strictEqual(pacer.take(), undefined)
      assert.strictEqual(pacer.take(), undefined)
      const order: Array<number> = []
      const waits = [pacer.take(), pacer.take(), pacer.take()].map((wait, i) => {
        assert.isDefined(wait)
        return wait!.then(() => order.push(i))
      })
      // The ticker runs, but nothing more is due: no waiter is released.
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepStrictEqual(order, [])
      clock = 5 // two more due
      await Promise.all(waits.slice(0, 2))
      // One more tick: the third is still not due.
      await new Promise((resolve) => setTimeout(resolve, 20))
      assert.deepStrictEqual(order, [0, 1])
      // A new caller queues behind the one still waiting even once a permit is due.
      clock = 6
      const late = pacer.take()
      assert.isDefined(late)
      clock = 7
      await Promise.all([waits[2], late])
      assert.deepStrictEqual(order, [0, 1, 2])
    } finally {
      pacer.stop()
    }
  })

  it("stop releases every waiter (no caller hangs), and a rate that is not positive is refused", async () => {
    const pacer = Pacer.start(1, () => 0)
    const waits = [pacer.take(), pacer.take()]
    pacer.stop()
    await Promise.all(waits)
    assert.throws(() => Pacer.start(0), /positive, finite rate/)
    assert.throws(() => Pacer.start(Number.NaN), /positive, finite rate/)
  })
})
