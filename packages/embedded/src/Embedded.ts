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
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/**
 * @since 0.1.0
 * @category models
 */
export interface EmbeddedOptions {
  readonly binary?: string
  readonly port?: number
  readonly unixSocket?: boolean
  readonly module?: string
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
 * @since 0.1.0
 * @category errors
 */
export class EmbeddedError extends Data.TaggedError("EmbeddedError")<{
  readonly reason: "BinaryNotFound" | "VersionTooOld" | "ModuleLoadFailed" | "StartFailed" | "StartTimeout"
  readonly message: string
  readonly hint: string
}> {}

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
    readonly version: string
    readonly moduleLoaded: boolean
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
  Effect.callback<string, EmbeddedError>((resume) => {
    ChildProcess.execFile(binary, ["--version"], { timeout: 5000 }, (error, stdout) => {
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") {
        return resume(
          Effect.fail(
            new EmbeddedError({
              reason: "BinaryNotFound",
              message: `redis-server binary not found: ${binary}`,
              hint: "apt-get install redis-server or set binary / REDIS_SERVER"
            })
          )
        )
      }
      const match = /v=(\d+\.\d+\.\d+)/.exec(String(stdout))
      if (error || !match) {
        return resume(
          Effect.fail(
            new EmbeddedError({
              reason: "StartFailed",
              message: `could not read the version of ${binary}: ${error?.message ?? String(stdout).trim()}`,
              hint: "check that binary points at a working redis-server"
            })
          )
        )
      }
      resume(Effect.succeed(match[1]!))
    })
  })

const freePort = Effect.callback<number, EmbeddedError>((resume) => {
  const server = Net.createServer()
  server.once("error", (e) =>
    resume(Effect.fail(new EmbeddedError({ reason: "StartFailed", message: e.message, hint: "no free port" })))
  )
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

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
  const binary = options.binary ?? process.env.REDIS_SERVER ?? "redis-server"
  const module = options.module ?? process.env.FALKORDB_MODULE
  const minimum = options.minimumVersion ?? "6.2.0"
  const startTimeout = options.startTimeout ?? "10 seconds"
  const version = yield* preflight(binary)
  if (compareVersions(version, minimum) < 0) {
    return yield* new EmbeddedError({
      reason: "VersionTooOld",
      message: `redis-server ${version} is older than the minimum ${minimum}`,
      hint: "install a newer redis-server or set binary / REDIS_SERVER"
    })
  }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-"))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  const port = options.port && options.port > 0 ? options.port : yield* freePort
  const unixSocket = options.unixSocket ? Path.join(dir, "redis.sock") : undefined
  const configFile = options.config === undefined ? undefined : Path.join(dir, "redis.conf")
  if (configFile !== undefined) Fs.writeFileSync(configFile, options.config!)
  if (options.sentinel === true && configFile === undefined) {
    return yield* new EmbeddedError({
      reason: "StartFailed",
      message: "a sentinel needs a config file it can rewrite",
      hint: "pass config: 'sentinel monitor <name> <host> <port> <quorum>' with sentinel: true"
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
  if (module) args.push("--loadmodule", module)
  if (options.password) args.push("--requirepass", Redacted.value(options.password))
  if (options.cluster === true) {
    let busPort = yield* freePort
    while (busPort === port) busPort = yield* freePort
    args.push("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", String(busPort))
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
          const moduleFailed = module !== undefined && /module|loadmodule/i.test(output)
          return yield* new EmbeddedError({
            reason: moduleFailed ? "ModuleLoadFailed" : "StartFailed",
            message: `redis-server exited early (code ${proc.exitCode}): ${output.trim().split("\n").slice(-5).join("\n")}`,
            hint: moduleFailed
              ? "check the module path (module / FALKORDB_MODULE) and that it matches this redis-server"
              : "see the server output in the message; the port may be in use"
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
        reason: "StartTimeout",
        message: `redis-server did not answer PING within ${Duration.format(Duration.fromInputUnsafe(startTimeout))}`,
        hint: "raise startTimeout or check the server output"
      })
    }
  })

  const kill = Effect.suspend(() => (child ? stop(child) : Effect.void))
  yield* Effect.acquireRelease(start, () => kill)

  return EmbeddedServer.of({
    host: "127.0.0.1",
    port,
    unixSocket,
    url: unixSocket && options.port === undefined ? `redis+unix://${unixSocket}` : `redis://127.0.0.1:${port}`,
    version,
    moduleLoaded: module !== undefined,
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
 * // A throw-away redis-server (with the FalkorDB module when FALKORDB_MODULE is set) for a test or tool.
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
