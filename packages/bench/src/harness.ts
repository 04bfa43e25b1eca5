/**
 * What every benchmark table shares: closed-loop load generators (one for Effect clients, one
 * for promise clients), interleaved repetitions with medians and same-run ratios, and markdown
 * rendering with the machine, Node version and date.
 *
 * @since 0.1.0
 */
import * as Baseline from "./baseline.ts"
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as os from "node:os"

/**
 * A closed-loop load: `callers` concurrent callers, each keeping `window` commands in flight
 * (window 1 = await each command before sending the next).
 *
 * @since 0.1.0
 * @category models
 */
export interface Load {
  readonly callers: number
  readonly window: number
  /**
   * Batches instead of a sliding window: each caller sends `window` commands at once, awaits
   * all of them, then sends the next `window`.
   */
  readonly batch?: boolean | undefined
}

/**
 * What a cell sends. `SET` writes one of 1024 keys with a 16-byte value; `INCR` increments one
 * counter, so a test can check that the server saw exactly the operations a cell counted.
 *
 * @since 0.1.0
 * @category models
 */
export type Op = "SET" | "INCR" | "PING/GET"

/**
 * The key `INCR` cells increment.
 *
 * @since 0.1.0
 * @category constants
 */
export const COUNTER_KEY = "bench:counter"

const VALUE = "0123456789abcdef"

/**
 * The command a caller sends for its `i`-th operation.
 *
 * @since 0.1.0
 * @category models
 */
export const commandFor = (op: Op, caller: number, i: number): Array<string> => {
  switch (op) {
    case "SET":
      return ["SET", `bench:${(caller * 7919 + i) & 1023}`, VALUE]
    case "INCR":
      return ["INCR", COUNTER_KEY]
    case "PING/GET":
      return (i & 1) === 0 ? ["PING"] : ["GET", `bench:${caller & 1023}`]
  }
}

/**
 * Completed operations and the time from the first send to the last reply.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sample {
  readonly ops: number
  readonly seconds: number
  /**
   * This process's CPU time (user + system, µs) while the cell ran, when measured: the
   * Redis server is another process, so this is the client's (and load generator's) cost.
   */
  readonly cpuMicros?: number | undefined
}

/**
 * Client CPU microseconds per completed operation of a sample (NaN when not measured).
 *
 * @since 0.1.0
 * @category models
 */
export const cpuPerOp = (sample: Sample): number =>
  sample.cpuMicros === undefined ? Number.NaN : sample.cpuMicros / Math.max(sample.ops, 1)

/**
 * Operations per second of a sample.
 *
 * @since 0.1.0
 * @category models
 */
export const rate = (sample: Sample): number => sample.ops / sample.seconds

/**
 * Options of one cell run: its load, what it sends, and how long callers keep sending
 * (commands already in flight at the deadline are awaited and counted).
 *
 * @since 0.1.0
 * @category models
 */
export interface CellOptions {
  readonly load: Load
  readonly op: Op
  readonly millis: number
  /**
   * How an Effect cell sends a batch (`load.batch`): one `executeAll` (default), or one
   * `submit` per command and an await of each future.
   */
  readonly batchFace?: "executeAll" | "submits" | undefined
}

/**
 * Closed loop through an Effect `RedisConnection`: `window` 1 uses `execute`, larger windows
 * keep that many `submit` futures per caller and await the oldest before sending again;
 * batches (`load.batch`) send `window` commands with one `executeAll` (or `window` submits,
 * see `batchFace`) and await them all before the next batch.
 * Every caller sends at least one command, so a process descheduled past the deadline still
 * measures something instead of an empty cell.
 *
 * @since 0.1.0
 * @category load
 */
export const runEffectCell = (
  redis: RedisConnection["Service"],
  options: CellOptions
): Effect.Effect<Sample, unknown> =>
  Effect.suspend(() => {
    const { load, millis, op } = options
    const start = performance.now()
    const deadline = start + millis
    let ops = 0
    const batchCaller = (c: number): Effect.Effect<void, unknown> =>
      options.batchFace === "submits"
        ? Effect.gen(function* () {
            const futures: Array<{ readonly await: Effect.Effect<Reply, unknown> }> = new Array(load.window)
            let i = 0
            do {
              for (let k = 0; k < load.window; k++) futures[k] = yield* redis.submit(commandFor(op, c, i++))
              for (let k = 0; k < load.window; k++) yield* futures[k]!.await
              ops += load.window
            } while (performance.now() < deadline)
          })
        : Effect.gen(function* () {
            const commands: Array<Command> = new Array(load.window)
            let i = 0
            do {
              for (let k = 0; k < load.window; k++) commands[k] = commandFor(op, c, i++)
              yield* redis.executeAll(commands)
              ops += load.window
            } while (performance.now() < deadline)
          })
    const caller = (c: number): Effect.Effect<void, unknown> =>
      load.batch === true
        ? batchCaller(c)
        : load.window === 1
          ? Effect.gen(function* () {
              let i = 0
              do {
                yield* redis.execute(commandFor(op, c, i++))
                ops++
              } while (performance.now() < deadline)
            })
          : Effect.gen(function* () {
              const inFlight: Array<{ readonly await: Effect.Effect<Reply, unknown> }> = []
              let i = 0
              do {
                if (inFlight.length === load.window) {
                  yield* inFlight.shift()!.await
                  ops++
                }
                inFlight.push(yield* redis.submit(commandFor(op, c, i++)))
              } while (performance.now() < deadline)
              for (const future of inFlight) {
                yield* future.await
                ops++
              }
            })
    return Effect.forEach(
      Array.from({ length: load.callers }, (_, c) => c),
      caller,
      {
        concurrency: "unbounded",
        discard: true
      }
    ).pipe(Effect.map(() => ({ ops, seconds: (performance.now() - start) / 1000 })))
  })

/**
 * Closed loop through a promise client (`send` resolves with the reply, rejects on an error).
 *
 * @since 0.1.0
 * @category load
 */
export const runPromiseCell = async (
  send: (command: Command) => Promise<unknown>,
  options: CellOptions
): Promise<Sample> => {
  const { load, millis, op } = options
  const start = performance.now()
  const deadline = start + millis
  let ops = 0
  const batchCaller = async (c: number): Promise<void> => {
    const batch: Array<Promise<unknown>> = new Array(load.window)
    let i = 0
    do {
      for (let k = 0; k < load.window; k++) batch[k] = send(commandFor(op, c, i++))
      await Promise.all(batch)
      ops += load.window
    } while (performance.now() < deadline)
  }
  const caller = async (c: number): Promise<void> => {
    if (load.batch === true) return batchCaller(c)
    const inFlight: Array<Promise<unknown>> = []
    let i = 0
    do {
      if (inFlight.length === load.window) {
        await inFlight.shift()
        ops++
      }
      inFlight.push(send(commandFor(op, c, i++)))
    } while (performance.now() < deadline)
    for (const pending of inFlight) {
      await pending
      ops++
    }
  }
  await Promise.all(Array.from({ length: load.callers }, (_, c) => caller(c)))
  return { ops, seconds: (performance.now() - start) / 1000 }
}

/**
 * A closed loop of `callers` Effect callers, each running `op(caller, i)` and awaiting it
 * before the next, until `millis` have passed (every caller runs at least once).
 *
 * @since 0.1.0
 * @category load
 */
export const runEffectLoop = (
  callers: number,
  millis: number,
  op: (caller: number, i: number) => Effect.Effect<unknown, unknown>
): Effect.Effect<Sample, unknown> =>
  Effect.suspend(() => {
    const start = performance.now()
    const deadline = start + millis
    let ops = 0
    return Effect.forEach(
      Array.from({ length: callers }, (_, c) => c),
      (c) =>
        Effect.gen(function* () {
          let i = 0
          do {
            yield* op(c, i++)
            ops++
          } while (performance.now() < deadline)
        }),
      { concurrency: "unbounded", discard: true }
    ).pipe(Effect.map(() => ({ ops, seconds: (performance.now() - start) / 1000 })))
  })

/**
 * {@link runEffectLoop} for a promise client.
 *
 * @since 0.1.0
 * @category load
 */
export const runPromiseLoop = async (
  callers: number,
  millis: number,
  op: (caller: number, i: number) => Promise<unknown>
): Promise<Sample> => {
  const start = performance.now()
  const deadline = start + millis
  let ops = 0
  const caller = async (c: number) => {
    let i = 0
    do {
      await op(c, i++)
      ops++
    } while (performance.now() < deadline)
  }
  await Promise.all(Array.from({ length: callers }, (_, c) => caller(c)))
  return { ops, seconds: (performance.now() - start) / 1000 }
}

/**
 * The median of some numbers (the mean of the middle two for an even count).
 *
 * @since 0.1.0
 * @category statistics
 */
export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * One measured cell of a table: a row label, a column label and the effect that runs it once
 * for about `millis`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cell {
  readonly row: string
  readonly column: string
  readonly run: (millis: number) => Effect.Effect<Sample, unknown>
}

/**
 * How often and how long cells run.
 *
 * @since 0.1.0
 * @category models
 */
export interface MeasureOptions {
  readonly runs: number
  readonly millis: number
  /** A shorter first round, not recorded; 0 skips it. */
  readonly warmupMillis: number
}

/**
 * Samples of every cell, keyed by `row` then `column`, in run order.
 *
 * @since 0.1.0
 * @category models
 */
export type Measured = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<Sample>>>

/**
 * Runs every cell once as a warm-up, then `runs` rounds in which each cell runs once: rows in
 * order, the cells of a row interleaved (so noise on the machine hits them alike) and rotated
 * one place each round (so no column always runs first, right after the previous row). Each
 * recorded sample carries the process's CPU time (`process.cpuUsage`, user + system) spent
 * while its cell ran.
 *
 * @since 0.1.0
 * @category statistics
 */
export const measure = (cells: ReadonlyArray<Cell>, options: MeasureOptions): Effect.Effect<Measured, unknown> =>
  Effect.gen(function* () {
    const out = new Map<string, Map<string, Array<Sample>>>()
    if (options.warmupMillis > 0) for (const cell of cells) yield* cell.run(options.warmupMillis)
    // The cells of a row, in the order given; each round starts a row at the next column, so no
    // column always runs first after the previous row's (heavier) cells.
    const rows: Array<Array<Cell>> = []
    for (const cell of cells) {
      const last = rows[rows.length - 1]
      if (last !== undefined && last[0]!.row === cell.row) last.push(cell)
      else rows.push([cell])
    }
    for (let r = 0; r < options.runs; r++) {
      for (const cell of rows.flatMap((row) => row.map((_, j) => row[(j + r) % row.length]!))) {
        const cpu = process.cpuUsage()
        const ran = yield* cell.run(options.millis)
        const used = process.cpuUsage(cpu)
        const sample: Sample = { ...ran, cpuMicros: used.user + used.system }
        pushSample(out, cell.row, cell.column, sample)
      }
    }
    recordTable(out)
    return out
  })

/**
 * Appends `sample` to the samples of cell (`row`, `column`).
 *
 * @since 0.1.0
 * @category statistics
 */
export const pushSample = <S>(samples: Map<string, Map<string, Array<S>>>, row: string, column: string, sample: S) => {
  let columns = samples.get(row)
  if (columns === undefined) samples.set(row, (columns = new Map()))
  let list = columns.get(column)
  if (list === undefined) columns.set(column, (list = []))
  list.push(sample)
}

/**
 * Records measured cells as one table of the regression guard (`Baseline`): each cell's median
 * CPU per op and median rate.
 *
 * @since 0.1.0
 * @category statistics
 */
export const recordTable = (measured: Measured): void => {
  const table = Baseline.beginTable()
  for (const [row, columns] of measured) {
    for (const [column, samples] of columns) {
      Baseline.record({
        table,
        row,
        column,
        cpuMicrosPerOp: median(samples.map(cpuPerOp)),
        opsPerSecond: median(samples.map(rate))
      })
    }
  }
}

/**
 * The median rate (ops/s) of a cell.
 *
 * @since 0.1.0
 * @category statistics
 */
export const medianRate = (measured: Measured, row: string, column: string): number =>
  median((measured.get(row)?.get(column) ?? []).map(rate))

/**
 * The median client CPU µs per operation of a cell.
 *
 * @since 0.1.0
 * @category statistics
 */
export const medianCpuPerOp = (measured: Measured, row: string, column: string): number =>
  median((measured.get(row)?.get(column) ?? []).map(cpuPerOp))

/**
 * The median over runs of `a ÷ b`, each ratio taken from the same run.
 *
 * @since 0.1.0
 * @category statistics
 */
export const medianRatio = (measured: Measured, row: string, a: string, b: string): number => {
  const as = measured.get(row)?.get(a) ?? []
  const bs = measured.get(row)?.get(b) ?? []
  return median(as.map((sample, i) => rate(sample) / rate(bs[i]!)))
}

/**
 * One line naming the machine, Node version and date.
 *
 * @since 0.1.0
 * @category rendering
 */
export const machine = (): string => {
  const cpus = os.cpus()
  return `${cpus[0]?.model.trim() ?? "unknown CPU"} × ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}, ${new Date().toISOString()}`
}

/**
 * Formats an ops/s figure with thousands separators.
 *
 * @since 0.1.0
 * @category rendering
 */
export const formatRate = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "—"

/**
 * Formats a CPU time per operation in µs with two decimals.
 *
 * @since 0.1.0
 * @category rendering
 */
export const formatMicros = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : "—")

/**
 * Formats a ratio as `1.23x`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const formatRatio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "—")

/**
 * A markdown table.
 *
 * @since 0.1.0
 * @category rendering
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  for (const row of rows) {
    if (row.length !== header.length) {
      throw new Error(`table row has ${row.length} cells for ${header.length} columns: ${row.join(" | ")}`)
    }
  }
  const align = header.map((_, i) => (i === 0 ? "---" : "---:"))
  return [header, align, ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")
}

/**
 * A closed loop measured in throughput and Node CPU time: `callers` fibers run `op(caller, i)`
 * until `millis` have passed.
 *
 * @since 0.1.0
 * @category measuring
 */
export const cpuLoop = <E>(
  callers: number,
  millis: number,
  op: (caller: number, i: number) => Effect.Effect<unknown, E>
): Effect.Effect<{ readonly rate: number; readonly cpuMicrosPerOp: number }, E> =>
  Effect.gen(function* () {
    let ops = 0
    const started = performance.now()
    const deadline = started + millis
    const cpu = process.cpuUsage()
    yield* Effect.forEach(
      Array.from({ length: callers }, (_, caller) => caller),
      (caller) =>
        Effect.gen(function* () {
          let i = 0
          while (performance.now() < deadline) {
            yield* op(caller, i++)
            ops++
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const used = process.cpuUsage(cpu)
    return {
      rate: ops / ((performance.now() - started) / 1000),
      cpuMicrosPerOp: (used.user + used.system) / Math.max(ops, 1)
    }
  })

/**
 * What a table's `run` takes: the server's port and the repetition settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface TableOptions {
  readonly port: number
  readonly runs: number
  readonly millis: number
  readonly warmupMillis: number
}

/**
 * A table of variants of one closed loop (bare vs instrumented, uncached vs cached …): a warm-up
 * of each at 8 callers, then `options.runs` rounds, each running every variant at every caller
 * count in order (interleaved, so noise hits them alike); rows of callers, variant, median
 * ops/s, median Node CPU µs per op and `compare(cpu, cpu of the first variant)`.
 *
 * @since 0.1.0
 * @category measuring
 */
export const variantTable = <V, E>(
  options: TableOptions,
  callers: ReadonlyArray<number>,
  variants: ReadonlyArray<readonly [string, V]>,
  loop: (
    variant: V,
    callers: number,
    millis: number
  ) => Effect.Effect<{ readonly rate: number; readonly cpuMicrosPerOp: number }, E>,
  compare: (cpu: number, base: number) => string
): Effect.Effect<Array<Array<string>>, E> =>
  Effect.gen(function* () {
    for (const [, variant] of variants) yield* loop(variant, 8, options.warmupMillis)
    const samples = new Map<string, Array<{ readonly rate: number; readonly cpuMicrosPerOp: number }>>()
    for (let round = 0; round < options.runs; round++) {
      for (const count of callers) {
        for (const [name, variant] of variants) {
          const key = `${count}/${name}`
          samples.set(key, [...(samples.get(key) ?? []), yield* loop(variant, count, options.millis)])
        }
      }
    }
    const rows: Array<Array<string>> = []
    for (const count of callers) {
      const cpuOf = (name: string) => median((samples.get(`${count}/${name}`) ?? []).map((s) => s.cpuMicrosPerOp))
      const base = cpuOf(variants[0]![0])
      for (const [name] of variants) {
        const cpu = cpuOf(name)
        rows.push([
          String(count),
          name,
          formatRate(median((samples.get(`${count}/${name}`) ?? []).map((s) => s.rate))),
          cpu.toFixed(2),
          compare(cpu, base)
        ])
      }
    }
    return rows
  })
