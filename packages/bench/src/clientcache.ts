/**
 * The gain of `RedisClientCache`: the same closed loop of `execute(GET)` over 1024 keys on one
 * single RESP3 client, uncached, cached with every read a hit (the keys are warm), and cached
 * with every read a miss (each key read once: a miss, a store and an eviction; next to the same
 * reads of never-read keys uncached), in the same run; throughput and the Node process's CPU
 * time per read.
 *
 * @since 0.1.0
 */
import * as RedisClientCache from "@effect-falkordb/redis/RedisClientCache"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Harness from "./harness.ts"

type Service = RedisConnection.RedisConnection["Service"]

const KEYS = 1024

/**
 * Runs the table and renders it.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: Harness.TableOptions): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${options.port}`
      const uncached = yield* RedisConnection.makeSingle({ url, protocol: 3 })
      // Two caches, so the misses do not evict the entries of the hits.
      const makeCache = RedisClientCache.make({
        url,
        protocol: 3,
        strategy: "single",
        clientCache: { commands: ["GET"], maxEntries: KEYS, ttl: "Infinity" }
      })
      const cache = yield* makeCache
      const missing = yield* makeCache
      for (let i = 0; i < KEYS; i++) yield* uncached.execute(["SET", `bench:cache:${i}`, "0123456789abcdef"])
      let fresh = 0
      const variants: ReadonlyArray<readonly [string, Service, (caller: number, i: number) => string]> = [
        ["uncached", uncached, (caller, i) => `bench:cache:${(caller * 31 + i) % KEYS}`],
        // The keys of the misses row, uncached: what the misses row pays over it is the cache's.
        ["uncached, new keys", uncached, () => `bench:cache:absent:${fresh++}`],
        ["cached, hits", cache.connection, (caller, i) => `bench:cache:${(caller * 31 + i) % KEYS}`],
        // Never read before: a miss, a store, and past maxEntries an eviction.
        ["cached, misses", missing.connection, () => `bench:cache:miss:${fresh++}`]
      ]
      const rows = yield* Harness.variantTable(
        options,
        [1, 64],
        variants.map(([name, redis, key]) => [name, { redis, key }] as const),
        ({ key, redis }, callers, millis) =>
          Harness.cpuLoop(callers, millis, (caller, i) => redis.execute(["GET", key(caller, i)])),
        (cpu, uncached) => `${(cpu / uncached).toFixed(2)}x`
      )
      const hits = yield* cache.stats
      const misses = yield* missing.stats
      return [
        "### Client-side caching (single RESP3 client, execute GET over 1024 keys)",
        "",
        Harness.table(["callers", "variant", "reads/s", "CPU µs/read (Node)", "CPU ÷ uncached"], rows),
        "",
        `Cache counters over the run: hits row ${hits.hits} hits / ${hits.misses} misses; misses row ${misses.hits} hits / ${misses.misses} misses / ${misses.evictions} evictions; flushes ${hits.flushes + misses.flushes}.`
      ].join("\n")
    })
  )
