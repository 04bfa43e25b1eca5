/**
 * Records the `GraphMetrics` of one call (`metrics: true`): duration, count, failures by
 * reason, rows. Series are made once per bounded attribute combination.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import { isFalkorError } from "../FalkorError.ts"
import * as GraphMetrics from "../GraphMetrics.ts"
import type { SchemaKind } from "./CompactReply.ts"

interface Series {
  readonly duration: Metric.Metric<number, unknown>
  readonly count: Metric.Metric<number, unknown>
  readonly rows: Metric.Metric<number, unknown>
}

const series = new Map<string, Series>()
const errorSeries = new Map<string, Metric.Metric<number, unknown>>()

const seriesOf = (command: string, operation: string): Series => {
  const key = `${command}\u0000${operation}`
  let found = series.get(key)
  if (found === undefined) {
    const attributes = { "db.operation.name": command, "falkordb.operation": operation }
    const withSystem = { "db.system.name": "falkordb", ...attributes }
    found = {
      duration: Metric.withAttributes(GraphMetrics.operationDuration, withSystem),
      count: Metric.withAttributes(GraphMetrics.operations, attributes),
      rows: Metric.withAttributes(GraphMetrics.returnedRows, withSystem)
    }
    series.set(key, found)
  }
  return found
}

const errorOf = (command: string, operation: string, reason: string) => {
  const key = `${command}\u0000${operation}\u0000${reason}`
  let found = errorSeries.get(key)
  if (found === undefined) {
    found = Metric.withAttributes(GraphMetrics.errors, {
      "db.operation.name": command,
      "falkordb.operation": operation,
      "error.type": reason
    })
    errorSeries.set(key, found)
  }
  return found
}

/** The reason of a failed call: the `FalkorError` reason tag, `interrupted`, or `other`. */
const reasonOf = <A, E>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "none"
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (failure?._tag === "Fail") return isFalkorError(failure.error) ? failure.error.reason._tag : "other"
  return exit.cause.reasons.some((reason) => reason._tag === "Interrupt") ? "interrupted" : "other"
}

/**
 * Measures `effect` as one `operation` (the method) of `command`; `rows` reads the row count
 * of a success.
 *
 * @internal
 */
export const measured = <A, E, R>(
  command: string,
  operation: string,
  effect: Effect.Effect<A, E, R>,
  rows?: (value: A) => number
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.onExit(effect, (exit) => {
      const { duration, count, rows: rowSeries } = seriesOf(command, operation)
      const seconds = (performance.now() - started) / 1000
      const recorded = Effect.andThen(Metric.update(duration, seconds), Metric.update(count, 1))
      if (Exit.isSuccess(exit)) {
        return rows === undefined ? recorded : Effect.andThen(recorded, Metric.update(rowSeries, rows(exit.value)))
      }
      return Effect.andThen(recorded, Metric.update(errorOf(command, operation, reasonOf(exit)), 1))
    })
  })

/**
 * Measures a row stream as one `operation` of `command`: its duration until it ends (or
 * fails, or is stopped) and the rows it handed out.
 *
 * @internal
 */
export const measuredStream = <A, E, R>(
  command: string,
  operation: string,
  stream: Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  Stream.suspend(() => {
    const started = performance.now()
    let rows = 0
    return stream.pipe(
      Stream.mapArray((chunk) => {
        rows += chunk.length
        return chunk
      }),
      Stream.onExit((exit) => {
        const { duration, count, rows: rowSeries } = seriesOf(command, operation)
        const seconds = (performance.now() - started) / 1000
        const recorded = Effect.andThen(Metric.update(duration, seconds), Metric.update(count, 1))
        if (Exit.isSuccess(exit)) return Effect.andThen(recorded, Metric.update(rowSeries, rows))
        return Effect.andThen(recorded, Metric.update(errorOf(command, operation, reasonOf(exit)), 1))
      })
    )
  })

/**
 * Counts a schema refresh of `kind`.
 *
 * @internal
 */
export const schemaRefreshed = (kind: SchemaKind): Effect.Effect<void> =>
  Metric.update(Metric.withAttributes(GraphMetrics.schemaRefreshes, { "falkordb.schema.kind": kind }), 1)
