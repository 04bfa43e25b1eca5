/**
 * Engine-level metrics (the `metrics: true` connection option): made once per client, shared
 * by its engines. When the option is off no object exists and every engine hook is a single
 * `undefined` check.
 *
 * What costs nothing even when on: the in-flight gauge per engine and the connection count
 * are read from the engines when the metrics are snapshotted (`Metric.registerUnsafe`), not
 * pushed per command. Pushed: one histogram update per completed request (its latency),
 * and counters on the rare paths (a caller waits for window space, a connection is lost, a
 * pooled borrow waits or times out).
 *
 * Every attribute value is bounded: the strategy, the pool name (the configured server), an
 * engine index below the engine count, and a fixed set of loss reasons.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"

/** OpenTelemetry's recommended buckets for database client durations, in seconds. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]

type Attributes = Readonly<Record<string, string>>

/**
 * Metric constructors with the attributes of one series baked in. `Metric.withAttributes`
 * adds its attributes to the context on every update (a copy of the context each time);
 * a metric made with them is keyed once. Both address the same series.
 */
const histogramOf = (name: string, description: string) => (attributes?: Attributes) =>
  Metric.histogram(name, { description, boundaries: DURATION_BUCKETS, attributes })
const counterOf = (name: string, description: string) => (attributes?: Attributes) =>
  Metric.counter(name, { description, incremental: true, attributes })
const gaugeOf = (name: string, description: string) => (attributes?: Attributes) =>
  Metric.gauge(name, { description, attributes })

const requestDurationOf = histogramOf(
  "redis.client.request.duration",
  "Time from admission to an engine (window wait included) to the reply, seconds"
)
const pendingRequestsOf = gaugeOf(
  "db.client.connection.pending_requests",
  "Requests queued or in flight on an engine (window permits in use)"
)
const connectionCountOf = gaugeOf("db.client.connection.count", "Connected sockets of a client, by state")
const windowWaitsOf = counterOf(
  "redis.client.window.waits",
  "Callers that found an engine's window full and waited for space"
)
const reconnectsOf = counterOf("redis.client.reconnects", "Connections lost and reconnected, by reason")
const connectionWaitTimeOf = histogramOf(
  "db.client.connection.wait_time",
  "Time to obtain a pooled connection, seconds"
)
const connectionTimeoutsOf = counterOf(
  "db.client.connection.timeouts",
  "Pooled borrows that timed out before a connection became free"
)

/** Time from a request's admission to an engine to its outcome, seconds. */
export const requestDuration = requestDurationOf()
/** Requests queued or in flight on one engine (its window permits in use). */
export const pendingRequests = pendingRequestsOf()
/** Connected sockets of a client, by state (`used`, `idle`: pooled connections with nothing in flight). */
export const connectionCount = connectionCountOf()
/** Callers that found the window full and waited for space. */
export const windowWaits = windowWaitsOf()
/** Connections lost and replaced, by reason. */
export const reconnects = reconnectsOf()
/** Pooled: time to borrow a connection, seconds. */
export const connectionWaitTime = connectionWaitTimeOf()
/** Pooled: borrows that timed out. */
export const connectionTimeouts = connectionTimeoutsOf()

/** Why a connection was lost (the `error.type` of `redis.client.reconnects`). */
export type LossReason =
  /** The server closed it (e.g. `CLIENT KILL`, a restart, `timeout`). */
  | "closed"
  /** A socket error (reset, unreachable). */
  | "error"
  /** A malformed or unexpected reply. */
  | "protocol"
  /** `stallTimeout`: nothing arrived while replies were owed. */
  | "stall"
  /** `deadPeerTimeout`: the reply owed next belonged to a caller who had timed out. */
  | "deadPeer"
  /** Pooled: replaced before it was lent, it still owed a timed-out caller's reply. */
  | "replaced"
  /** Sentinel: a failover or a `-READONLY` from a demoted primary. */
  | "failover"

/** What the metrics read from an engine. */
export interface Observed {
  readonly window: { readonly inUse: number }
  readonly online: boolean
}

/** A request as the metrics see it: when it was admitted. */
interface Timed {
  startedAt: number
}

/** Pool names in use, per metric registry: two live clients of one server get `target`, `target#2`. */
const liveNames = new WeakMap<object, Set<string>>()

/**
 * The metrics of one client (one strategy over one server).
 *
 * @internal
 */
export class ClientMetrics {
  readonly context: Context.Context<never>
  readonly strategy: string
  readonly poolName: string
  /** False for the view given to exclusive engines: they have no gauge of their own. */
  readonly gauges: boolean
  private readonly shared: Shared

  constructor(context: Context.Context<never>, strategy: string, poolName: string, shared?: Shared) {
    this.context = context
    this.strategy = strategy
    this.poolName = poolName
    this.gauges = shared === undefined
    this.shared = shared ?? new Shared(context, strategy, poolName)
  }

  /** The view for exclusive (per-call) engines: same series, no per-engine gauge. */
  get exclusive(): ClientMetrics {
    return new ClientMetrics(this.context, this.strategy, this.poolName, this.shared)
  }

  /** A request completed (reply, failure or timeout): its latency since admission. */
  completed(request: Timed): void {
    this.shared.duration.updateUnsafe((performance.now() - request.startedAt) / 1000, this.context)
  }

  windowWait(): void {
    this.shared.waits.updateUnsafe(1, this.context)
  }

  reconnect(reason: LossReason): void {
    let counter = this.shared.reconnects.get(reason)
    if (counter === undefined) {
      counter = reconnectsOf({ ...this.shared.attributes, "error.type": reason })
      this.shared.reconnects.set(reason, counter)
    }
    counter.updateUnsafe(1, this.context)
  }

  poolWait(millis: number): void {
    this.shared.waitTime.updateUnsafe(millis / 1000, this.context)
  }

  poolTimeout(): void {
    this.shared.timeouts.updateUnsafe(1, this.context)
  }

  /**
   * Registers an engine's in-flight gauge under the lowest free index (so indexes stay below
   * the engine count however engines come and go); the returned function removes it.
   */
  register(engine: Observed): () => void {
    if (!this.gauges) return () => {}
    return this.shared.register(engine)
  }

  /** Releases the pool name. */
  close(): void {
    this.shared.close()
  }
}

class Shared {
  readonly attributes: Readonly<Record<string, string>>
  readonly duration: Metric.Histogram<number>
  readonly waits: Metric.Counter<number>
  readonly waitTime: Metric.Histogram<number>
  readonly timeouts: Metric.Counter<number>
  readonly reconnects = new Map<LossReason, Metric.Counter<number>>()
  private readonly engines: Array<Observed | undefined> = []
  private readonly registrations: Array<Metric.Registration> = []
  private readonly context: Context.Context<never>
  private readonly poolName: string
  private readonly strategy: string

  constructor(context: Context.Context<never>, strategy: string, poolName: string) {
    this.context = context
    this.strategy = strategy
    this.poolName = poolName
    this.attributes = { "db.client.connection.pool.name": poolName, "redis.strategy": strategy }
    this.duration = requestDurationOf({ ...this.attributes, "db.system.name": "redis" })
    this.waits = windowWaitsOf(this.attributes)
    this.waitTime = connectionWaitTimeOf(this.attributes)
    this.timeouts = connectionTimeoutsOf(this.attributes)
    const count = (state: "used" | "idle") =>
      Metric.registerUnsafe(connectionCountOf({ ...this.attributes, "db.client.connection.state": state }), context, {
        get: () => ({ value: this.count(state) }),
        update: () => {},
        modify: () => {}
      })
    this.registrations.push(count("used"))
    // Shared engines are always in use; only a pool has idle connections.
    if (strategy === "pooled") this.registrations.push(count("idle"))
  }

  private count(state: "used" | "idle"): number {
    let used = 0
    let idle = 0
    for (const engine of this.engines) {
      if (engine === undefined || !engine.online) continue
      if (this.strategy !== "pooled" || engine.window.inUse > 0) used++
      else idle++
    }
    return state === "used" ? used : idle
  }

  register(engine: Observed): () => void {
    let index = this.engines.indexOf(undefined)
    if (index === -1) index = this.engines.push(undefined) - 1
    this.engines[index] = engine
    const registration = Metric.registerUnsafe(
      pendingRequestsOf({ ...this.attributes, "redis.engine": String(index) }),
      this.context,
      { get: () => ({ value: engine.window.inUse }), update: () => {}, modify: () => {} }
    )
    return () => {
      registration.remove()
      if (this.engines[index] === engine) this.engines[index] = undefined
    }
  }

  close(): void {
    for (const registration of this.registrations) registration.remove()
    this.registrations.length = 0
    liveNames.get(registryOf(this.context))?.delete(this.poolName)
  }
}

const registryOf = (context: Context.Context<never>): object => Context.get(context, Metric.MetricRegistry)

/**
 * The metrics of a new client of `target`: its pool name is the target, suffixed `#2`, `#3`
 * … while other live clients of the same target use the plain one.
 *
 * @internal
 */
export const make = (context: Context.Context<never>, strategy: string, target: string): ClientMetrics => {
  const registry = registryOf(context)
  let names = liveNames.get(registry)
  if (names === undefined) liveNames.set(registry, (names = new Set()))
  let name = target
  for (let n = 2; names.has(name); n++) name = `${target}#${n}`
  names.add(name)
  return new ClientMetrics(context, strategy, name)
}
