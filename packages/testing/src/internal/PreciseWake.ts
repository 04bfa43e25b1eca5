/**
 * Wake-ups at sub-millisecond deadlines without spinning: Node's timers have 1 ms
 * resolution, so a worker thread sleeps in `Atomics.wait` (a futex wait with a fractional
 * millisecond timeout, no CPU while waiting) until the deadline and posts a message to the
 * owner's event loop. One deadline at a time; setting a new one replaces the old. A wake-up
 * may come for a deadline that was just replaced: the owner must tolerate a spurious call.
 *
 * Times are absolute milliseconds on `performance.timeOrigin + performance.now()`, which
 * both threads share.
 *
 * @internal
 */
import { Worker } from "node:worker_threads"

/** The worker's code (CommonJS, evaluated): sleeps until the shared deadline, then posts. */
const source = `
const { parentPort, workerData } = require("node:worker_threads")
const generation = new Int32Array(workerData, 0, 1)
const deadline = new Float64Array(workerData, 8, 1)
const now = () => performance.timeOrigin + performance.now()
for (;;) {
  const seen = Atomics.load(generation, 0)
  const due = deadline[0]
  if (due < 0) break
  if (due === 0) { Atomics.wait(generation, 0, seen); continue }
  const left = due - now()
  if (left > 0) { Atomics.wait(generation, 0, seen, left); continue }
  parentPort.postMessage(0)
  // Fired: sleep until the owner sets another deadline.
  Atomics.wait(generation, 0, seen)
}
`

/** The current time on the shared timeline, in milliseconds. */
export const nowMillis = (): number => performance.timeOrigin + performance.now()

export interface PreciseWake {
  /** Wake at `millis` (absolute, `nowMillis` timeline); `undefined` cancels. */
  readonly set: (millis: number | undefined) => void
  readonly close: () => Promise<void>
}

/** Starts the waker; `onWake` runs on the owner's event loop. */
export const make = (onWake: () => void): PreciseWake => {
  const shared = new SharedArrayBuffer(16)
  const generation = new Int32Array(shared, 0, 1)
  const deadline = new Float64Array(shared, 8, 1)
  const worker = new Worker(source, { eval: true, workerData: shared })
  worker.on("message", onWake)
  const publish = (value: number) => {
    deadline[0] = value
    Atomics.add(generation, 0, 1)
    Atomics.notify(generation, 0)
  }
  return {
    set: (millis) => publish(millis === undefined ? 0 : Math.max(millis, Number.MIN_VALUE)),
    close: async () => {
      publish(-1)
      await worker.terminate()
    }
  }
}
