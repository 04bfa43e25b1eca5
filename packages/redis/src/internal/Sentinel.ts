/**
 * Sentinel and replicas: `Locator`s that tell engines where the primary (or a replica) is on
 * every (re)connect, the `+switch-master` watcher that moves every engine after a failover,
 * the read-preference router over a primary client and a replica client, the
 * `redis+sentinel://` URL and the sentinel options of a layer turned into that topology.
 *
 * @internal
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { type Command, encodeCommands } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, MapReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import type * as Net from "node:net"
import * as Folded from "./Folded.ts"
import * as Streamed from "./Streamed.ts"
import * as CommandKeys from "../CommandKeys.ts"
import type { LayerOptions, ReadPreference, RedisConnection, SentinelConfig } from "../RedisConnection.ts"
import { makeService } from "./MakeService.ts"
import { NoSentinel, Offline, RedisError } from "../RedisError.ts"
import * as RedisOptions from "../RedisOptions.ts"
import type { Credentials, CredentialsOption } from "../RedisOptions.ts"
import { configError, parseAddress } from "./OptionChecks.ts"
import { refuseAll } from "./Strategies.ts"
import { makeEngine } from "./Engine.ts"
import { authCommand, openSocket } from "./Socket.ts"
import { Request } from "./Request.ts"
import * as ExecuteAll from "./ExecuteAll.ts"
import { launch } from "./SingleFlight.ts"

type Service = RedisConnection["Service"]

/** A `host:port` address. */
export interface HostPort {
  readonly host: string
  readonly port: number
}

/** What the sentinel side needs. */
export interface SentinelSettings {
  readonly sentinels: ReadonlyArray<HostPort>
  readonly name: string
  readonly username: string | undefined
  readonly password: Redacted.Redacted<string> | undefined
  /** The sentinels' `credentials` provider (instead of `username`/`password`). */
  readonly credentials: CredentialsOption | undefined
  readonly tls: RedisOptions.TlsOptions | undefined
}

const label = (address: HostPort): string => `${address.host}:${address.port}`

/** A set of engines a failover can reset, and a locator over it. */
const locator = (
  role: "master" | "slave",
  locate: Effect.Effect<HostPort, RedisError>
): RedisOptions.Locator & { readonly resetAll: (message: string) => void; readonly anyOnline: () => boolean } => {
  const engines = new Set<RedisOptions.Locatable>()
  let generation = 0
  return {
    role,
    locate,
    get generation() {
      return generation
    },
    register: (engine) => {
      engines.add(engine)
      return () => engines.delete(engine)
    },
    resetAll: (message) => {
      generation++
      for (const engine of engines) engine.reset(message)
    },
    anyOnline: () => {
      for (const engine of engines) if (engine.online) return true
      return false
    }
  }
}

/** Field/value pairs of a `SENTINEL replicas` entry (flat array in RESP2, a map in RESP3). */
const fields = (entry: Reply): Map<string, string> => {
  const flat = entry instanceof MapReply ? entry.flat : Array.isArray(entry) ? (entry as ReadonlyArray<Reply>) : []
  const out = new Map<string, string>()
  for (let i = 0; i + 1 < flat.length; i += 2) {
    out.set(replyToString(flat[i]!) ?? "", replyToString(flat[i + 1]!) ?? "")
  }
  return out
}

/** Healthy replicas in a `SENTINEL replicas` reply: not down, not disconnected, link to the primary up. */
export const healthyReplicas = (reply: Reply): Array<HostPort> => {
  if (!Array.isArray(reply)) return []
  const out: Array<HostPort> = []
  for (const entry of reply as ReadonlyArray<Reply>) {
    const f = fields(entry)
    const flags = (f.get("flags") ?? "").split(",")
    if (flags.some((flag) => flag === "s_down" || flag === "o_down" || flag === "disconnected")) continue
    if (f.get("master-link-status") !== "ok") continue
    const port = Number(f.get("port"))
    const host = f.get("ip")
    if (host === undefined || !Number.isInteger(port)) continue
    out.push({ host, port })
  }
  return out
}

/** The sentinels' own options as the user named them: `tls.caFile` is `sentinel.sentinelTls.caFile`. */
const sentinelFields: Record<string, string> = {
  tls: "sentinelTls",
  username: "sentinelUsername",
  password: "sentinelPassword",
  credentials: "sentinelCredentials"
}

const asSentinelField = (error: RedisError): RedisError => {
  if (error.reason._tag !== "Config") return error
  const { field, message } = error.reason
  const [head = "", ...rest] = field.split(".")
  const renamed = sentinelFields[head]
  if (renamed === undefined) return error
  const named = [renamed, ...rest].join(".")
  return configError(`sentinel.${named}`, message.replaceAll(field, named))
}

/**
 * The sentinel side of a client: locators for the primary and for replicas, and the
 * `+switch-master` watcher (forked in the caller's scope).
 */
export const makeSentinelTopology = Effect.fnUntraced(function* (
  settings: SentinelSettings,
  data: RedisOptions.ResolvedOptions
) {
  // One short-lived engine per question: AUTH with the sentinel's own credentials, no database.
  const sentinelOptions: Array<RedisOptions.ResolvedOptions> = []
  for (const sentinel of settings.sentinels) {
    sentinelOptions.push(
      yield* RedisOptions.resolve({
        host: sentinel.host,
        port: sentinel.port,
        username: settings.username,
        password: settings.password,
        credentials: settings.credentials,
        tls: settings.tls ?? false,
        connectTimeout: Math.min(data.connectTimeout, 2_000),
        commandTimeout: Math.min(data.connectTimeout, 2_000),
        offlineQueue: "failFast",
        closeTimeout: 100
      }).pipe(Effect.mapError(asSentinelField))
    )
  }
  // A credentials Stream runs while the client lives, not only while a question is asked.
  const credentials = sentinelOptions[0]?.credentials
  if (credentials !== undefined) yield* credentials.attach({ reauthenticate: () => Effect.void })
  // The sentinel that answered last is asked first next time.
  let preferred = 0
  const ask = <A>(command: Command, interpret: (reply: Reply) => A | string): Effect.Effect<A, RedisError> =>
    Effect.gen(function* () {
      const tried: Array<string> = []
      for (let i = 0; i < sentinelOptions.length; i++) {
        const index = (preferred + i) % sentinelOptions.length
        const options = sentinelOptions[index]!
        const where = label(settings.sentinels[index]!)
        const exit = yield* Effect.exit(
          Effect.scoped(
            Effect.flatMap(makeEngine(options), (engine) =>
              engine.run(new Request<Reply>([command], false, 1, options.commandTimeout))
            )
          )
        )
        if (Exit.isFailure(exit)) {
          const error = Cause.findErrorOption(exit.cause)
          tried.push(`${where}: ${Option.isSome(error) ? error.value.reason.message : "interrupted"}`)
          continue
        }
        const answer = interpret(exit.value)
        if (typeof answer === "string") {
          tried.push(`${where}: ${answer}`)
          continue
        }
        preferred = index
        return answer
      }
      return yield* new RedisError({
        reason: new NoSentinel({
          name: settings.name,
          tried,
          message: `no sentinel named a usable server for "${settings.name}"; tried ${tried.join("; ")}`
        })
      })
    })

  // Bumped when the sentinels name another primary than before: what the client cached of the
  // old primary's state (the graph schema cache) is re-validated.
  let epoch = 0
  let current: string | undefined
  const primary = locator(
    "master",
    ask(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", settings.name], (reply) => {
      if (!Array.isArray(reply) || reply.length !== 2) return `does not monitor "${settings.name}"`
      const host = replyToString(reply[0] as Reply)
      const port = Number(replyToString(reply[1] as Reply))
      if (host === undefined || !Number.isInteger(port)) return `answered an address that cannot be read`
      const address = { host, port }
      if (current !== undefined && current !== label(address)) epoch++
      current = label(address)
      return address
    })
  )
  // Replica engines spread over the healthy replicas, one after the other.
  let turn = 0
  const replica = locator(
    "slave",
    ask(["SENTINEL", "REPLICAS", settings.name], (reply) => {
      if (reply instanceof ErrorReply) return reply.message
      const healthy = healthyReplicas(reply)
      if (healthy.length === 0) return `knows no healthy replica of "${settings.name}"`
      return healthy[turn++ % healthy.length]!
    })
  )

  const onSwitch = (channel: string, text: string) => {
    const parts = text.split(" ")
    let message: string
    if (channel === "+switch-master") {
      if (parts[0] !== settings.name) return
      message = `failover of "${settings.name}": the primary moved from ${parts[1]}:${parts[2]} to ${parts[3]}:${parts[4]}; the connection was moved and the commands it owed may have run`
    } else {
      // "+failover-state-reconf-slaves master <name> <ip> <port>": the replica is promoted and
      // the sentinels already name it; the old primary still takes writes (they will be lost).
      if (parts[0] !== "master" || parts[1] !== settings.name) return
      message = `failover of "${settings.name}": a replica was promoted; the connection was moved and the commands it owed may have run`
    }
    primary.resetAll(message)
    // The promoted server was a replica, and the old primary will become one.
    replica.resetAll(message)
  }
  yield* Effect.forkScoped(watch(sentinelOptions, onSwitch))
  return { primary, replica, epoch: () => epoch }
})

/**
 * Subscribes to `+switch-master` (and `+failover-state-reconf-slaves`, the earlier sign of a
 * promotion) on one sentinel after the other, for as long as the scope
 * lives. A missed event is covered by the engines themselves: a lost connection re-asks the
 * sentinels, `ROLE` is checked on every connect and `-READONLY` on the primary reconnects.
 */
const watch = (
  sentinels: ReadonlyArray<RedisOptions.ResolvedOptions>,
  onSwitch: (channel: string, text: string) => void
): Effect.Effect<never> =>
  Effect.gen(function* () {
    for (let i = 0; ; i++) {
      const subscribed = yield* subscribeOnce(sentinels[i % sentinels.length]!, onSwitch)
      // A round of failures backs off; a subscription that held moves on at once.
      if (!subscribed && (i + 1) % sentinels.length === 0) yield* Effect.sleep(500)
    }
  })

/**
 * One subscription over the sentinel's socket (TLS as configured, its files read), after `AUTH`
 * with the sentinels' credentials (a `credentials` provider asked now); succeeds with whether
 * it was confirmed, when its connection ends.
 */
const subscribeOnce = (
  options: RedisOptions.ResolvedOptions,
  onSwitch: (channel: string, text: string) => void
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const credentials: Credentials | undefined =
      options.credentials !== undefined
        ? yield* options.credentials.get(options.connectTimeout, options.connectTimeout)
        : options.password === undefined
          ? undefined
          : { username: options.username, password: options.password }
    const socket = yield* openSocket(options)
    return yield* listen(socket, credentials, onSwitch)
  }).pipe(Effect.orElseSucceed(() => false))

const listen = (
  socket: Net.Socket,
  credentials: Credentials | undefined,
  onSwitch: (channel: string, text: string) => void
): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    let confirmed = false
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(confirmed))
    }
    // A sentinel that does not confirm the subscription in time is skipped.
    const timer = setTimeout(() => {
      if (!confirmed) done()
    }, 2_000)
    const decoder = new Decoder((reply) => {
      if (reply instanceof ErrorReply) return done()
      if (!Array.isArray(reply)) return
      const kind = replyToString(reply[0] as Reply)
      if (kind === "subscribe") confirmed = true
      else if (kind === "message") {
        onSwitch(replyToString(reply[1] as Reply) ?? "", replyToString(reply[2] as Reply) ?? "")
      }
    })
    const commands: Array<Command> = credentials === undefined ? [] : [authCommand(credentials)]
    commands.push(["SUBSCRIBE", "+switch-master", "+failover-state-reconf-slaves"])
    socket.on("data", (chunk: Buffer) => {
      if (decoder.feed(chunk) !== undefined) done()
    })
    socket.on("error", () => {})
    socket.on("close", done)
    socket.write(encodeCommands(commands))
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })

/** Configured replicas, taken in turn by the engines of the replica client. */
export const staticReplicas = (replicas: ReadonlyArray<HostPort>) => {
  let turn = 0
  return locator(
    "slave",
    Effect.sync(() => replicas[turn++ % replicas.length]!)
  )
}

/**
 * The read-preference router: writes always go to the primary; read-only commands (by the
 * command table, or marked `readOnly`) go where the call's or the client's preference says.
 * The replica client is built on first use (and again after a failed build), in the client's
 * scope; `preferReplica` falls back to the primary while no replica connection is up.
 */
export const makeReadRouter = Effect.fnUntraced(function* (
  primary: Service,
  buildReplica: Effect.Effect<Service, RedisError, Scope.Scope>,
  replicaOnline: () => boolean,
  preference: ReadPreference
) {
  const scope = yield* Effect.scope
  let replica: Service | undefined
  let building: Deferred.Deferred<Service, RedisError> | undefined
  // After a failed build, reads do not wait for another attempt for a second.
  let failure: { readonly at: number; readonly error: RedisError } | undefined
  const replicaSide: Effect.Effect<Service, RedisError> = Effect.suspend(() => {
    if (replica !== undefined) return Effect.succeed(replica)
    if (building !== undefined) return Deferred.await(building)
    if (failure !== undefined && performance.now() - failure.at < 1_000) return Effect.fail(failure.error)
    const deferred = Deferred.makeUnsafe<Service, RedisError>()
    building = deferred
    return launch(scope, Scope.provide(buildReplica, scope), deferred, (exit) => {
      building = undefined
      if (Exit.isSuccess(exit)) replica = exit.value
      else {
        const error = Cause.findErrorOption(exit.cause)
        failure = {
          at: performance.now(),
          error: Option.isSome(error) ? error.value : noReplica("building the replica client was interrupted")
        }
      }
    })
  })
  // Built at once when the client reads from replicas by default; a failure shows at the first read.
  if (preference !== "primary") yield* Effect.ignore(replicaSide)

  const isRead = (command: Command, readOnly: boolean | undefined) =>
    readOnly === true || CommandKeys.isReadOnly(command)
  const target = (reads: boolean, asked: ReadPreference | undefined): Effect.Effect<Service, RedisError> => {
    const wanted = asked ?? preference
    if (!reads || wanted === "primary") return Effect.succeed(primary)
    if (wanted === "replica") return replicaSide
    if (replica !== undefined && replicaOnline()) return Effect.succeed(replica)
    // preferReplica: start a build in the background if none exists; serve from the primary now.
    if (replica === undefined) return Effect.orElseSucceed(replicaSide, () => primary)
    return Effect.succeed(primary)
  }
  const service: Service = makeService({
    info: primary.info,
    execute: (command, options) =>
      Effect.flatMap(target(isRead(command, options?.readOnly), options?.readPreference), (s) =>
        s.execute(command, options)
      ),
    submit: (command, options) =>
      Effect.flatMap(target(isRead(command, options?.readOnly), options?.readPreference), (s) =>
        s.submit(command, options)
      ),
    pipeline: (commands, options) =>
      Effect.flatMap(
        target(commands.length > 0 && commands.every((c) => isRead(c, options?.readOnly)), options?.readPreference),
        (s) => s.pipeline(commands, options)
      ),
    executeStreamed: (command, options) =>
      Stream.unwrap(
        Effect.map(target(isRead(command, options?.readOnly), options?.readPreference), (s) =>
          Streamed.executeStreamed(s, command, options)
        )
      ),
    executeFolded: (command, fold, options) =>
      Effect.flatMap(target(isRead(command, options?.readOnly), options?.readPreference), (s) =>
        Folded.executeFolded(s, command, fold, options)
      ),
    // Reads and writes split between the replica and the primary when asked, each side in one call.
    executeAll: ExecuteAll.fromResults((commands, options) =>
      Effect.suspend(() => {
        const refused = refuseAll(commands, options)
        if (refused !== undefined) return Effect.fail(refused)
        const toPrimary = (options?.readPreference ?? preference) === "primary"
        const inResults = { ...options, mode: "result" as const }
        return ExecuteAll.scatter(
          commands,
          (command) => !toPrimary && isRead(command, options?.readOnly),
          (reads, group) =>
            Effect.flatMap(target(reads, options?.readPreference), (s) => s.executeAll(group, inResults))
        )
      })
    ),
    withExclusive: primary.withExclusive
  })
  return service
})

/** An `Offline` error for a replica read when none is configured or known. */
export const noReplica = (message: string): RedisError => new RedisError({ reason: new Offline({ message }) })

/**
 * `redis+sentinel://[user:password@]host:port[,host:port…]/name[/db][?sentinelPassword=…&sentinelUsername=…]`
 * (`rediss+sentinel://` for TLS to the data servers). The credentials in the authority are the
 * data servers'; the sentinels' go in the query.
 */
export const parseSentinelUrl = (url: string) =>
  Effect.gen(function* () {
    const hidden = url.replace(/\/\/([^:@/]*):([^@/]*)@/, "//$1:<redacted>@")
    const match = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/?]+)\/([^/?]+)(?:\/(\d+))?\/?(?:\?(.*))?$/i.exec(url)
    if (match === null) {
      return yield* configError(
        "url",
        `"${hidden}" is not a sentinel URL; expected redis+sentinel://host:port,host:port/name[/db]`
      )
    }
    const [, scheme, auth, hosts, name, db, query] = match
    const params = new URLSearchParams(query ?? "")
    const data: { -readonly [K in "username" | "password" | "database" | "tls"]?: LayerOptions[K] } = {}
    if (auth !== undefined && auth !== "") {
      const colon = auth.indexOf(":")
      const user = decodeURIComponent(colon < 0 ? auth : auth.slice(0, colon))
      if (colon >= 0) data.password = decodeURIComponent(auth.slice(colon + 1))
      if (user !== "") data.username = user
    }
    if (db !== undefined) data.database = Number(db)
    if (scheme!.toLowerCase() === "rediss") data.tls = true
    const sentinel: { -readonly [K in keyof SentinelConfig]: SentinelConfig[K] } = {
      sentinels: hosts!.split(","),
      name: decodeURIComponent(name!)
    }
    const sentinelPassword = params.get("sentinelPassword")
    if (sentinelPassword !== null) sentinel.sentinelPassword = sentinelPassword
    const sentinelUsername = params.get("sentinelUsername")
    if (sentinelUsername !== null) sentinel.sentinelUsername = sentinelUsername
    return { data, sentinel }
  })

/** A `redis+sentinel://` URL turned into the data options and `sentinel`; other options as they are. */
export const expandSentinelUrl = (options: LayerOptions): Effect.Effect<LayerOptions, RedisError> =>
  options.url === undefined || !/^rediss?\+sentinel:/i.test(options.url)
    ? Effect.succeed(options)
    : Effect.map(parseSentinelUrl(options.url), (parsed) => {
        const { url: _url, ...rest } = options
        return { ...parsed.data, ...rest, sentinel: { ...parsed.sentinel, ...options.sentinel } }
      })

/** The sentinel side of a client: the sentinels checked and a topology watching them (in the scope). */
export const sentinelTopology = Effect.fnUntraced(function* (
  config: SentinelConfig,
  options: LayerOptions,
  base: RedisOptions.ResolvedOptions
) {
  if (options.host !== undefined || options.port !== undefined || options.path !== undefined) {
    return yield* configError(
      "sentinel",
      "host, port and path do not apply with a sentinel (it names the primary); drop them"
    )
  }
  if (typeof config.name !== "string" || config.name === "") {
    return yield* configError("sentinel.name", "the monitored name is missing (sentinel monitor <name> …)")
  }
  if (!Array.isArray(config.sentinels) || config.sentinels.length === 0) {
    return yield* configError("sentinel.sentinels", "list at least one sentinel address (host:port)")
  }
  const sentinels: Array<HostPort> = []
  for (const entry of config.sentinels) sentinels.push(yield* parseAddress("sentinel.sentinels", entry, 26379))
  if (
    config.sentinelCredentials !== undefined &&
    (config.sentinelPassword !== undefined || config.sentinelUsername !== undefined)
  ) {
    return yield* configError(
      "sentinel.sentinelCredentials",
      "sentinelCredentials replaces sentinelUsername/sentinelPassword (in the options or the URL); set one or the other"
    )
  }
  const sentinelTls = config.sentinelTls ?? false
  const topology = yield* makeSentinelTopology(
    {
      sentinels,
      name: config.name,
      credentials: config.sentinelCredentials,
      username: config.sentinelUsername,
      password:
        config.sentinelPassword === undefined
          ? undefined
          : Redacted.isRedacted(config.sentinelPassword)
            ? config.sentinelPassword
            : Redacted.make(config.sentinelPassword),
      tls: sentinelTls === false ? undefined : sentinelTls === true ? {} : sentinelTls
    },
    base
  )
  return topology
})

/** A client over a primary (fixed, or found by the sentinels) and its replicas, with the read router. */
export const makeReplicated = Effect.fnUntraced(function* (
  options: LayerOptions,
  adjust: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions,
  build: (
    adjust: (resolved: RedisOptions.ResolvedOptions) => RedisOptions.ResolvedOptions
  ) => Effect.Effect<Service, RedisError, Scope.Scope>
) {
  const base = yield* RedisOptions.resolve(options)
  const configured: Array<HostPort> = []
  for (const replica of options.replicas ?? []) configured.push(yield* parseAddress("replicas", replica, 6379))
  if (options.replicas !== undefined && configured.length === 0) {
    return yield* configError("replicas", "replicas is empty; list at least one, or drop it")
  }
  const config = options.sentinel
  let primary: Service
  let replicaLocator: RedisOptions.Locator & { readonly anyOnline: () => boolean }
  let target = base.target
  let primaryEpoch: (() => number) | undefined
  if (config !== undefined) {
    const topology = yield* sentinelTopology(config, options, base)
    // The stable name of the server (caches are keyed by it) is the monitored name, not an address.
    target = `sentinel:${config.name}/${base.database}`
    const primaryTarget = target
    primary = yield* build((resolved) => ({
      ...adjust(resolved),
      target: primaryTarget,
      locator: topology.primary
    }))
    replicaLocator = configured.length > 0 ? staticReplicas(configured) : topology.replica
    primaryEpoch = topology.epoch
  } else {
    primary = yield* build(adjust)
    replicaLocator = staticReplicas(configured)
  }
  const replicaTarget = `${target} (replica)`
  const buildReplica = build((resolved) => ({
    ...adjust(resolved),
    target: replicaTarget,
    locator: replicaLocator
  }))
  return yield* makeReadRouter(
    makeService({ ...primary, info: { ...primary.info, target, primaryEpoch } }),
    buildReplica,
    replicaLocator.anyOnline,
    options.readPreference ?? "primary"
  )
})
