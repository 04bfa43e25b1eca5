/**
 * Options of a connection, the URL forms they can be given in, and their validation.
 * Everything is checked once, when a client is built: an invalid combination fails with a
 * `RedisError` with reason `Config` that names the option and says what to change. Nothing is coerced.
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import type { PushReply } from "@effect-falkordb/resp/Reply"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Net from "node:net"
import type * as Tls from "node:tls"
import { ConnectReport } from "./internal/ConnectReport.ts"
import { type CredentialSource, credentialSource } from "./internal/Credentials.ts"
import { checkTls } from "./internal/TlsFiles.ts"
import type { ClientMetrics } from "./internal/EngineMetrics.ts"
import { expected } from "./internal/ValueText.ts"
import { Config as ConfigReason, RedisError } from "./RedisError.ts"

/**
 * How to reach the server and how to behave on the connection. Explicit fields win over
 * the parts of `url`.
 *
 * URL forms: `redis://[user[:password]@]host[:port][/db]`, `rediss://…` (TLS),
 * `falkor://…` and `falkors://…` (the same, FalkorDB's spelling), `unix:///path/to.sock`
 * and `redis+unix:///path/to.sock`, both with `?db=N&password=…&user=…`.
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as Duration from "effect/Duration"
 *
 * // A URL for the address and credentials, options for the rest.
 * const layer = RedisConnection.layerSingle({
 *   url: "rediss://:secret@cache.internal:6380/2",
 *   protocol: 3,
 *   connectTimeout: Duration.seconds(5)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RedisOptions {
  readonly url?: string | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** A unix socket path; replaces host and port. */
  readonly path?: string | undefined
  /**
   * `true` for TLS with default settings, or `node:tls` connect options (plus `caFile`,
   * `certFile`, `keyFile`). The server's certificate is verified against `ca` (default: the
   * system CAs) and its name against the host (or `servername`).
   */
  readonly tls?: boolean | TlsOptions | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | string | undefined
  /**
   * Credentials that change while the client runs (a rotated password, a short-lived token),
   * instead of `username`/`password`. An `Effect` is asked on every connect and reconnect; a
   * `Stream` runs while the client lives, and each emission re-authenticates the live
   * connections with `AUTH` (behind nothing a caller waits for, dropping nothing in flight)
   * and is used by every later connect. Either must answer within `connectTimeout`; a failure
   * is reason `CredentialsProvider`, asked again with the reconnect backoff.
   */
  readonly credentials?: CredentialsOption | undefined
  /** Database index for `SELECT`, 0 by default. */
  readonly database?: number | undefined
  /** RESP protocol: 2 (default) or 3 (sends `HELLO 3`). */
  readonly protocol?: 2 | 3 | undefined
  /** Sent as `CLIENT SETNAME` during the handshake. */
  readonly clientName?: string | undefined
  /** Budget for TCP connect + TLS + handshake. Default 10 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
  /**
   * Default per-command timeout, counted from the call (window wait included) to the
   * reply. Default 5 seconds; `"Infinity"` waits forever.
   */
  readonly commandTimeout?: Duration.Input | undefined
  /**
   * While disconnected: `"queue"` (default) keeps unwritten commands for the next
   * connection, each bounded by its timeout and by `offlineTimeout`; `"failFast"` fails
   * them at once with reason `Offline`.
   */
  readonly offlineQueue?: "queue" | "failFast" | undefined
  /**
   * How long an outage may last before queued commands fail with reason `Offline` (and new
   * ones fail at once, until the connection is back). Counted from the loss of the
   * connection, so a call made during an outage settles within this bound even when it
   * has no timeout of its own. Default 5 seconds; `"Infinity"` waits for the reconnect.
   */
  readonly offlineTimeout?: Duration.Input | undefined
  /** Reconnect backoff: `min(maxDelay, baseDelay · 2^attempt)` plus up to 20% jitter. */
  readonly reconnect?:
    | {
        readonly baseDelay?: Duration.Input | undefined
        readonly maxDelay?: Duration.Input | undefined
      }
    | undefined
  /** How long closing waits for replies still owed before it fails them. Default 5 seconds. */
  readonly closeTimeout?: Duration.Input | undefined
  /**
   * Stall detector, off by default: when commands are owed and no byte has arrived for this
   * long, the connection is presumed dead, torn down (owed commands fail with
   * `written: true`) and replaced. Must be above `commandTimeout`; a command asking for a
   * longer timeout runs on an exclusive connection instead of the shared pipe.
   */
  readonly stallTimeout?: Duration.Input | undefined
  /**
   * Dead-peer rule, on by default: a connection whose next owed reply belongs to a caller
   * who already timed out, and that has received no byte for this long, is presumed dead
   * (half-open, or a peer that stopped mid-reply), torn down (what it owed fails with
   * `written: true`) and replaced. A command whose caller is still waiting is never cut,
   * however long it runs. Default `max(2 × commandTimeout, 10 seconds)` (10 seconds when
   * `commandTimeout` is `"Infinity"`); `"Infinity"` turns it off. A pooled connection that
   * still owes such a reply is replaced before it is lent again.
   */
  readonly deadPeerTimeout?: Duration.Input | undefined
  /**
   * Commands allowed queued + in flight per connection (the FullDuplexWindow). Default 65536.
   * A full window suspends callers; it bounds memory.
   */
  readonly window?: number | undefined
  /**
   * Holds writes while a connection owes more than this many replies: later commands wait in
   * the client, and go out together, in order, in one write once it owes this many or fewer.
   * For servers that answer a connection's commands one at a time after a long service
   * (FalkorDB's graph queries): a command written early would only wait in the server's
   * queue, so holding it costs no time and saves a write and a read on both sides for each
   * command it joins. A held command is still unsent: a caller that times out or is
   * interrupted meanwhile takes it back (`written: false`). Off by default (plain Redis
   * answers a pipeline in microseconds, and holding would leave it idle between writes); the
   * graph layer sets 2. An integer >= 0; `Infinity` (the default) never holds.
   *
   * @example
   * ```ts
   * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
   *
   * // Eight sockets to a FalkorDB server; each holds queries while it owes more than two.
   * const layer = RedisConnection.layerMultiplexed({
   *   url: "redis://127.0.0.1:6379",
   *   connections: 8,
   *   routing: "spread",
   *   holdWritesAbove: 2
   * })
   * ```
   */
  readonly holdWritesAbove?: number | undefined
  /** Largest bulk reply accepted, in bytes. Default 512 MiB (the Redis limit). */
  readonly maxReplyBytes?: number | undefined
  /**
   * Longest line accepted in a reply (a simple string, an error, a number, the length line
   * of a bulk or aggregate), in bytes. Default 64 KiB: Redis sends such lines short, so a
   * longer one means a broken or hostile peer. It fails that connection with a
   * `RedisProtocolError` (its in-flight commands fail, the engine reconnects). Bulk payloads
   * are bounded by `maxReplyBytes` instead.
   */
  readonly maxLineLength?: number | undefined
  /**
   * Engine metrics (Effect `Metric`): latency per strategy, requests in flight per engine,
   * window waits, reconnects by reason, connection counts, and pooled wait times. Default
   * `false`: then the engines do no metric work at all. The names are listed in the
   * package README ("Metrics and spans").
   */
  readonly metrics?: boolean | undefined
}

/**
 * TLS options: `node:tls` connect options, and certificate files read when the client is
 * built (an unreadable file, a key that does not match its certificate, an expired client
 * certificate: reason `Config` naming the field, never the key).
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 *
 * // A private CA, and a client certificate for mutual TLS.
 * const layer = RedisConnection.layerSingle({
 *   url: "rediss://cache.internal:6380",
 *   tls: { caFile: "/etc/redis/ca.crt", certFile: "/etc/redis/client.crt", keyFile: "/etc/redis/client.key" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TlsOptions extends Tls.ConnectionOptions {
  /** A PEM file of the CA(s) that signed the server's certificate (read into `ca`). */
  readonly caFile?: string | undefined
  /** A PEM file of the client certificate, for mutual TLS (read into `cert`). */
  readonly certFile?: string | undefined
  /** A PEM file of the client certificate's private key (read into `key`). */
  readonly keyFile?: string | undefined
}

/**
 * What a `credentials` provider yields: an ACL user (or `default`) and its secret.
 *
 * @example
 * ```ts
 * import type { Credentials } from "@effect-falkordb/redis/RedisOptions"
 * import * as Redacted from "effect/Redacted"
 *
 * const credentials: Credentials = { username: "app", password: Redacted.make("s3cret") }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly username?: string | undefined
  readonly password: Redacted.Redacted<string>
}

/**
 * The `credentials` option: asked on every connect (an `Effect`), or followed (a `Stream`).
 *
 * @example
 * ```ts
 * import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import * as Effect from "effect/Effect"
 * import * as Redacted from "effect/Redacted"
 *
 * // e.g. read from a secrets manager on every (re)connect
 * const fetchToken = Effect.succeed({ username: "app", password: Redacted.make("token-1") })
 * const layer = RedisConnection.layerSingle({ url: "redis://127.0.0.1:6379", credentials: fetchToken })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type CredentialsOption = Effect.Effect<Credentials, unknown> | Stream.Stream<Credentials, unknown>

/**
 * Options after URL parsing, defaults and validation.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedOptions {
  readonly address:
    | { readonly _tag: "Tcp"; readonly host: string; readonly port: number }
    | { readonly _tag: "Unix"; readonly path: string }
  readonly tls: Tls.ConnectionOptions | undefined
  readonly username: string | undefined
  readonly password: Redacted.Redacted<string> | undefined
  /** The `credentials` option, shared by every connection built from the same value. */
  readonly credentials?: CredentialSource | undefined
  readonly database: number
  readonly protocol: 2 | 3
  readonly clientName: string | undefined
  readonly connectTimeout: number
  readonly commandTimeout: number
  readonly offlineQueue: "queue" | "failFast"
  /** `Infinity` when commands wait for the reconnect however long it takes. */
  readonly offlineTimeout: number
  readonly reconnectBaseDelay: number
  readonly reconnectMaxDelay: number
  readonly closeTimeout: number
  /** `Infinity` when the stall detector is off. */
  readonly stallTimeout: number
  /** `Infinity` when the dead-peer rule is off. */
  readonly deadPeerTimeout: number
  readonly window: number
  /** `Infinity` when writes are never held. */
  readonly holdWritesAbove: number
  readonly maxReplyBytes: number
  readonly maxLineLength: number
  /** `host:port/db` or `unix:path/db`: the stable name of the server. */
  readonly target: string
  /**
   * Set by the Sentinel layer: asked for the address on every (re)connect instead of
   * `address`, and told of every engine so a failover can move them all.
   */
  readonly locator?: Locator | undefined
  /**
   * Set by `RedisClientCache`: extra handshake commands (`CLIENT TRACKING …`) and what to do
   * with the connection's RESP3 pushes and losses. Exclusive connections run without them.
   */
  readonly hooks?: ConnectionHooks | undefined
  /** Set by the Cluster layer on replica read clients: `READONLY` in the handshake. */
  readonly replicaReads?: boolean | undefined
  /**
   * Set on a caller's own connection (`withExclusive`): new credentials of a `credentials`
   * Stream are not sent on it (an `AUTH` inside its `MULTI` would be queued into the
   * transaction, or refused while it is subscribed); its next connect uses them.
   */
  readonly exclusive?: boolean | undefined
  /** The `metrics` option. */
  readonly metrics: boolean
  /** Set by the client when `metrics` is on: the series its engines update. */
  readonly instruments?: ClientMetrics | undefined
  /** Reports connect failures once per change, shared by every connection made from these options. */
  readonly report?: ConnectReport | undefined
}

/**
 * What a layer on top of the engines (client-side caching) adds to every data connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionHooks {
  /** Sent on every (re)connect after AUTH/HELLO/SELECT/CLIENT SETNAME and before the readiness PING. */
  readonly handshake: ReadonlyArray<Command>
  /** A RESP3 push frame arrived (called synchronously from the socket's data callback; must not block). */
  readonly onPush: (push: PushReply) => void
  /**
   * The connection was installed (`"connected"`, `reconnect` true after a loss) or lost
   * (`"lost"`: what the server was to push on it will never arrive).
   */
  readonly onConnection: (event: "connected" | "lost", reconnect: boolean) => void
}

/**
 * A server whose address may change (a Sentinel-watched primary, or a replica): an engine asks
 * `locate` on every (re)connect, checks the server's `ROLE` against `role` before any user
 * command, and registers itself so a failover can `reset` it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Locator {
  readonly locate: Effect.Effect<{ readonly host: string; readonly port: number }, RedisError>
  readonly role: "master" | "slave"
  /**
   * Bumped by every failover: a connect that began before one is not installed (it may have
   * reached the old primary, which still answers ROLE "master" until it is demoted).
   */
  readonly generation: number
  /** Registers an engine; returns its unregistration. */
  readonly register: (engine: Locatable) => () => void
}

/**
 * What a `Locator` can do to an engine.
 *
 * @since 0.1.0
 * @category models
 */
export interface Locatable {
  /** Tears the connection down (what it owes fails with `written: true`); the engine reconnects. */
  readonly reset: (message: string) => void
  readonly online: boolean
}

/**
 * The default FullDuplexWindow.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_WINDOW = 65536

/** A `RedisError` with reason `Config`. */
const configError = (field: string, message: string): RedisError =>
  new RedisError({ reason: new ConfigReason({ field, message }) })

const fail = (field: string, message: string) => Effect.fail(configError(field, message))

interface UrlParts {
  host?: string
  port?: number
  path?: string
  tls?: boolean
  username?: string
  password?: string
  database?: number
}

const parseDatabase = (text: string, url: string): number | RedisError => {
  const database = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(database)) {
    return configError("url", `database in "${redactUrl(url)}" must be a non-negative integer, got "${text}"`)
  }
  return database
}

/**
 * Hides the credentials of a URL before it goes into an error message: everything between
 * `//` and the last `@` (a password may hold `@`, `:` or `/`, even unencoded), and the value
 * of a `password` query parameter.
 */
const redactUrl = (url: string): string => {
  const start = url.indexOf("//")
  const at = url.lastIndexOf("@")
  const hidden = start !== -1 && at > start ? `${url.slice(0, start + 2)}<redacted>${url.slice(at)}` : url
  return hidden.replace(/([?&]password=)[^&#]*/gi, "$1<redacted>")
}

/** Percent-decodes the user or password of a URL; a stray `%` is a typed error that shows neither. */
const decodeCredential = (text: string, url: string): string | RedisError => {
  try {
    return decodeURIComponent(text)
  } catch {
    return configError(
      "url",
      `the user or password in "${redactUrl(url)}" is not percent-encoded: write @ : % / in it as %40 %3A %25 %2F (encodeURIComponent), or pass password as an option`
    )
  }
}

/**
 * Parses a connection URL. The password never appears in error messages.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseUrl = (url: string): Effect.Effect<UrlParts, RedisError> =>
  Effect.suspend(() => {
    if (typeof url !== "string") return fail("url", expected("url", "a string like redis://127.0.0.1:6379/0", url))
    const malformedPart = urlPartProblem(url)
    if (malformedPart !== undefined) return fail("url", malformedPart)
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return fail(
        "url",
        `"${redactUrl(url)}" is not a URL; expected e.g. redis://127.0.0.1:6379/0 (a password holding / : @ or % must be percent-encoded)`
      )
    }
    const scheme = parsed.protocol.slice(0, -1)
    const parts: UrlParts = {}
    for (const field of ["username", "password"] as const) {
      if (parsed[field] === "") continue
      const decoded = decodeCredential(parsed[field], url)
      if (decoded instanceof RedisError) return Effect.fail(decoded)
      parts[field] = decoded
    }
    const query = parsed.searchParams
    if (query.has("password")) parts.password = query.get("password") ?? ""
    if (query.has("user")) parts.username = query.get("user") ?? ""
    if (query.has("username")) parts.username = query.get("username") ?? ""
    switch (scheme) {
      case "redis":
      case "rediss":
      case "falkor":
      case "falkors": {
        parts.tls = scheme === "rediss" || scheme === "falkors"
        if (parsed.hostname === "") return fail("url", `"${redactUrl(url)}" has no host`)
        parts.host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname
        if (parsed.port !== "") parts.port = Number(parsed.port)
        if (parts.port === 0) return fail("url", `port 0 in "${redactUrl(url)}" is out of range 1..65535`)
        const path = parsed.pathname.replace(/^\//, "")
        if (path !== "") {
          const database = parseDatabase(path, url)
          if (database instanceof RedisError) return Effect.fail(database)
          parts.database = database
        }
        break
      }
      case "unix":
      case "redis+unix": {
        const path = decodeURIComponent(parsed.pathname)
        if (path === "" || path === "/") return fail("url", `"${redactUrl(url)}" has no socket path`)
        parts.path = path
        break
      }
      default:
        return fail(
          "url",
          `unsupported scheme "${scheme}:" in "${redactUrl(url)}"; use redis://, rediss://, falkor://, falkors://, unix:// or redis+unix://`
        )
    }
    const db = query.get("db")
    if (db !== null) {
      const database = parseDatabase(db, url)
      if (database instanceof RedisError) return Effect.fail(database)
      parts.database = database
    }
    return Effect.succeed(parts)
  })

const SCHEMES = ["redis", "rediss", "falkor", "falkors", "unix", "redis+unix"]

/**
 * What is wrong with the part of `url` that `new URL` would only call "not a URL": a missing or
 * unknown scheme, a port that is not a number or out of range.
 */
const urlPartProblem = (url: string): string | undefined => {
  const shown = redactUrl(url)
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]
  if (scheme === undefined) {
    return `"${shown}" has no scheme; write it as redis://host:port/db (rediss:// for TLS, unix:///path for a socket)`
  }
  if (!SCHEMES.includes(scheme.toLowerCase())) {
    return `unsupported scheme "${scheme}:" in "${shown}"; use redis://, rediss://, falkor://, falkors://, unix:// or redis+unix://`
  }
  // host[:port] (possibly a bracketed IPv6 address) after the last "@": a raw password may hold
  // "/" or ":", and no part of it may reach the message.
  const start = url.indexOf("//") + 2
  const at = url.lastIndexOf("@")
  const hostPort = /^[^/?#]*/.exec(url.slice(at >= start ? at + 1 : start))?.[0] ?? ""
  const port = /^(?:\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort)?.[1]
  if (port === undefined || port === "") return undefined
  if (!/^\d+$/.test(port)) return `port "${port}" in "${shown}" is not a number`
  if (Number(port) < 1 || Number(port) > 65535) return `port ${port} in "${shown}" is out of range 1..65535`
  return undefined
}

const durationMillis = (
  field: string,
  input: Duration.Input | undefined,
  fallback: number,
  allowInfinity: boolean
): Effect.Effect<number, RedisError> => {
  if (input === undefined) return Effect.succeed(fallback)
  const decoded = Duration.fromInput(input)
  if (decoded._tag === "None") {
    return fail(field, expected(field, 'a duration (a Duration, milliseconds, or text like "5 seconds")', input))
  }
  const millis = Duration.toMillis(decoded.value)
  if (millis === Number.POSITIVE_INFINITY && !allowInfinity) return fail(field, `${field} must be finite`)
  if (!(millis > 0)) return fail(field, `${field} must be > 0 (got ${millis} ms)`)
  return Effect.succeed(millis)
}

const positiveInteger = (
  field: string,
  value: number | undefined,
  fallback: number
): Effect.Effect<number, RedisError> => {
  if (value === undefined) return Effect.succeed(fallback)
  if (typeof value !== "number") return fail(field, expected(field, "an integer >= 1", value))
  if (!Number.isSafeInteger(value) || value < 1) return fail(field, `${field} must be an integer >= 1 (got ${value})`)
  return Effect.succeed(value)
}

/**
 * Applies the URL, the defaults and validation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = Effect.fnUntraced(function* (options: RedisOptions) {
  for (const field of ["host", "path", "username", "clientName"] as const) {
    const value = options[field]
    if (value !== undefined && typeof value !== "string") return yield* fail(field, expected(field, "a string", value))
  }
  for (const field of ["metrics"] as const) {
    const value = options[field]
    if (value !== undefined && typeof value !== "boolean")
      return yield* fail(field, expected(field, "a boolean", value))
  }
  const fromUrl: UrlParts = options.url === undefined ? {} : yield* parseUrl(options.url)
  const path = options.path ?? (options.host === undefined && options.port === undefined ? fromUrl.path : undefined)
  const host = options.host ?? fromUrl.host ?? "127.0.0.1"
  const port = options.port ?? fromUrl.port ?? 6379
  if (typeof port !== "number") return yield* fail("port", expected("port", "a number in 1..65535", port))
  if (path === undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    return yield* fail("port", `port must be an integer in 1..65535 (got ${port})`)
  }
  if (
    options.tls !== undefined &&
    typeof options.tls !== "boolean" &&
    (typeof options.tls !== "object" || options.tls === null)
  ) {
    return yield* fail("tls", expected("tls", "a boolean or node:tls options", options.tls))
  }
  if (
    options.password !== undefined &&
    typeof options.password !== "string" &&
    !Redacted.isRedacted(options.password)
  ) {
    return yield* fail("password", expected("password", "a string or a Redacted", options.password))
  }
  if (path !== undefined && options.tls !== undefined && options.tls !== false) {
    return yield* fail("tls", "TLS over a unix socket is not supported; drop tls or connect over TCP")
  }
  const tlsOption = options.tls ?? fromUrl.tls ?? false
  // SNI carries host names only: Node warns (DEP0123) when it is given an IP address.
  const sni: Tls.ConnectionOptions = Net.isIP(host) === 0 ? { servername: host } : {}
  const tls: Tls.ConnectionOptions | undefined =
    tlsOption === false ? undefined : tlsOption === true ? sni : { ...sni, ...(yield* checkTls(tlsOption)) }
  const database = options.database ?? fromUrl.database ?? 0
  if (typeof database !== "number") {
    return yield* fail("database", expected("database", "a non-negative integer", database))
  }
  if (!Number.isSafeInteger(database) || database < 0) {
    return yield* fail("database", `database must be a non-negative integer (got ${database})`)
  }
  const protocol = options.protocol ?? 2
  if (protocol !== 2 && protocol !== 3) {
    return yield* fail("protocol", expected("protocol", "2 or 3", protocol))
  }
  const password =
    options.password !== undefined
      ? Redacted.isRedacted(options.password)
        ? options.password
        : Redacted.make(options.password)
      : fromUrl.password !== undefined
        ? Redacted.make(fromUrl.password)
        : undefined
  const username = options.username ?? fromUrl.username
  if (username !== undefined && password === undefined) {
    return yield* fail("password", `username "${username}" is set but no password; AUTH needs both (ACL users)`)
  }
  if (options.clientName !== undefined && /\s/.test(options.clientName)) {
    return yield* fail("clientName", `clientName cannot contain spaces or newlines (got "${options.clientName}")`)
  }
  if (options.credentials !== undefined) {
    if (!Effect.isEffect(options.credentials) && !Stream.isStream(options.credentials)) {
      return yield* fail("credentials", "credentials must be an Effect or a Stream of { username?, password }")
    }
    if (password !== undefined || username !== undefined) {
      return yield* fail(
        "credentials",
        "credentials replaces username/password (in the options or the URL); set one or the other"
      )
    }
  }
  const offlineQueue = options.offlineQueue ?? "queue"
  if (offlineQueue !== "queue" && offlineQueue !== "failFast") {
    return yield* fail("offlineQueue", expected("offlineQueue", '"queue" or "failFast"', offlineQueue))
  }
  const connectTimeout = yield* durationMillis("connectTimeout", options.connectTimeout, 10_000, false)
  const commandTimeout = yield* durationMillis("commandTimeout", options.commandTimeout, 5_000, true)
  const reconnectBaseDelay = yield* durationMillis("reconnect.baseDelay", options.reconnect?.baseDelay, 50, false)
  const reconnectMaxDelay = yield* durationMillis("reconnect.maxDelay", options.reconnect?.maxDelay, 2_000, false)
  if (reconnectMaxDelay < reconnectBaseDelay) {
    return yield* fail(
      "reconnect.maxDelay",
      `reconnect.maxDelay (${reconnectMaxDelay} ms) must be >= reconnect.baseDelay (${reconnectBaseDelay} ms)`
    )
  }
  const offlineTimeout = yield* durationMillis("offlineTimeout", options.offlineTimeout, 5_000, true)
  const closeTimeout = yield* durationMillis("closeTimeout", options.closeTimeout, 5_000, false)
  const stallTimeout = yield* durationMillis("stallTimeout", options.stallTimeout, Number.POSITIVE_INFINITY, true)
  if (stallTimeout !== Number.POSITIVE_INFINITY && commandTimeout >= stallTimeout) {
    return yield* fail(
      "stallTimeout",
      `commandTimeout (${commandTimeout} ms) must be < stallTimeout (${stallTimeout} ms), or a slow command would tear down the shared connection; raise stallTimeout or lower commandTimeout`
    )
  }
  const deadPeerTimeout = yield* durationMillis(
    "deadPeerTimeout",
    options.deadPeerTimeout,
    commandTimeout === Number.POSITIVE_INFINITY ? 10_000 : Math.max(2 * commandTimeout, 10_000),
    true
  )
  const window = yield* positiveInteger("window", options.window, DEFAULT_WINDOW)
  const holdWritesAbove = options.holdWritesAbove ?? Number.POSITIVE_INFINITY
  if (
    holdWritesAbove !== Number.POSITIVE_INFINITY &&
    (typeof holdWritesAbove !== "number" || !Number.isSafeInteger(holdWritesAbove) || holdWritesAbove < 0)
  ) {
    return yield* fail("holdWritesAbove", expected("holdWritesAbove", "an integer >= 0", holdWritesAbove))
  }
  const maxReplyBytes = yield* positiveInteger("maxReplyBytes", options.maxReplyBytes, 512 * 1024 * 1024)
  const maxLineLength = yield* positiveInteger("maxLineLength", options.maxLineLength, 64 * 1024)
  const address =
    path !== undefined ? { _tag: "Unix" as const, path } : { _tag: "Tcp" as const, host, port: port as number }
  const target = address._tag === "Unix" ? `unix:${address.path}/${database}` : `${host}:${port}/${database}`
  const resolved: ResolvedOptions = {
    address,
    tls,
    username,
    password,
    credentials:
      options.credentials === undefined
        ? undefined
        : credentialSource(options.credentials, reconnectBaseDelay, reconnectMaxDelay),
    database,
    protocol,
    clientName: options.clientName,
    connectTimeout,
    commandTimeout,
    offlineQueue,
    offlineTimeout,
    reconnectBaseDelay,
    reconnectMaxDelay,
    closeTimeout,
    stallTimeout,
    deadPeerTimeout,
    window,
    holdWritesAbove,
    maxReplyBytes,
    maxLineLength,
    target,
    metrics: options.metrics === true,
    report: new ConnectReport()
  }
  return resolved
})
