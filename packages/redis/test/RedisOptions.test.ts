import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as RedisConnection from "../src/RedisConnection.ts"
import * as RedisError from "../src/RedisError.ts"
import * as RedisOptions from "../src/RedisOptions.ts"

const resolveOk = (options: RedisOptions.RedisOptions) => RedisOptions.resolve(options)

const configError = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.flip(effect).pipe(
    Effect.map((error) => {
      assert.isTrue(RedisError.isRedisError(error))
      const reason = (error as RedisError.RedisError).reason
      assert.strictEqual(reason._tag, "Config")
      return reason as RedisError.Config
    })
  )

describe("RedisOptions", () => {
  it.effect("URL forms", () =>
    Effect.gen(function* () {
      const plain = yield* resolveOk({ url: "redis://alice:p%40ss@db.example:6380/4" })
      assert.deepStrictEqual(plain.address, { _tag: "Tcp", host: "db.example", port: 6380 })
      assert.strictEqual(plain.username, "alice")
      assert.strictEqual(Redacted.value(plain.password!), "p@ss")
      assert.strictEqual(plain.database, 4)
      assert.strictEqual(plain.tls, undefined)
      assert.strictEqual(plain.target, "db.example:6380/4")

      const tls = yield* resolveOk({ url: "rediss://secure.example" })
      assert.deepStrictEqual(tls.tls, { servername: "secure.example" })
      assert.strictEqual(tls.address._tag === "Tcp" && tls.address.port, 6379)

      const falkor = yield* resolveOk({ url: "falkor://:secret@10.0.0.2:7000" })
      assert.strictEqual(falkor.username, undefined)
      assert.strictEqual(Redacted.value(falkor.password!), "secret")
      assert.strictEqual((yield* resolveOk({ url: "falkors://h:1" })).tls !== undefined, true)
      // No SNI for an IP address (Node warns DEP0123 when servername is one).
      assert.deepStrictEqual((yield* resolveOk({ url: "rediss://10.0.0.2:7000" })).tls, {})
      assert.deepStrictEqual((yield* resolveOk({ url: "rediss://[::1]:7000" })).tls, {})
      assert.deepStrictEqual((yield* resolveOk({ host: "127.0.0.1", tls: { rejectUnauthorized: false } })).tls, {
        rejectUnauthorized: false
      })

      const unix = yield* resolveOk({ url: "unix:///tmp/redis.sock?db=2&password=pw" })
      assert.deepStrictEqual(unix.address, { _tag: "Unix", path: "/tmp/redis.sock" })
      assert.strictEqual(unix.database, 2)
      assert.strictEqual(unix.target, "unix:/tmp/redis.sock/2")
      const redisUnix = yield* resolveOk({ url: "redis+unix:///var/run/r.sock" })
      assert.deepStrictEqual(redisUnix.address, { _tag: "Unix", path: "/var/run/r.sock" })

      const ipv6 = yield* resolveOk({ url: "redis://[::1]:6390" })
      assert.deepStrictEqual(ipv6.address, { _tag: "Tcp", host: "::1", port: 6390 })

      // Explicit fields win over the URL.
      const overridden = yield* resolveOk({ url: "redis://a:1/1", port: 2, database: 5 })
      assert.deepStrictEqual(overridden.address, { _tag: "Tcp", host: "a", port: 2 })
      assert.strictEqual(overridden.database, 5)

      const defaults = yield* resolveOk({})
      assert.strictEqual(defaults.target, "127.0.0.1:6379/0")
      assert.strictEqual(defaults.window, 65536)
      assert.strictEqual(defaults.commandTimeout, 5000)
      assert.strictEqual(defaults.connectTimeout, 10000)
      assert.strictEqual(defaults.maxLineLength, 64 * 1024)
      assert.strictEqual(defaults.maxReplyBytes, 512 * 1024 * 1024)
      // The dead-peer bound: max(2 x commandTimeout, 10 s), or as set; "Infinity" turns it off.
      assert.strictEqual(defaults.deadPeerTimeout, 10_000)
      assert.strictEqual((yield* resolveOk({ commandTimeout: "8 seconds" })).deadPeerTimeout, 16_000)
      assert.strictEqual((yield* resolveOk({ commandTimeout: "Infinity" })).deadPeerTimeout, 10_000)
      assert.strictEqual((yield* resolveOk({ deadPeerTimeout: 750 })).deadPeerTimeout, 750)
      assert.strictEqual((yield* resolveOk({ deadPeerTimeout: "Infinity" })).deadPeerTimeout, Number.POSITIVE_INFINITY)
      assert.strictEqual((yield* resolveOk({ maxLineLength: 1024 })).maxLineLength, 1024)
    })
  )

  it.effect("a value of the wrong type is named with its type; a URL's error names the part", () =>
    Effect.gen(function* () {
      // Values as they come from untyped sources (environment, JSON): the casts stand for those.
      const cases: ReadonlyArray<[RedisOptions.RedisOptions, string, string]> = [
        [{ port: "38949" as unknown as number }, "port", 'port: expected a number in 1..65535, got the string "38949"'],
        [
          { database: "2" as unknown as number },
          "database",
          'database: expected a non-negative integer, got the string "2"'
        ],
        [{ protocol: "3" as unknown as 3 }, "protocol", 'protocol: expected 2 or 3, got the string "3"'],
        [{ window: "64" as unknown as number }, "window", 'window: expected an integer >= 1, got the string "64"'],
        [{ host: 127 as unknown as string }, "host", "host: expected a string, got the number 127"],
        [{ metrics: "true" as unknown as boolean }, "metrics", 'metrics: expected a boolean, got the string "true"'],
        [
          { tls: "yes" as unknown as boolean },
          "tls",
          'tls: expected a boolean or node:tls options, got the string "yes"'
        ],
        [
          { password: 1234 as unknown as string },
          "password",
          "password: expected a string or a Redacted, got the number 1234"
        ],
        [
          { commandTimeout: "soon" as "1 second" },
          "commandTimeout",
          'commandTimeout: expected a duration (a Duration, milliseconds, or text like "5 seconds"), got the string "soon"'
        ],
        [
          { url: 6379 as unknown as string },
          "url",
          "url: expected a string like redis://127.0.0.1:6379/0, got the number 6379"
        ],
        [{ url: "redis://127.0.0.1:99999" }, "url", 'port 99999 in "redis://127.0.0.1:99999" is out of range 1..65535'],
        [{ url: "redis://127.0.0.1:0" }, "url", 'port 0 in "redis://127.0.0.1:0" is out of range 1..65535'],
        [
          { url: "redis://u:pw@[::1]:6x79/0" },
          "url",
          'port "6x79" in "redis://<redacted>@[::1]:6x79/0" is not a number'
        ],
        [
          { url: "127.0.0.1:6379" },
          "url",
          '"127.0.0.1:6379" has no scheme; write it as redis://host:port/db (rediss:// for TLS, unix:///path for a socket)'
        ],
        [
          { url: "mongodb://h:27017" },
          "url",
          'unsupported scheme "mongodb:" in "mongodb://h:27017"; use redis://, rediss://, falkor://, falkors://, unix:// or redis+unix://'
        ],
        [
          { url: "redis://h:6379/zero" },
          "url",
          'database in "redis://h:6379/zero" must be a non-negative integer, got "zero"'
        ]
      ]
      for (const [options, field, message] of cases) {
        const error = yield* configError(RedisOptions.resolve(options))
        assert.strictEqual(error.field, field)
        assert.strictEqual(error.message, message)
      }
      // The layer's own options: counts, the strategy, addresses.
      const layerCases: ReadonlyArray<[RedisConnection.LayerOptions, string, string]> = [
        [
          { connections: "4" as unknown as number, routing: "spread" },
          "connections",
          'connections: expected an integer >= 1, got the string "4"'
        ],
        [
          { strategy: "pool" as "pooled" },
          "strategy",
          'strategy: expected "single", "pooled" or "multiplexed", got the string "pool"'
        ],
        [
          { strategy: "pooled", size: "2" as unknown as number },
          "size",
          'size: expected an integer >= 1, got the string "2"'
        ],
        [{ replicas: ["127.0.0.1:70000"] }, "replicas", 'port 70000 in "127.0.0.1:70000" is out of range 1..65535']
      ]
      for (const [options, field, message] of layerCases) {
        const error = yield* configError(
          Effect.scoped(Layer.build(RedisConnection.layer({ url: "redis://127.0.0.1:1", ...options })))
        )
        assert.strictEqual(error.field, field)
        assert.strictEqual(error.message, message)
      }
    })
  )

  it.effect("each invalid option has its own actionable message", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<[RedisOptions.RedisOptions, string, string]> = [
        [
          { url: "not a url" },
          "url",
          '"not a url" has no scheme; write it as redis://host:port/db (rediss:// for TLS, unix:///path for a socket)'
        ],
        [
          { url: "redis://bad host" },
          "url",
          '"redis://bad host" is not a URL; expected e.g. redis://127.0.0.1:6379/0 (a password holding / : @ or % must be percent-encoded)'
        ],
        [
          { url: "http://h:1" },
          "url",
          'unsupported scheme "http:" in "http://h:1"; use redis://, rediss://, falkor://, falkors://, unix:// or redis+unix://'
        ],
        [
          { url: "redis://u:hunter2@h/abc" },
          "url",
          'database in "redis://<redacted>@h/abc" must be a non-negative integer, got "abc"'
        ],
        [{ url: "unix://" }, "url", '"unix://" has no socket path'],
        [{ port: 70000 }, "port", "port must be an integer in 1..65535 (got 70000)"],
        [{ database: -1 }, "database", "database must be a non-negative integer (got -1)"],
        [{ protocol: 4 as 2 }, "protocol", "protocol: expected 2 or 3, got the number 4"],
        [{ window: 0 }, "window", "window must be an integer >= 1 (got 0)"],
        [{ window: 1.5 }, "window", "window must be an integer >= 1 (got 1.5)"],
        [{ maxLineLength: 0 }, "maxLineLength", "maxLineLength must be an integer >= 1 (got 0)"],
        [{ maxLineLength: 2.5 }, "maxLineLength", "maxLineLength must be an integer >= 1 (got 2.5)"],
        [{ deadPeerTimeout: 0 }, "deadPeerTimeout", "deadPeerTimeout must be > 0 (got 0 ms)"],
        [{ commandTimeout: 0 }, "commandTimeout", "commandTimeout must be > 0 (got 0 ms)"],
        [{ connectTimeout: "Infinity" }, "connectTimeout", "connectTimeout must be finite"],
        [
          { reconnect: { baseDelay: 500, maxDelay: 100 } },
          "reconnect.maxDelay",
          "reconnect.maxDelay (100 ms) must be >= reconnect.baseDelay (500 ms)"
        ],
        [{ username: "bob" }, "password", 'username "bob" is set but no password; AUTH needs both (ACL users)'],
        [
          { path: "/tmp/x.sock", tls: true },
          "tls",
          "TLS over a unix socket is not supported; drop tls or connect over TCP"
        ],
        [
          { commandTimeout: 5000, stallTimeout: 5000 },
          "stallTimeout",
          "commandTimeout (5000 ms) must be < stallTimeout (5000 ms), or a slow command would tear down the shared connection; raise stallTimeout or lower commandTimeout"
        ],
        [{ clientName: "has space" }, "clientName", 'clientName cannot contain spaces or newlines (got "has space")'],
        [
          { offlineQueue: "drop" as "queue" },
          "offlineQueue",
          'offlineQueue: expected "queue" or "failFast", got the string "drop"'
        ]
      ]
      for (const [options, field, message] of cases) {
        const error = yield* configError(RedisOptions.resolve(options))
        assert.strictEqual(error.field, field)
        assert.strictEqual(error.message, message)
      }
    })
  )

  it.effect("strategy options are validated before anything connects", () =>
    Effect.gen(function* () {
      // Port 1: if validation did not come first, these would fail with reason Offline instead.
      const url = "redis://127.0.0.1:1"
      const cases: ReadonlyArray<[Effect.Effect<unknown, unknown, never>, string, string]> = [
        [
          Effect.scoped(RedisConnection.makeMultiplexed({ url, connections: 0 })),
          "connections",
          "connections must be an integer >= 1 (got 0)"
        ],
        [
          Effect.scoped(RedisConnection.makeMultiplexed({ url, connections: 4 })),
          "routing",
          'connections: 4 needs a routing: "key" keeps each key\'s commands in submit order, "spread" balances load with no order across engines; say which'
        ],
        [
          Effect.scoped(RedisConnection.makeMultiplexed({ url, connections: 5000, routing: "spread" })),
          "connections",
          "connections of 5000 is more than 1024 sockets; lower it (a few sockets carry a lot when multiplexed)"
        ],
        [
          Effect.scoped(RedisConnection.makeMultiplexed({ url, routing: "random" as "spread" })),
          "routing",
          'routing: expected "spread" or "key", got the string "random"'
        ],
        [Effect.scoped(RedisConnection.makePooled({ url, size: 0 })), "size", "size must be an integer >= 1 (got 0)"],
        [
          Effect.scoped(RedisConnection.makePooled({ url, window: 8 })),
          "window",
          "window does not apply to a pooled client (each call holds a connection for itself); drop it"
        ]
      ]
      for (const [effect, field, message] of cases) {
        const error = yield* configError(effect)
        assert.strictEqual(error.field, field)
        assert.strictEqual(error.message, message)
      }
    })
  )

  it.live("layerConfig reads URL, password (Redacted) and strategy from Config", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ password: Redacted.make("from-config") })
      const provider = ConfigProvider.fromUnknown({
        REDIS_URL: `redis://127.0.0.1:${server.port}/1`,
        REDIS_PASSWORD: "from-config",
        REDIS_STRATEGY: "pooled"
      })
      const live = RedisConnection.layerConfig({
        url: Config.String("REDIS_URL"),
        password: Config.Redacted("REDIS_PASSWORD"),
        strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY")
      }).pipe(Layer.provide(ConfigProvider.layer(provider)))
      const info = yield* Effect.gen(function* () {
        const redis = yield* RedisConnection.RedisConnection
        assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
        return redis.info
      }).pipe(Effect.provide(live))
      assert.strictEqual(info.strategy, "pooled")
      assert.strictEqual(info.target, `127.0.0.1:${server.port}/1`)
    })
  )

  it.effect("layerConfig reads every option layer takes (each invalid value is reported by its field)", () =>
    Effect.gen(function* () {
      // Port 1: nothing connects; validation must fail first, naming the field it read.
      const url = "redis://127.0.0.1:1"
      const zero = Config.succeed(Duration.zero)
      const cases: ReadonlyArray<[Config.Wrap<RedisConnection.ConfigOptions>, string]> = [
        [{ url: Config.succeed("nope") }, "url"],
        [{ url: Config.succeed(url), port: Config.succeed(0) }, "port"],
        [{ path: Config.succeed("/tmp/x.sock"), tls: Config.succeed(true) }, "tls"],
        [{ url: Config.succeed(url), username: Config.succeed("u") }, "password"],
        [{ url: Config.succeed(url), database: Config.succeed(-1) }, "database"],
        [{ url: Config.succeed(url), protocol: Config.succeed(4 as 3) }, "protocol"],
        [{ url: Config.succeed(url), clientName: Config.succeed("a b") }, "clientName"],
        [{ url: Config.succeed(url), connectTimeout: zero }, "connectTimeout"],
        [{ url: Config.succeed(url), commandTimeout: zero }, "commandTimeout"],
        [{ url: Config.succeed(url), offlineQueue: Config.succeed("drop" as "queue") }, "offlineQueue"],
        [{ url: Config.succeed(url), offlineTimeout: zero }, "offlineTimeout"],
        [{ url: Config.succeed(url), reconnect: { baseDelay: zero } }, "reconnect.baseDelay"],
        [{ url: Config.succeed(url), reconnect: { maxDelay: zero } }, "reconnect.maxDelay"],
        [{ url: Config.succeed(url), closeTimeout: zero }, "closeTimeout"],
        [{ url: Config.succeed(url), stallTimeout: zero }, "stallTimeout"],
        [{ url: Config.succeed(url), window: Config.succeed(0) }, "window"],
        [{ url: Config.succeed(url), maxReplyBytes: Config.succeed(0) }, "maxReplyBytes"],
        [{ url: Config.succeed(url), strategy: Config.succeed("pooled"), size: Config.succeed(0) }, "size"],
        [{ url: Config.succeed(url), connections: Config.succeed(0) }, "connections"],
        [{ url: Config.succeed(url), routing: Config.succeed("x" as "key") }, "routing"],
        [{ url: Config.succeed(url), strategy: Config.succeed("x" as "single") }, "strategy"],
        // An option of another strategy is refused, not ignored.
        [{ url: Config.succeed(url), strategy: Config.succeed("single"), size: Config.succeed(3) }, "size"],
        [{ url: Config.succeed(url), strategy: Config.succeed("pooled"), routing: Config.succeed("key") }, "routing"],
        [{ url: Config.succeed(url), size: Config.succeed(3) }, "size"]
      ]
      for (const [config, field] of cases) {
        const error = yield* configError(Effect.scoped(Layer.build(RedisConnection.layerConfig(config))))
        assert.strictEqual(error.field, field, JSON.stringify(Object.keys(config)))
      }
    })
  )

  it.live(
    "layerConfig: a Config's own default of another strategy's option is dropped; one the source set is refused",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        // Every field has a default, the normal way to write it; `metrics` is a plain value.
        const config = {
          url: Config.String("REDIS_URL"),
          strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY").pipe(
            Config.withDefault("multiplexed")
          ),
          connections: Config.Int("REDIS_CONNECTIONS").pipe(Config.withDefault(3)),
          routing: Config.Literals(["spread", "key"], "REDIS_ROUTING").pipe(Config.withDefault("key")),
          size: Config.Int("REDIS_POOL_SIZE").pipe(Config.withDefault(2)),
          window: Config.Int("REDIS_WINDOW").pipe(Config.withDefault(1024)),
          metrics: true
        } as const
        const layerWith = (env: Record<string, string>) =>
          RedisConnection.layerConfig(config).pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS_URL: server.url, ...env })))
          )
        const infoWith = (env: Record<string, string>) =>
          Effect.gen(function* () {
            const redis = yield* RedisConnection.RedisConnection
            assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
            return redis.info
          }).pipe(Effect.provide(layerWith(env)))
        assert.deepInclude(yield* infoWith({}), {
          strategy: "multiplexed",
          connections: 3,
          routing: "key",
          window: 1024
        })
        assert.deepInclude(yield* infoWith({ REDIS_STRATEGY: "single" }), { strategy: "single", connections: 1 })
        assert.deepInclude(yield* infoWith({ REDIS_STRATEGY: "pooled" }), { strategy: "pooled", connections: 2 })
        assert.deepInclude(yield* infoWith({ REDIS_CONNECTIONS: "2", REDIS_ROUTING: "spread" }), {
          connections: 2,
          routing: "spread"
        })
        // Set in the source for a strategy it does not apply to: refused, naming the field.
        for (const [env, field] of [
          [{ REDIS_STRATEGY: "single", REDIS_CONNECTIONS: "3" }, "connections"],
          [{ REDIS_STRATEGY: "pooled", REDIS_WINDOW: "64" }, "window"],
          [{ REDIS_POOL_SIZE: "4" }, "size"]
        ] as const) {
          const error = yield* configError(Effect.scoped(Layer.build(layerWith(env))))
          assert.strictEqual(error.field, field)
          assert.include(error.message, "does not apply")
        }
      })
  )

  it.live("layer: defaults fill what options leave undefined, only where they apply", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      const defaults = { connections: 3, routing: "spread" as const }
      const infoOf = (options: RedisConnection.LayerOptions) =>
        Effect.gen(function* () {
          const redis = yield* RedisConnection.RedisConnection
          assert.strictEqual(yield* redis.execute(["PING"]), "PONG")
          return redis.info
        }).pipe(Effect.provide(RedisConnection.layer(options, defaults)))
      const multiplexed = yield* infoOf({ url: server.url, routing: undefined })
      assert.deepInclude(multiplexed, { strategy: "multiplexed", connections: 3, routing: "spread" })
      const single = yield* infoOf({ url: server.url, strategy: "single" })
      assert.deepInclude(single, { strategy: "single", connections: 1 })
      const pooled = yield* infoOf({ url: server.url, strategy: "pooled", size: 2 })
      assert.deepInclude(pooled, { strategy: "pooled", connections: 2 })
    })
  )
})
