/**
 * Client-side caching: replies of the read commands you name are kept in this process and
 * served without a round trip until the server says the keys they read changed
 * (`CLIENT TRACKING`, RESP3 invalidation pushes).
 *
 * - Opt-in per command: only the commands in `commands` (e.g. `["GET", "HGETALL"]`) are cached,
 *   keyed by command and arguments. Everything else passes through untouched.
 * - Tracking is switched on in the handshake of every data connection, on every (re)connect:
 *   `CLIENT TRACKING ON` (the server remembers the keys each connection read), or
 *   `CLIENT TRACKING ON BCAST PREFIX …` with `mode: "broadcast"` (the server announces every
 *   change under the prefixes; only commands whose keys all lie under them are cached).
 * - Invalidations arrive as RESP3 pushes on the same connection as the replies, so an
 *   invalidation can never overtake the reply it concerns, and the stream of invalidations is
 *   lost exactly when that connection is: the whole cache is then flushed (and again when it
 *   reconnects). A server flush (`FLUSHALL`, `FLUSHDB`) empties it too.
 * - Never a value older than a write of this client that was acknowledged: a write through this
 *   layer's `RedisConnection` drops the keys it names locally, before it is sent and again when
 *   it is acknowledged; a read whose reply was on the wire while one of its keys was
 *   invalidated (by the server or locally) is not stored.
 * - Bounded: at most `maxEntries` entries (the least recently used go first), each served for
 *   at most `ttl`.
 *
 * @example
 * ```ts
 * import * as RedisClientCache from "@effect-falkordb/redis/RedisClientCache"
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const redis = yield* RedisConnection.RedisConnection
 *   yield* redis.execute(["GET", "config:flags"]) // from the server, then cached
 *   yield* redis.execute(["GET", "config:flags"]) // from the cache
 *   const cache = yield* RedisClientCache.RedisClientCache
 *   return yield* cache.stats // { hits: 1, misses: 1, … }
 * })
 *
 * const Live = RedisClientCache.layer({
 *   url: "redis://127.0.0.1:6379",
 *   protocol: 3,
 *   clientCache: { commands: ["GET", "HGETALL"], maxEntries: 10_000, ttl: "1 minute" }
 * })
 * program.pipe(Effect.provide(Live))
 * ```
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { type PushReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as CommandKeys from "./CommandKeys.ts"
import { CacheStore, entryId, keyText } from "./internal/CacheStore.ts"
import { argumentText } from "./internal/Text.ts"
import {
  type CommandOptions,
  type ExclusiveConnection,
  type ExecuteAll,
  type ExecuteAllOptions,
  type Future,
  type LayerOptions,
  makeFromOptions,
  RedisConnection
} from "./RedisConnection.ts"
import { makeService } from "./internal/MakeService.ts"
import { Config as ConfigReason, RedisError } from "./RedisError.ts"
import type * as RedisOptions from "./RedisOptions.ts"

/**
 * Read commands that may be cached: each reads only the keys it names, and its reply changes
 * only when one of them is written (no clocks, no randomness, no cursors).
 *
 * @since 0.1.0
 * @category constants
 */
export const cacheableCommands: ReadonlySet<string> = new Set(
  `GET GETRANGE SUBSTR STRLEN MGET EXISTS GETBIT BITCOUNT BITPOS BITFIELD_RO LCS
   HGET HGETALL HMGET HEXISTS HLEN HKEYS HVALS HSTRLEN
   LRANGE LINDEX LLEN LPOS
   SMEMBERS SISMEMBER SMISMEMBER SCARD SINTER SUNION SDIFF SINTERCARD
   ZRANGE ZRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZREVRANGEBYSCORE ZREVRANGEBYLEX ZSCORE ZMSCORE ZCARD
   ZCOUNT ZLEXCOUNT ZRANK ZREVRANK ZINTER ZUNION ZDIFF ZINTERCARD
   TYPE XLEN XRANGE XREVRANGE GEOPOS GEODIST GEOHASH GEOSEARCH`
    .split(/\s+/)
    .filter((name) => name !== "")
)

/**
 * What to cache and how much.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientCacheOptions {
  /** The read commands to cache, e.g. `["GET", "HGETALL"]`; each must be in `cacheableCommands`. */
  readonly commands: ReadonlyArray<string>
  /** Most entries kept; past it the least recently used entry goes. Default 10 000. */
  readonly maxEntries?: number | undefined
  /** Longest an entry is served after it was read. Default 1 minute; `"Infinity"` for no limit. */
  readonly ttl?: Duration.Input | undefined
  /**
   * `"default"`: the server remembers the keys each connection read and announces their
   * changes (memory on the server per key read). `"broadcast"`: the server announces every
   * change of a key under `prefixes` (all keys when none), read or not; only commands whose
   * keys all lie under the prefixes are cached. Default `"default"`.
   */
  readonly mode?: "default" | "broadcast" | undefined
  /** Key prefixes of `mode: "broadcast"`, e.g. `["user:", "config:"]`. They must not overlap. */
  readonly prefixes?: ReadonlyArray<string> | undefined
}

/**
 * The options of `make` and `layer`: a `RedisConnection` (see `RedisConnection.LayerOptions`;
 * `protocol: 3` is required) plus the cache.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends LayerOptions {
  readonly clientCache: ClientCacheOptions
}

/**
 * Counters since the cache was built.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheStats {
  /** Cached commands answered from the cache. */
  readonly hits: number
  /** Cached commands sent to the server (absent, expired, or not cacheable now). */
  readonly misses: number
  /** Entries now. */
  readonly entries: number
  readonly maxEntries: number
  /** Entries dropped to keep within `maxEntries`. */
  readonly evictions: number
  /** Entries dropped because their `ttl` ran out. */
  readonly expirations: number
  /** Entries dropped because a key they read changed (a server invalidation or a write of this client). */
  readonly invalidations: number
  /** Times the whole cache was emptied (a lost or re-established connection, a server flush, `flush`). */
  readonly flushes: number
}

/**
 * The cache service. `execute` is the cached face (the same as this layer's
 * `RedisConnection.execute`); `connection` is that `RedisConnection`, whose writes keep the cache
 * consistent; `flush` empties it.
 *
 * @since 0.1.0
 * @category services
 */
export class RedisClientCache extends Context.Service<
  RedisClientCache,
  {
    readonly execute: (command: Command, options?: CommandOptions) => Effect.Effect<Reply, RedisError>
    readonly connection: RedisConnection["Service"]
    readonly stats: Effect.Effect<CacheStats>
    readonly flush: Effect.Effect<void>
    /** The mode, prefixes and bounds in force. */
    readonly config: {
      readonly commands: ReadonlyArray<string>
      readonly mode: "default" | "broadcast"
      readonly prefixes: ReadonlyArray<string>
      readonly maxEntries: number
      /** Milliseconds; `Infinity` for no limit. */
      readonly ttl: number
    }
  }
>()("@effect-falkordb/redis/RedisClientCache") {}

const configError = (field: string, message: string): RedisError =>
  new RedisError({ reason: new ConfigReason({ field, message }) })

/** Keyless commands that change data anywhere: they empty the cache. */
const FLUSHING: ReadonlySet<string> = new Set(["FLUSHALL", "FLUSHDB", "SWAPDB", "DEBUG"])

/** What a command may have changed: some keys, everything (`"all"`), or nothing. */
type Written = ReadonlyArray<string> | "all" | undefined

const upperName = (command: Command): string => argumentText(command[0]).toUpperCase()

/**
 * The keys a command may write. Read-only commands write none; a known command writes the
 * keys it names; an unknown one (a module's) and the flushing ones may have written anything.
 */
const writtenBy = (command: Command): Written => {
  // WATCH, MULTI and the like change the connection, not the data (EXEC: see `Transactions`).
  if (CommandKeys.isReadOnly(command) || CommandKeys.isConnectionState(command)) return undefined
  const keys = CommandKeys.keys(command)
  if (keys.length > 0) return keys.map(keyText)
  if (!CommandKeys.isKnown(command)) return "all"
  return FLUSHING.has(upperName(command)) ? "all" : undefined
}

const merge = (scopes: ReadonlyArray<Written>): Written => {
  const keys: Array<string> = []
  for (const scope of scopes) {
    if (scope === "all") return "all"
    if (scope !== undefined) for (const key of scope) keys.push(key)
  }
  return keys.length === 0 ? undefined : keys
}

/**
 * Follows MULTI … EXEC on one connection: the commands of a transaction run at EXEC, so
 * their keys are dropped again when EXEC is acknowledged.
 */
class Transactions {
  private queued: Array<Written> | undefined = undefined
  /** What to drop before `command` is sent and when it is acknowledged. */
  note(command: Command): Written {
    const name = upperName(command)
    if (name === "MULTI") {
      this.queued = []
      return undefined
    }
    if (name === "EXEC" || name === "DISCARD") {
      const queued = this.queued ?? []
      this.queued = undefined
      return merge(queued)
    }
    const written = writtenBy(command)
    if (this.queued !== undefined && written !== undefined) this.queued.push(written)
    return written
  }
}

const validate = Effect.fnUntraced(function* (options: Options, defaults: LayerOptions) {
  const cache = options.clientCache
  if (cache === undefined || cache === null || typeof cache !== "object") {
    return yield* configError("clientCache", "clientCache is missing: name the commands to cache")
  }
  const merged = { ...defaults, ...options }
  if ((merged.protocol ?? 2) !== 3) {
    return yield* configError(
      "protocol",
      "client-side caching reads the server's invalidations as RESP3 pushes on its data connections: set protocol: 3 (replies then come in RESP3 shapes, e.g. HGETALL as a MapReply)"
    )
  }
  if (
    merged.cluster !== undefined ||
    merged.sentinel !== undefined ||
    merged.replicas !== undefined ||
    (merged.url !== undefined && /^rediss?\+sentinel:/i.test(merged.url))
  ) {
    return yield* configError(
      "clientCache",
      "client-side caching is not supported yet with cluster, sentinel or replicas; use a single server (any strategy)"
    )
  }
  if ((merged.readPreference ?? "primary") !== "primary") {
    return yield* configError("readPreference", "client-side caching reads from the primary only; drop readPreference")
  }
  if (!Array.isArray(cache.commands) || cache.commands.length === 0) {
    return yield* configError(
      "clientCache.commands",
      `name the read commands to cache, e.g. ["GET", "HGETALL"] (cacheable: ${[...cacheableCommands].join(" ")})`
    )
  }
  const commands: Array<string> = []
  for (const command of cache.commands) {
    const name = typeof command === "string" ? command.toUpperCase() : String(command)
    if (!cacheableCommands.has(name)) {
      return yield* configError(
        "clientCache.commands",
        `${name} cannot be cached: only read commands whose reply depends on nothing but the keys they name can be (cacheable: ${[...cacheableCommands].join(" ")})`
      )
    }
    if (!commands.includes(name)) commands.push(name)
  }
  const maxEntries = cache.maxEntries ?? 10_000
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    return yield* configError("clientCache.maxEntries", `maxEntries must be an integer >= 1 (got ${maxEntries})`)
  }
  let ttl = 60_000
  if (cache.ttl !== undefined) {
    const decoded = Duration.fromInput(cache.ttl)
    const millis = decoded._tag === "None" ? Number.NaN : Duration.toMillis(decoded.value)
    if (!(millis > 0)) {
      return yield* configError(
        "clientCache.ttl",
        `ttl must be a positive duration or "Infinity" (got ${String(cache.ttl)})`
      )
    }
    ttl = millis
  }
  const mode = cache.mode ?? "default"
  if (mode !== "default" && mode !== "broadcast") {
    return yield* configError("clientCache.mode", `mode must be "default" or "broadcast" (got "${String(mode)}")`)
  }
  const prefixes = cache.prefixes ?? []
  if (prefixes.length > 0 && mode !== "broadcast") {
    return yield* configError(
      "clientCache.prefixes",
      'prefixes apply to mode: "broadcast" only; set the mode or drop the prefixes'
    )
  }
  for (const prefix of prefixes) {
    if (typeof prefix !== "string" || prefix === "") {
      return yield* configError("clientCache.prefixes", "each prefix must be a non-empty string")
    }
  }
  return { commands, maxEntries, ttl, mode, prefixes }
})

/** The server refused the handshake's HELLO 3 or CLIENT TRACKING: a server too old, or a proxy. */
const unsupportedServer = (error: RedisError): RedisError => {
  const reason = error.reason
  if (reason._tag !== "Reply" || (reason.command !== "CLIENT" && reason.command !== "HELLO")) return error
  return configError(
    "clientCache",
    `the server refused ${reason.command === "HELLO" ? "HELLO 3" : "CLIENT TRACKING"} (${reason.serverMessage}): client-side caching needs RESP3 and CLIENT TRACKING (Redis 6 or later), with prefixes that do not overlap in broadcast mode; drop clientCache to connect without it`
  )
}

const textEncoder = new TextEncoder()

/** True when the bytes of `key` start with `prefix`. */
const startsWith = (key: Uint8Array, prefix: Uint8Array): boolean => {
  if (key.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (key[i] !== prefix[i]) return false
  return true
}

/**
 * Builds the `RedisConnection` of `options` with tracking on every data connection, and the
 * cache over it. The returned service's `connection` is the connection to use for everything:
 * its `execute` serves the cached commands, and its writes keep the cache consistent.
 *
 * @example
 * ```ts
 * import * as RedisClientCache from "@effect-falkordb/redis/RedisClientCache"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const cache = yield* RedisClientCache.make({
 *       url: "redis://127.0.0.1:6379",
 *       protocol: 3,
 *       clientCache: { commands: ["GET"], mode: "broadcast", prefixes: ["config:"] }
 *     })
 *     return yield* cache.execute(["GET", "config:flags"])
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options: Options,
  defaults?: LayerOptions
) => Effect.Effect<RedisClientCache["Service"], RedisError, Scope.Scope> = Effect.fn("RedisClientCache.make")(
  function* (options: Options, defaults: LayerOptions = {}) {
    const config = yield* validate(options, defaults)
    const store = new CacheStore(config.maxEntries, config.ttl)
    const cached = new Set(config.commands)
    const tracking: Array<string> = ["CLIENT", "TRACKING", "ON"]
    if (config.mode === "broadcast") {
      tracking.push("BCAST")
      for (const prefix of config.prefixes) tracking.push("PREFIX", prefix)
    }
    const prefixBytes = config.prefixes.map((prefix) => textEncoder.encode(prefix))
    const underPrefixes = (command: Command): boolean => {
      if (config.mode !== "broadcast" || prefixBytes.length === 0) return true
      for (const key of CommandKeys.keys(command)) {
        const bytes = key instanceof Uint8Array ? key : textEncoder.encode(typeof key === "string" ? key : String(key))
        if (!prefixBytes.some((prefix) => startsWith(bytes, prefix))) return false
      }
      return true
    }
    const onPush = (push: PushReply): void => {
      const items = push.items
      if (items.length < 2 || replyToString(items[0]!) !== "invalidate") return
      const keys = items[1]
      // A null list: the server flushed its dataset (or dropped its tracking table).
      if (keys === null) store.flush()
      else if (Array.isArray(keys)) for (const key of keys as ReadonlyArray<Reply>) store.invalidate(keyText(key))
    }
    const hooks: RedisOptions.ConnectionHooks = {
      handshake: [tracking],
      onPush,
      // A lost connection takes its invalidations with it; a new one tracks only what it reads next.
      onConnection: (event, reconnect) => {
        if (event === "lost" || reconnect) store.flush()
      }
    }
    let stallTimeout = Number.POSITIVE_INFINITY
    let commandTimeout = 0
    const { clientCache: _cache, ...connectionOptions } = options
    const inner = yield* makeFromOptions(connectionOptions, defaults, (resolved) => {
      stallTimeout = resolved.stallTimeout
      commandTimeout = resolved.commandTimeout
      return { ...resolved, hooks }
    }).pipe(Effect.mapError(unsupportedServer))

    /** A call whose timeout outlasts the stall detector runs on an exclusive, untracked connection. */
    const diverted = (options: CommandOptions | undefined): boolean => {
      if (stallTimeout === Number.POSITIVE_INFINITY) return false
      const timeout = options?.timeout === undefined ? commandTimeout : Duration.fromInput(options.timeout)
      if (typeof timeout === "number") return timeout >= stallTimeout
      return timeout._tag === "None" || Duration.toMillis(timeout.value) >= stallTimeout
    }

    const drop = (written: Written): void => {
      if (written === undefined) return
      if (written === "all") store.flush()
      else for (const key of written) store.invalidate(key)
    }

    /** Drops what `written` names now and again when `effect` is over (acknowledged or not). */
    const writing = <A, E>(written: Written, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
      if (written === undefined) return effect
      return Effect.suspend(() => {
        drop(written)
        return Effect.ensuring(
          effect,
          Effect.sync(() => drop(written))
        )
      })
    }

    const read = (command: Command, options: CommandOptions | undefined, name: string) => {
      const id = entryId(name, command)
      const entry = store.lookup(id, performance.now())
      if (entry !== undefined) {
        store.hits++
        return Effect.succeed(entry.value)
      }
      store.misses++
      const keys = CommandKeys.keys(command)
      if (keys.length === 0 || !underPrefixes(command) || diverted(options)) return inner.execute(command, options)
      const ticket = store.begin(keys.map(keyText))
      return Effect.onExit(inner.execute(command, options), (exit) =>
        Effect.sync(() => {
          store.complete(ticket, id, Exit.isSuccess(exit) ? exit.value : undefined, performance.now())
        })
      )
    }

    const execute = (command: Command, options?: CommandOptions): Effect.Effect<Reply, RedisError> =>
      Effect.suspend(() => {
        if (!Array.isArray(command) || command.length === 0) return inner.execute(command, options)
        const first = command[0]
        const name = typeof first === "string" && cached.has(first) ? first : upperName(command)
        if (cached.has(name)) return read(command, options, name)
        return writing(writtenBy(command), inner.execute(command, options))
      })

    const settleFuture = (written: Written, future: Future<Reply>): Future<Reply> => ({
      await: writing(written, future.await),
      awaitTimeout: (timeout) => writing(written, future.awaitTimeout(timeout)),
      poll: writing(written, future.poll)
    })

    const exclusiveFace = (connection: ExclusiveConnection): ExclusiveConnection => {
      const transactions = new Transactions()
      return {
        execute: (command, options) =>
          Effect.suspend(() => writing(transactions.note(command), connection.execute(command, options))),
        pipeline: (commands, options) =>
          Effect.suspend(() =>
            writing(
              merge(commands.map((command) => transactions.note(command))),
              connection.pipeline(commands, options)
            )
          ),
        executeAll: ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
          Effect.suspend(() =>
            writing(
              merge(commands.map((command) => transactions.note(command))),
              connection.executeAll(commands, options)
            )
          )) as ExecuteAll
      }
    }

    const connection: RedisConnection["Service"] = makeService({
      info: inner.info,
      execute,
      submit: (command, options) =>
        Effect.suspend(() => {
          const written = writtenBy(command)
          if (written === undefined) return inner.submit(command, options)
          drop(written)
          return Effect.map(inner.submit(command, options), (future) => settleFuture(written, future))
        }),
      pipeline: (commands, options) =>
        Effect.suspend(() => {
          const transactions = new Transactions()
          return writing(
            merge(commands.map((command) => transactions.note(command))),
            inner.pipeline(commands, options)
          )
        }),
      // Sent as they are (reads too, not served from the cache); the keys they write are dropped
      // before and after, as for a pipeline.
      executeAll: ((commands: ReadonlyArray<Command>, options?: ExecuteAllOptions) =>
        Effect.suspend(() =>
          writing(merge(commands.map(writtenBy)), inner.executeAll(commands, options))
        )) as ExecuteAll,
      withExclusive: (use) => inner.withExclusive((exclusive) => use(exclusiveFace(exclusive)))
    })

    return RedisClientCache.of({
      execute,
      connection,
      stats: Effect.sync(() => ({
        hits: store.hits,
        misses: store.misses,
        entries: store.size,
        maxEntries: store.maxEntries,
        evictions: store.evictions,
        expirations: store.expirations,
        invalidations: store.invalidations,
        flushes: store.flushes
      })),
      flush: Effect.sync(() => store.flush()),
      config: {
        commands: config.commands,
        mode: config.mode,
        prefixes: config.prefixes,
        maxEntries: config.maxEntries,
        ttl: config.ttl
      }
    })
  }
)

/**
 * The cache and its `RedisConnection` as one layer: code that uses `RedisConnection` gets the
 * cached commands served from the cache, and its writes keep the cache consistent.
 *
 * @example
 * ```ts
 * import * as RedisClientCache from "@effect-falkordb/redis/RedisClientCache"
 *
 * const Live = RedisClientCache.layer({
 *   url: "redis://127.0.0.1:6379",
 *   protocol: 3,
 *   strategy: "multiplexed",
 *   connections: 2,
 *   routing: "key",
 *   clientCache: { commands: ["GET", "HGET", "SMEMBERS"], maxEntries: 50_000, ttl: "5 minutes" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options,
  defaults?: LayerOptions
): Layer.Layer<RedisClientCache | RedisConnection, RedisError> =>
  Layer.effectContext(
    Effect.map(make(options, defaults), (cache) =>
      Context.make(RedisClientCache, cache).pipe(Context.add(RedisConnection, cache.connection))
    )
  )
