/**
 * The server's ceiling: `redis-benchmark -t set -P N -q --csv` against the same server, its
 * requests/second parsed from the CSV line.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Harness from "./harness.ts"

/**
 * `redis-benchmark` is missing, failed, or printed something this module cannot read.
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisBenchmarkError extends Data.TaggedError("RedisBenchmarkError")<{
  readonly reason: "NotFound" | "Failed" | "UnreadableOutput"
  readonly message: string
  readonly hint: string
}> {}

/**
 * Reads the SET requests/second from `redis-benchmark --csv` output, e.g.
 * `"test","rps",…` then `"SET","434782.59",…`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseCsv = (output: string, test = "SET"): number | undefined => {
  for (const line of output.split(/\r?\n/)) {
    const cells = line.split(",").map((cell) => cell.replace(/^"|"$/g, ""))
    if (cells[0] === test) {
      const rps = Number(cells[1])
      if (Number.isFinite(rps) && rps > 0) return rps
    }
  }
  return undefined
}

/**
 * One `redis-benchmark` run of `requests` SETs from 50 connections, `pipeline` deep each.
 * The sample's time is derived from the reported rate.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const measureOnce = (options: {
  readonly port: number
  readonly pipeline: number
  readonly requests: number
  readonly binary?: string | undefined
}): Effect.Effect<Harness.Sample, RedisBenchmarkError> =>
  Effect.callback<Harness.Sample, RedisBenchmarkError>((resume) => {
    const binary = options.binary ?? process.env.REDIS_BENCHMARK ?? "redis-benchmark"
    const args = ["-h", "127.0.0.1", "-p", String(options.port), "-t", "set", "-n", String(options.requests)]
    args.push("-P", String(options.pipeline), "-c", "50", "-q", "--csv")
    // redis-benchmark waits forever when the server is unreachable: bound it.
    const child = ChildProcess.execFile(binary, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") {
        return resume(
          Effect.fail(
            new RedisBenchmarkError({
              reason: "NotFound",
              message: `redis-benchmark not found: ${binary}`,
              hint: "apt-get install redis-tools, or set REDIS_BENCHMARK to its path"
            })
          )
        )
      }
      if (error) {
        return resume(
          Effect.fail(
            new RedisBenchmarkError({
              reason: "Failed",
              message: `redis-benchmark ${args.join(" ")} failed: ${error.message} ${String(stderr).trim()}`,
              hint: "check that the server is up on that port"
            })
          )
        )
      }
      const rps = parseCsv(String(stdout))
      if (rps === undefined) {
        return resume(
          Effect.fail(
            new RedisBenchmarkError({
              reason: "UnreadableOutput",
              message: `no SET line in redis-benchmark output: ${String(stdout).slice(0, 400)}`,
              hint: "a redis-benchmark with --csv support (redis-tools >= 6) is needed"
            })
          )
        )
      }
      resume(Effect.succeed({ ops: options.requests, seconds: options.requests / rps }))
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

/**
 * Runs each pipeline depth `runs` times, interleaved, and renders the medians.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: {
  readonly port: number
  readonly runs: number
  readonly requests: number
  readonly pipelines: ReadonlyArray<number>
}): Effect.Effect<string, unknown> =>
  Effect.gen(function* () {
    const cells: Array<Harness.Cell> = options.pipelines.map((pipeline) => ({
      row: `-P ${pipeline}`,
      column: "SET/s",
      run: () => measureOnce({ port: options.port, pipeline, requests: options.requests })
    }))
    const measured = yield* Harness.measure(cells, { runs: options.runs, millis: 0, warmupMillis: 0 })
    return options.pipelines
      .map(
        (p) =>
          `redis-benchmark -c 50 -P ${p}: ${Harness.formatRate(Harness.medianRate(measured, `-P ${p}`, "SET/s"))} SET/s`
      )
      .join("; ")
  })
