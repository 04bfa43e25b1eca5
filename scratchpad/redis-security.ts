/**
 * The README's "Security" examples (packages/redis/README.md), type-checked in CI: a private CA
 * with mutual TLS, and a token that rotates while the client runs.
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

// A private CA, the certificate's name, and a client certificate (mutual TLS).
export const TlsLive = RedisConnection.layerFromOptions({
  url: "rediss://10.0.0.7:6380",
  tls: {
    caFile: "/etc/redis/tls/ca.crt",
    servername: "redis.internal",
    certFile: "/etc/redis/tls/client.crt",
    keyFile: "/etc/redis/tls/client.key"
  }
})

/** Your token source, e.g. a cloud identity endpoint. */
export declare const fetchToken: Effect.Effect<string, Error>

// A fresh token every 45 minutes, each one re-authenticating the live connections.
const tokens = Stream.fromEffectSchedule(
  Effect.map(fetchToken, (token) => ({ username: "app", password: Redacted.make(token) })),
  Schedule.spaced(Duration.minutes(45))
)

export const RotatingLive = RedisConnection.layerFromOptions({
  url: "rediss://cache.internal:6380",
  credentials: tokens
})
