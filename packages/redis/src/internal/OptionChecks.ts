/**
 * The checks of the options a `RedisConnection` layer takes on top of `RedisOptions` (the
 * strategy, its counts and sizing, the options that belong to another strategy, the read
 * preference, `host:port` addresses), each failing with reason `Config` that names the field.
 * `RedisOptions.resolve` checks the options of one connection; these check the client's shape.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type {
  ClusterConfig,
  LayerOptions,
  MultiplexedOptions,
  PooledOptions,
  ReadPreference,
  Sizing,
  Strategy
} from "../RedisConnection.ts"
import { Config as ConfigReason, RedisError } from "../RedisError.ts"
import * as RedisOptions from "../RedisOptions.ts"
import type { HostPort } from "./Sentinel.ts"
import { expected } from "./ValueText.ts"

const MAX_CONNECTIONS = 1024

export const configError = (field: string, message: string): RedisError =>
  new RedisError({ reason: new ConfigReason({ field, message }) })

export const checkCount = (field: string, value: number | undefined, fallback: number) => {
  if (value === undefined) return Effect.succeed(fallback)
  if (typeof value !== "number") return Effect.fail(configError(field, expected(field, "an integer >= 1", value)))
  if (!Number.isSafeInteger(value) || value < 1) {
    return Effect.fail(configError(field, `${field} must be an integer >= 1 (got ${value})`))
  }
  if (value > MAX_CONNECTIONS) {
    return Effect.fail(
      configError(
        field,
        `${field} of ${value} is more than ${MAX_CONNECTIONS} sockets; lower it (a few sockets carry a lot when multiplexed)`
      )
    )
  }
  return Effect.succeed(value)
}

const checkSizing = Effect.fnUntraced(function* (sizing: Sizing) {
  if (sizing.max === undefined) {
    return yield* configError("connections.max", "connections: { min, max } needs max, the most engines to open")
  }
  const max = yield* checkCount("connections.max", sizing.max, 1)
  const min = yield* checkCount("connections.min", sizing.min, 1)
  if (min > max) {
    return yield* configError("connections", `connections.min (${min}) is more than connections.max (${max})`)
  }
  return { min, max }
})

/**
 * The engines of a multiplexed client (a count, or `{ min, max }` for a self-sizing one) and
 * its routing, which must be stated when there may be more than one engine.
 */
export const checkMultiplexed = Effect.fnUntraced(function* (options: MultiplexedOptions) {
  const routing = options.routing
  if (routing !== undefined && routing !== "spread" && routing !== "key") {
    return yield* configError("routing", expected("routing", '"spread" or "key"', routing))
  }
  if (typeof options.connections === "object" && options.connections !== null) {
    const sizing = yield* checkSizing(options.connections)
    if (sizing.max > 1 && routing === undefined) {
      return yield* configError(
        "routing",
        `connections: { max: ${sizing.max} } needs a routing: "key" keeps each key's commands in submit order, "spread" balances load with no order across engines; say which`
      )
    }
    const connections: number | { readonly min: number; readonly max: number } = sizing
    return { connections, routing }
  }
  const connections = yield* checkCount("connections", options.connections, 1)
  if (connections > 1 && routing === undefined) {
    return yield* configError(
      "routing",
      `connections: ${connections} needs a routing: "key" keeps each key's commands in submit order, "spread" balances load with no order across engines; say which`
    )
  }
  return { connections, routing }
})

/** The size of a pooled client; `window` does not apply to it. */
export const checkPooled = Effect.fnUntraced(function* (options: PooledOptions) {
  const size = yield* checkCount("size", options.size, 8)
  if (options.window !== undefined) {
    return yield* configError(
      "window",
      "window does not apply to a pooled client (each call holds a connection for itself); drop it"
    )
  }
  return size
})

/** Options that belong to some strategies only. */
const foreignFields: Record<Strategy, ReadonlyArray<"size" | "connections" | "routing" | "window">> = {
  single: ["size", "connections", "routing"],
  pooled: ["connections", "routing", "window"],
  multiplexed: ["size"]
}

/** `defaults` under `options`: an `undefined` field of `options` does not erase a default. */
const overlay = (defaults: LayerOptions, options: LayerOptions, strategy: Strategy): LayerOptions => {
  const merged: Record<string, unknown> = {}
  const foreign: ReadonlyArray<string> = foreignFields[strategy]
  for (const [key, value] of Object.entries(defaults)) {
    if (value !== undefined && !foreign.includes(key)) merged[key] = value
  }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) merged[key] = value
  }
  return merged as LayerOptions
}

/**
 * The strategy (default `"multiplexed"`) and `options` over `defaults`, checked: no option of
 * another strategy set by the caller (the defaults' are dropped), a known read preference.
 */
export const checkLayerOptions = Effect.fnUntraced(function* (options: LayerOptions, defaults: LayerOptions) {
  const strategy = options.strategy ?? defaults.strategy ?? "multiplexed"
  if (strategy !== "single" && strategy !== "pooled" && strategy !== "multiplexed") {
    return yield* configError("strategy", expected("strategy", '"single", "pooled" or "multiplexed"', strategy))
  }
  for (const field of foreignFields[strategy]) {
    if (options[field] !== undefined) {
      return yield* configError(
        field,
        `${field} does not apply to a ${strategy} client; drop it or change the strategy`
      )
    }
  }
  const merged = overlay(defaults, options, strategy)
  const preference = merged.readPreference
  if (
    preference !== undefined &&
    preference !== "primary" &&
    preference !== "replica" &&
    preference !== "preferReplica"
  ) {
    return yield* configError(
      "readPreference",
      expected("readPreference", '"primary", "replica" or "preferReplica"', preference)
    )
  }
  return { strategy, merged, preference: preference as ReadPreference | undefined }
})

/**
 * The seed nodes of a cluster (a `url`'s host and port first, then `cluster.nodes`) and
 * whether its nodes are reached over TLS (`tls`, else a `rediss://` URL); a cluster names its
 * own replicas, so no sentinel nor replicas.
 */
export const checkCluster = Effect.fnUntraced(function* (options: LayerOptions, cluster: ClusterConfig) {
  if (options.sentinel !== undefined || options.replicas !== undefined) {
    return yield* configError(
      "cluster",
      "a cluster names its own replicas (CLUSTER SHARDS); drop sentinel and replicas"
    )
  }
  const fromUrl = options.url === undefined ? undefined : yield* RedisOptions.parseUrl(options.url)
  if (fromUrl?.path !== undefined) {
    return yield* configError(
      "url",
      "a cluster is reached over TCP: give a redis:// or rediss:// URL, not a socket path"
    )
  }
  if (!Array.isArray(cluster.nodes) || (cluster.nodes.length === 0 && fromUrl === undefined)) {
    return yield* configError("cluster.nodes", "list at least one cluster node (host:port), or give url")
  }
  const seeds: Array<HostPort> = []
  if (fromUrl?.host !== undefined) seeds.push({ host: fromUrl.host, port: fromUrl.port ?? 6379 })
  for (const entry of cluster.nodes) seeds.push(yield* parseAddress("cluster.nodes", entry, 6379))
  const tls = options.tls !== undefined ? options.tls !== false : fromUrl?.tls === true
  return { seeds, tls }
})

/** A read preference other than `"primary"` on a client that has no replica to read from. */
export const noReplicas = (preference: ReadPreference): Effect.Effect<never, RedisError> =>
  Effect.fail(
    configError(
      "readPreference",
      `readPreference "${preference}" needs replicas: configure a sentinel or list replicas`
    )
  )

/** A `"host:port"` (or `{ host, port }`) entry of `field`, `defaultPort` when it names none. */
export const parseAddress = (
  field: string,
  entry: string | { readonly host: string; readonly port?: number | undefined },
  defaultPort: number
): Effect.Effect<HostPort, RedisError> => {
  if (typeof entry === "object" && entry !== null) {
    const port = entry.port ?? defaultPort
    if (typeof port !== "number") {
      return Effect.fail(configError(field, expected(`port of ${entry.host}`, "a number in 1..65535", port)))
    }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return Effect.fail(configError(field, `port of ${entry.host} must be an integer in 1..65535 (got ${port})`))
    }
    return Effect.succeed({ host: entry.host, port })
  }
  if (typeof entry !== "string") {
    return Effect.fail(configError(field, expected(field, '"host:port" or { host, port }', entry)))
  }
  const match = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(entry.trim())
  const host = match?.[1]
  const port = match?.[2] === undefined ? defaultPort : Number(match[2])
  if (host === undefined || host === "") return Effect.fail(configError(field, `"${entry}" is not host:port`))
  if (port < 1 || port > 65535) {
    return Effect.fail(configError(field, `port ${port} in "${entry}" is out of range 1..65535`))
  }
  return Effect.succeed({ host, port })
}
