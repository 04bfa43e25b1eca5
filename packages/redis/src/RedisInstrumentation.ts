/**
 * Metrics and spans for a `RedisConnection`, as a decorator layer: the engine's hot path is
 * untouched unless this layer is added, and each part is opt-in.
 *
 * Metrics (Effect `Metric`, OpenTelemetry database names where they exist; every attribute
 * value comes from a bounded set — never a key, an argument or a value):
 *
 * | metric | kind | attributes |
 * |---|---|---|
 * | `db.client.operation.duration` | histogram, seconds | `db.system.name`, `db.operation.name`, `redis.strategy` |
 * | `redis.client.commands` | counter | `db.operation.name`, `redis.strategy` |
 * | `redis.client.errors` | counter | `db.operation.name`, `error.type` (the reason tag), `redis.strategy` |
 * | `redis.client.inflight` | gauge | `redis.strategy` (calls in flight through this client) |
 *
 * `execute`, `pipeline` and the calls of `withExclusive` are measured; `submit` is not (its
 * reply is awaited later through its `Future`).
 *
 * `db.operation.name` is the command name for the commands this package knows (the
 * `CommandKeys` table) and `OTHER` for the rest, and `PIPELINE` for a batch.
 *
 * Spans (opt-in, `spans: true`): one client span per command named after it (`GET`), and one
 * per pipeline (`PIPELINE`) with `db.operation.batch.size`; attributes `db.system.name`,
 * `db.operation.name`, `db.query.summary`, `db.namespace` (the database index),
 * `server.address`, `server.port`. `queryText: true` adds `db.query.text` with every argument
 * replaced by `?` (`SET ? ?`): argument values never reach a span.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as RedisInstrumentation from "@effect-falkordb/redis/RedisInstrumentation"
 * import { Layer } from "effect"
 *
 * const Live = RedisInstrumentation.layer({ metrics: true, spans: true }).pipe(
 *   Layer.provide(RedisConnection.layerSingle({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as CommandKeys from "./CommandKeys.ts"
import { commandName } from "./internal/CommandValidation.ts"
import * as EngineMetrics from "./internal/EngineMetrics.ts"
import { makeService } from "./internal/MakeService.ts"
import {
  type CommandOptions,
  type ConnectionInfo,
  type ExecuteAll,
  type ExecuteAllOptions,
  RedisConnection,
  type ReplyFold
} from "./RedisConnection.ts"
import { isRedisError } from "./RedisError.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface InstrumentationOptions {
  /** Record the metrics. Default true. */
  readonly metrics?: boolean | undefined
  /** A span per command and per pipeline. Default false. */
  readonly spans?: boolean | undefined
  /** With spans: `db.query.text` as the command name and one `?` per argument. Default false. */
  readonly queryText?: boolean | undefined
}

/**
 * `db.client.operation.duration` without attributes: the graph client records into the same
 * metric with `db.system.name: "falkordb"`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const databaseOperationDuration = Metric.histogram("db.client.operation.duration", {
  description: "Duration of database client operations, seconds",
  boundaries: EngineMetrics.DURATION_BUCKETS
})

/**
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration = Metric.withAttributes(databaseOperationDuration, { "db.system.name": "redis" })

/**
 * Engine metrics (the `metrics: true` connection option), with attributes
 * `db.client.connection.pool.name` (the server, `host:port/db`; `#2`, `#3` … for further live
 * clients of the same server) and `redis.strategy`:
 *
 * - `requestDuration` — `redis.client.request.duration`, histogram, seconds: from admission to
 *   an engine (window wait included) to the outcome; also `db.system.name`.
 * - `pendingRequests` — `db.client.connection.pending_requests`, gauge per engine
 *   (`redis.engine`: its index, below the engine count): window permits in use. Read when
 *   the metrics are snapshotted, never updated per command.
 * - `connectionCount` — `db.client.connection.count`, gauge by `db.client.connection.state`
 *   (`used`; pooled also `idle`: connected with nothing in flight).
 * - `windowWaits` — `redis.client.window.waits`, counter: callers that found the window full.
 * - `reconnects` — `redis.client.reconnects`, counter by `error.type`: `closed`, `error`,
 *   `protocol`, `stall`, `deadPeer`, `replaced`, `failover`.
 * - `connectionWaitTime` — `db.client.connection.wait_time`, histogram, seconds (pooled borrows).
 * - `connectionTimeouts` — `db.client.connection.timeouts`, counter (pooled borrows that timed out).
 *
 * @since 0.1.0
 * @category metrics
 */
export const engine = {
  requestDuration: EngineMetrics.requestDuration,
  pendingRequests: EngineMetrics.pendingRequests,
  connectionCount: EngineMetrics.connectionCount,
  windowWaits: EngineMetrics.windowWaits,
  reconnects: EngineMetrics.reconnects,
  connectionWaitTime: EngineMetrics.connectionWaitTime,
  connectionTimeouts: EngineMetrics.connectionTimeouts
} as const

/**
 * @since 0.1.0
 * @category metrics
 */
export const commands = Metric.counter("redis.client.commands", {
  description: "Redis commands and pipelines sent",
  incremental: true
})

/**
 * @since 0.1.0
 * @category metrics
 */
export const errors = Metric.counter("redis.client.errors", {
  description: "Redis commands and pipelines that failed, by reason",
  incremental: true
})

/**
 * @since 0.1.0
 * @category metrics
 */
export const inflight = Metric.gauge("redis.client.inflight", {
  description: "Calls in flight through an instrumented client"
})

/** The bounded operation name of a command. */
const operationOf = (command: Command): string => (CommandKeys.isKnown(command) ? commandName(command) : "OTHER")

/**
 * The server of a connection as OpenTelemetry attributes: `server.address`, and
 * `server.port` for TCP (from `info.target`, e.g. `127.0.0.1:6379/0`). Other packages' spans
 * (the graph client's) use it too.
 *
 * @since 0.1.0
 * @category tracing
 */
export const serverAttributes = (info: ConnectionInfo): Record<string, string | number> => {
  const server = parseTarget(info.target)
  return server.port === undefined
    ? { "server.address": server.address }
    : { "server.address": server.address, "server.port": server.port }
}

function parseTarget(target: string): { address: string; port: number | undefined; namespace: string } {
  const slash = target.lastIndexOf("/")
  const host = slash === -1 ? target : target.slice(0, slash)
  const namespace = slash === -1 ? "0" : target.slice(slash + 1)
  if (host.startsWith("unix:")) return { address: host.slice(5), port: undefined, namespace }
  const colon = host.lastIndexOf(":")
  return colon === -1
    ? { address: host, port: undefined, namespace }
    : { address: host.slice(0, colon), port: Number(host.slice(colon + 1)), namespace }
}

/**
 * Wraps a service. `context` holds the metric registry (the one in effect when the layer was
 * built).
 *
 * @since 0.1.0
 * @category constructors
 */
export const instrument = (
  service: RedisConnection["Service"],
  options: InstrumentationOptions,
  context: Context.Context<never>
): RedisConnection["Service"] => {
  const strategy = service.info.strategy
  const withMetrics = options.metrics !== false
  const withSpans = options.spans === true
  const server = parseTarget(service.info.target)
  const gauge = Metric.gauge(inflight.id, {
    description: inflight.description,
    attributes: { "redis.strategy": strategy }
  })
  // One metric series per (operation, reason): both sets are bounded, so caching is safe.
  const series = new Map<string, { duration: Metric.Histogram<number>; count: Metric.Counter<number> }>()
  const errorSeries = new Map<string, Metric.Counter<number>>()
  const seriesOf = (operation: string) => {
    let found = series.get(operation)
    if (found === undefined) {
      const attributes = { "db.operation.name": operation, "redis.strategy": strategy }
      // Attributes baked into the series' own metric objects: keyed once, not per update.
      found = {
        duration: Metric.histogram(databaseOperationDuration.id, {
          description: databaseOperationDuration.description,
          boundaries: EngineMetrics.DURATION_BUCKETS,
          attributes: { "db.system.name": "redis", ...attributes }
        }),
        count: Metric.counter(commands.id, { description: commands.description, incremental: true, attributes })
      }
      series.set(operation, found)
    }
    return found
  }
  const errorOf = (operation: string, reason: string) => {
    const key = `${operation}\u0000${reason}`
    let found = errorSeries.get(key)
    if (found === undefined) {
      found = Metric.counter(errors.id, {
        description: errors.description,
        incremental: true,
        attributes: { "db.operation.name": operation, "error.type": reason, "redis.strategy": strategy }
      })
      errorSeries.set(key, found)
    }
    return found
  }
  let calls = 0
  const measured = <A, E>(operation: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
    if (!withMetrics) return effect
    return Effect.suspend(() => {
      const started = performance.now()
      gauge.updateUnsafe(++calls, context)
      return Effect.onExit(effect, (exit) => {
        gauge.updateUnsafe(--calls, context)
        const { duration, count } = seriesOf(operation)
        duration.updateUnsafe((performance.now() - started) / 1000, context)
        count.updateUnsafe(1, context)
        if (Exit.isFailure(exit)) {
          const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
          const error = failure?._tag === "Fail" ? failure.error : undefined
          const reason = isRedisError(error) ? error.reason._tag : failure === undefined ? "interrupted" : "other"
          errorOf(operation, reason).updateUnsafe(1, context)
        }
        return Effect.void
      })
    })
  }
  const spanned = <A, E>(
    operation: string,
    text: () => string,
    batchSize: number | undefined,
    effect: Effect.Effect<A, E>
  ): Effect.Effect<A, E> => {
    if (!withSpans) return effect
    const attributes: Record<string, unknown> = {
      "db.system.name": "redis",
      "db.operation.name": operation,
      "db.query.summary": operation,
      "db.namespace": server.namespace,
      "server.address": server.address
    }
    if (server.port !== undefined) attributes["server.port"] = server.port
    if (batchSize !== undefined) attributes["db.operation.batch.size"] = batchSize
    if (options.queryText === true) attributes["db.query.text"] = text()
    return Effect.withSpan(effect, operation, { kind: "client", attributes })
  }
  const fingerprint = (command: Command): string =>
    command.length <= 1
      ? commandName(command)
      : `${commandName(command)} ${Array(command.length - 1)
          .fill("?")
          .join(" ")}`
  const call = <A, E>(command: Command, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
    const operation = operationOf(command)
    return spanned(operation, () => fingerprint(command), undefined, measured(operation, effect))
  }
  const batch = <A, E>(
    commands: ReadonlyArray<Command>,
    effect: Effect.Effect<A, E>,
    operation: "PIPELINE" | "EXECUTE_ALL" = "PIPELINE"
  ): Effect.Effect<A, E> =>
    spanned(operation, () => commands.map(fingerprint).join("; "), commands.length, measured(operation, effect))
  return makeService({
    info: service.info,
    execute: (command, callOptions) => call(command, service.execute(command, callOptions)),
    // A submitted command's reply is awaited later, through its Future: not measured here.
    submit: service.submit,
    // A streamed reply is consumed at the caller's pace: passed through, not measured here.
    ...(service.executeStreamed === undefined ? {} : { executeStreamed: service.executeStreamed }),
    // A folded reply is one command whose caller waits for all of it: measured like execute.
    ...(service.executeFolded === undefined
      ? {}
      : {
          executeFolded: <A>(command: Command, fold: () => ReplyFold<A>, callOptions?: CommandOptions) =>
            call(command, service.executeFolded!(command, fold, callOptions))
        }),
    pipeline: (commands, callOptions) => batch(commands, service.pipeline(commands, callOptions)),
    // One span and one measurement for the batch, like a pipeline.
    executeAll: ((commands: ReadonlyArray<Command>, callOptions?: ExecuteAllOptions) =>
      batch(commands, service.executeAll(commands, callOptions), "EXECUTE_ALL")) as ExecuteAll,
    withExclusive: (use) =>
      service.withExclusive((connection) =>
        use({
          execute: (command, callOptions) => call(command, connection.execute(command, callOptions)),
          pipeline: (commands, callOptions) => batch(commands, connection.pipeline(commands, callOptions)),
          executeAll: ((commands: ReadonlyArray<Command>, callOptions?: ExecuteAllOptions) =>
            batch(commands, connection.executeAll(commands, callOptions), "EXECUTE_ALL")) as ExecuteAll
        })
      )
  })
}

/**
 * Replaces the `RedisConnection` in context by an instrumented one.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: InstrumentationOptions = {}): Layer.Layer<RedisConnection, never, RedisConnection> =>
  Layer.effect(
    RedisConnection,
    Effect.gen(function* () {
      const service = yield* RedisConnection
      const context = yield* Effect.context<never>()
      return instrument(service, options, context)
    })
  )
