/**
 * The FalkorDB client service. `FalkorDB.graph(name)` returns a cheap `Graph` value;
 * every `Graph` of one name shares one schema cache.
 *
 * Layers (`layer` and `layerConfig` provide `RedisConnection` too: the same connection):
 * - `layer(options)` connects through `RedisConnection.layer` with the graph
 *   defaults — multiplexed, 8 connections, `routing: "spread"`, because the server runs one
 *   query per connection at a time, so parallel queries need several sockets; writes held
 *   while a connection owes more than two replies (`holdWritesAbove: 2`, see
 *   `connectionDefaults`).
 * - `layerConfig(config)` reads every option of `layer` from `Config`.
 * - `layerFromRedis` builds on an existing `RedisConnection` (any strategy, or a mock).
 *
 * Graph calls never use the connection's `commandTimeout`: a query waits by its own rule
 * (`clientTimeout`, else the server `timeout` + 5 s, else no limit), on every layer path.
 *
 * @since 0.1.0
 */
import type * as Config from "effect/Config"
import * as ConfigInput from "@effect-falkordb/redis/ConfigInput"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import type { RedisError } from "@effect-falkordb/redis/RedisError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type FalkorError, fromRedis } from "./FalkorError.ts"
import type * as Graph from "./Graph.ts"
import * as GraphHandle from "./internal/GraphHandle.ts"
import { malformed } from "./internal/errors.ts"
import * as GraphInfo from "./GraphInfo.ts"
import * as Measure from "./internal/Measure.ts"
import * as QueryPath from "./internal/QueryPath.ts"
import { isOk, parseConfig, parseList } from "./internal/Replies.ts"
import { SchemaCache } from "./internal/SchemaCache.ts"
import * as Udf from "./Udf.ts"

/**
 * The client.
 *
 * @since 0.1.0
 * @category services
 */
export class FalkorDB extends Context.Service<
  FalkorDB,
  {
    /** A handle on graph `name` (nothing is sent). */
    readonly graph: (name: string) => Graph.Graph
    /** `GRAPH.LIST`: the graph keys on the server. */
    readonly list: () => Effect.Effect<ReadonlyArray<string>, FalkorError>
    /**
     * `GRAPH.CONFIG GET <name>` (`"*"` for all): `[name, value]` pairs; values are integers,
     * strings (`IMPORT_FOLDER`) or, on RESP3, booleans.
     */
    readonly configGet: (
      name: string
    ) => Effect.Effect<ReadonlyArray<readonly [string, number | bigint | string | boolean]>, FalkorError>
    /** `GRAPH.CONFIG SET <name> <value>`. */
    readonly configSet: (name: string, value: string | number) => Effect.Effect<void, FalkorError>
    /** JavaScript UDF libraries (`GRAPH.UDF`): load, list, delete, flush. Server-wide. */
    readonly udf: Udf.Udf
    /** `GRAPH.INFO [section …]`, typed. */
    readonly info: (
      sections?: ReadonlyArray<GraphInfo.Section | (string & {})>
    ) => Effect.Effect<GraphInfo.Info, FalkorError>
    /** The connection underneath, for plain Redis commands. */
    readonly connection: RedisConnection.RedisConnection["Service"]
  }
>()("@effect-falkordb/graph/FalkorDB") {}

/**
 * Options of the client on top of a connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends Graph.GraphOptions {}

/**
 * Options of `layer`: the connection's options plus the client's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends RedisConnection.LayerOptions, ClientOptions {}

/**
 * Builds the client on the `RedisConnection` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function* (options: ClientOptions = {}) {
  const connection = yield* RedisConnection.RedisConnection
  // Schema refreshes fork into the client's scope: nothing outlives the layer.
  const cache = new SchemaCache(
    connection,
    yield* Effect.scope,
    options.metrics === true ? Measure.schemaRefreshed : undefined
  )
  const graphs = new Map<string, Graph.Graph>()
  /** A command of the client (not of one graph), its reply read by `parse`. */
  const command = <A>(args: ReadonlyArray<string>, readOnly: boolean, parse: (reply: Reply) => A, span: string) =>
    connection.execute(args, { readOnly, timeout: "Infinity" }).pipe(
      Effect.mapError((error) => fromRedis(error, { command: args[0] })),
      Effect.flatMap((reply) =>
        Effect.try({ try: () => parse(reply), catch: (e) => QueryPath.placed(e, undefined, args[0]!) })
      ),
      Effect.withSpan(span, { attributes: { "db.system.name": "falkordb" } })
    )
  return FalkorDB.of({
    connection,
    udf: Udf.make(connection),
    info: (sections) => GraphInfo.info(connection, sections),
    graph: (name) => {
      let graph = graphs.get(name)
      if (graph === undefined) {
        graph = GraphHandle.make(connection, cache, name, options)
        graphs.set(name, graph)
      }
      return graph
    },
    configGet: (name) => command(["GRAPH.CONFIG", "GET", name], true, parseConfig, "FalkorDB.configGet"),
    configSet: (name, value) =>
      command(
        ["GRAPH.CONFIG", "SET", name, String(value)],
        false,
        (reply) => {
          if (!isOk(reply)) throw malformed("GRAPH.CONFIG SET did not reply OK", undefined, "GRAPH.CONFIG")
        },
        "FalkorDB.configSet"
      ),
    list: () => command(["GRAPH.LIST"], true, parseList, "FalkorDB.list")
  })
})

/**
 * The client on an existing `RedisConnection`, with default client options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromRedis: Layer.Layer<FalkorDB, never, RedisConnection.RedisConnection> = Layer.effect(
  FalkorDB,
  make()
)

/**
 * The client on an existing `RedisConnection`, with options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromRedisWith = (
  options: ClientOptions
): Layer.Layer<FalkorDB, never, RedisConnection.RedisConnection> => Layer.effect(FalkorDB, make(options))

/**
 * The connection defaults of the graph client, applied where the chosen strategy has the
 * option: 8 sockets with `"spread"` routing, because the server runs one query per
 * connection at a time, so parallel queries need several sockets; and `holdWritesAbove: 2`,
 * for the same reason: a query written behind two that a connection still owes would only
 * wait in the server's queue, so it waits in the client instead and goes out with the
 * others held meanwhile, in one write (measured on a real FalkorDB from 64 callers: about
 * 10–15% less client CPU per traversal, no less throughput). (Graph queries never use the
 * connection's `commandTimeout`; see `Graph.QueryOptions`.)
 *
 * @since 0.1.0
 * @category models
 */
export const connectionDefaults: RedisConnection.LayerOptions = {
  connections: 8,
  routing: "spread",
  holdWritesAbove: 2
}

const splitOptions = (
  options: Options
): { readonly client: ClientOptions; readonly connection: RedisConnection.LayerOptions } => {
  const { schemaVersionCheck, chunkSize, retry, queryText, streamRows, ...connection } = options
  // `metrics` belongs to both: the graph metrics and the connection's engine metrics.
  return {
    client: { schemaVersionCheck, chunkSize, retry, queryText, streamRows, metrics: options.metrics },
    connection
  }
}

/** The fields that hold a value (so a spread of it does not erase another's values). */
const definedOnly = <A extends object>(options: A): A =>
  Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as A

/**
 * Connects and provides the client and its `RedisConnection` (the same connection, for plain
 * Redis commands). The strategy is `"multiplexed"` with 8 connections and `"spread"` routing
 * unless the options say otherwise (`strategy: "single" | "pooled"`, `connections`, …). The
 * connection is closed when the layer's scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<FalkorDB | RedisConnection.RedisConnection, RedisError> => {
  const { client, connection } = splitOptions(options)
  return layerFromRedisWith(client).pipe(Layer.provideMerge(RedisConnection.layer(connection, connectionDefaults)))
}

/**
 * What `layerConfig` reads: every option `layer` takes (durations as `Config.Duration`, the
 * password as `Config.Redacted`).
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigOptions = Options

/**
 * The client and its `RedisConnection` from `Config`, e.g.
 * `layerConfig({ url: Config.String("FALKORDB_URL"), password: Config.Redacted("FALKORDB_PASSWORD") })`.
 * Each field is a `Config` or a plain value (see `ConfigInput`); the configuration is read
 * once. The connection part goes to `RedisConnection.makeFromOptions` with the graph client's
 * defaults (as for `layer`); a value a `Config` took from its `Config.withDefault` counts as a
 * default too, so `connections: Config.Int("FALKORDB_CONNECTIONS").pipe(Config.withDefault(8))`
 * applies to a multiplexed client and is dropped for a single or pooled one (see
 * `RedisConnection.layerConfig`).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as Config from "effect/Config"
 *
 * const Live = FalkorDB.layerConfig({
 *   url: Config.String("FALKORDB_URL"),
 *   strategy: Config.Literals(["single", "pooled", "multiplexed"], "FALKORDB_STRATEGY").pipe(Config.withDefault("multiplexed")),
 *   connections: Config.Int("FALKORDB_CONNECTIONS").pipe(Config.withDefault(8)),
 *   schemaVersionCheck: Config.Boolean("FALKORDB_VERSION_CHECK").pipe(Config.withDefault(false)),
 *   metrics: true
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: ConfigInput.ConfigInput<ConfigOptions>
): Layer.Layer<FalkorDB | RedisConnection.RedisConnection, RedisError | Config.ConfigError> =>
  Layer.unwrap(
    Effect.map(ConfigInput.read(config), (read) => {
      const set = splitOptions(read.options)
      const defaulted = splitOptions(read.defaults)
      return layerFromRedisWith({ ...definedOnly(defaulted.client), ...definedOnly(set.client) }).pipe(
        Layer.provideMerge(RedisConnection.layer(set.connection, { ...connectionDefaults, ...defaulted.connection }))
      )
    })
  )
