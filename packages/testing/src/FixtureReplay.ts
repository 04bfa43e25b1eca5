/**
 * Replays recorded FalkorDB exchanges (the corpus in `shared/fixtures/<version>/*.json`)
 * through a `RespTestServer`: a client under test sends its requests over a real socket
 * and gets back the exact bytes a real server sent.
 *
 * Matching follows the corpus README: a request matches an exchange when its argument
 * list is identical (`JSON.stringify` of the strings, no case folding, no trimming).
 * Replies of one key are served in recorded order and the last one repeats once the queue
 * is exhausted. Requests the corpus lacks fall through to the server's handshake defaults
 * and then to `-ERR unscripted command …`.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as RespTestServer from "./RespTestServer.ts"

/**
 * One recorded request and its reply.
 *
 * @since 0.1.0
 * @category models
 */
export const Exchange = Schema.Struct({
  phase: Schema.String,
  pass: Schema.String,
  request: Schema.Array(Schema.String),
  reply_base64: Schema.String,
  reply_text: Schema.String,
  schema_refresh: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Exchange = typeof Exchange.Type

/**
 * A fixture file.
 *
 * @since 0.1.0
 * @category models
 */
export const Fixture = Schema.Struct({
  scenario: Schema.String,
  description: Schema.String,
  server: Schema.String,
  protocol: Schema.Literals([2, 3]),
  graph: Schema.String,
  exchanges: Schema.Array(Exchange)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Fixture = typeof Fixture.Type

/**
 * @since 0.1.0
 * @category errors
 */
export class FixtureError extends Data.TaggedError("FixtureError")<{
  readonly reason: "DirectoryNotFound" | "ReadFailed" | "InvalidFixture"
  readonly message: string
  readonly path: string
  readonly cause?: unknown
}> {
  get hint(): string {
    switch (this.reason) {
      case "DirectoryNotFound":
        return "set FIXTURES_DIR to the shared fixtures folder, or keep shared/ beside the checkout"
      case "ReadFailed":
        return "check the version folder and scenario name (e.g. falkordb-4.4.0/values-all-types)"
      case "InvalidFixture":
        return "the file is not in the corpus format described by the fixtures README"
      default: {
        const unhandled: never = this.reason
        return unhandled
      }
    }
  }
}

/**
 * Where the shared fixtures live: `FIXTURES_DIR` when set, otherwise `shared/fixtures`
 * beside the checkout (the folder above the workspace root that holds
 * `pnpm-workspace.yaml`), searched upwards from `from` (default: this module's folder).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fixturesDir = (
  options: { readonly env?: Record<string, string | undefined>; readonly from?: string } = {}
): Effect.Effect<string, FixtureError> =>
  Effect.suspend(() => {
    const explicit = (options.env ?? process.env).FIXTURES_DIR
    if (explicit !== undefined && explicit !== "") {
      return Fs.existsSync(explicit)
        ? Effect.succeed(Path.resolve(explicit))
        : Effect.fail(
            new FixtureError({
              reason: "DirectoryNotFound",
              message: `FIXTURES_DIR is ${explicit}, which does not exist`,
              path: explicit
            })
          )
    }
    const start = options.from ?? Path.dirname(Url.fileURLToPath(import.meta.url))
    const tried: Array<string> = []
    for (let dir = Path.resolve(start); ; dir = Path.dirname(dir)) {
      if (Fs.existsSync(Path.join(dir, "pnpm-workspace.yaml"))) {
        const candidate = Path.join(Path.dirname(dir), "shared", "fixtures")
        if (Fs.existsSync(candidate)) return Effect.succeed(candidate)
        tried.push(candidate)
      }
      if (Path.dirname(dir) === dir) break
    }
    return Effect.fail(
      new FixtureError({
        reason: "DirectoryNotFound",
        message: `no shared fixtures folder found (tried ${tried.length > 0 ? tried.join(", ") : `upwards from ${start}`})`,
        path: start
      })
    )
  })

/**
 * Reads and validates one fixture file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = Effect.fn("FixtureReplay.load")(function* (path: string) {
  const text = yield* Effect.try({
    try: () => Fs.readFileSync(path, "utf8"),
    catch: (cause) => new FixtureError({ reason: "ReadFailed", message: `cannot read ${path}`, path, cause })
  })
  const json = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (cause) => new FixtureError({ reason: "InvalidFixture", message: `${path} is not JSON`, path, cause })
  })
  return yield* Schema.decodeUnknownEffect(Fixture)(json).pipe(
    Effect.mapError(
      (cause) => new FixtureError({ reason: "InvalidFixture", message: `${path}: ${cause.message}`, path, cause })
    )
  )
})

/**
 * The folder of one version's recordings that this repository keeps itself
 * (`fixtures/<version>` in the workspace root, e.g. `fixtures/falkordb-4.16.3`, recorded from
 * the server the tests run on), or `undefined` when it has none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const repositoryVersionDir = (version: string, from?: string): string | undefined => {
  for (let dir = Path.resolve(from ?? Path.dirname(Url.fileURLToPath(import.meta.url))); ; dir = Path.dirname(dir)) {
    if (Fs.existsSync(Path.join(dir, "pnpm-workspace.yaml"))) {
      const candidate = Path.join(dir, "fixtures", version)
      return Fs.existsSync(candidate) ? candidate : undefined
    }
    if (Path.dirname(dir) === dir) return undefined
  }
}

/**
 * Loads `<version folder>/<scenario>.json`, e.g. `loadScenario("falkordb-4.4.0", "nodes")`:
 * from the repository's own `fixtures/<version>` when it has that version, otherwise from
 * `<fixturesDir>/<version>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadScenario = Effect.fn("FixtureReplay.loadScenario")(function* (version: string, scenario: string) {
  const dir = repositoryVersionDir(version) ?? Path.join(yield* fixturesDir(), version)
  return yield* load(Path.join(dir, `${scenario}.json`))
})

/**
 * Which recorded exchanges a replay serves. `"compact"` keeps the compact pass (whose
 * schema-refresh exchanges include the verbose procedure calls), `"verbose"` the verbose
 * pass, `"all"` both, in recorded order.
 *
 * @since 0.1.0
 * @category models
 */
export type Pass = "all" | "compact" | "verbose"

/**
 * A replay: a handler for `RespTestServer` plus counters to check what was served.
 *
 * @since 0.1.0
 * @category models
 */
export interface Replay {
  readonly handler: RespTestServer.Handler
  /** How many requests were answered from the recordings. */
  readonly served: () => number
  /** Recorded requests never asked for, in recorded order (one entry per distinct request). */
  readonly unused: () => ReadonlyArray<ReadonlyArray<string>>
}

interface Entry {
  readonly request: ReadonlyArray<string>
  readonly replies: Array<Uint8Array>
  next: number
}

/**
 * Builds a replay from one or more fixtures (keys of later fixtures append to the queues
 * of earlier ones).
 *
 * @since 0.1.0
 * @category constructors
 */
export const replay = (
  fixtures: Fixture | ReadonlyArray<Fixture>,
  options: { readonly pass?: Pass | undefined } = {}
): Replay => {
  const pass = options.pass ?? "all"
  const entries = new Map<string, Entry>()
  for (const fixture of Array.isArray(fixtures) ? (fixtures as ReadonlyArray<Fixture>) : [fixtures as Fixture]) {
    for (const exchange of fixture.exchanges) {
      if (pass !== "all" && exchange.pass !== pass) continue
      const key = JSON.stringify(exchange.request)
      let entry = entries.get(key)
      if (entry === undefined) {
        entry = { request: exchange.request, replies: [], next: 0 }
        entries.set(key, entry)
      }
      entry.replies.push(Buffer.from(exchange.reply_base64, "base64"))
    }
  }
  let served = 0
  const handler: RespTestServer.Handler = (request) => {
    const entry = entries.get(JSON.stringify(request.command))
    if (entry === undefined) return undefined
    const index = Math.min(entry.next, entry.replies.length - 1)
    entry.next++
    served++
    return RespTestServer.raw(entry.replies[index]!)
  }
  return {
    handler,
    served: () => served,
    unused: () => [...entries.values()].filter((e) => e.next === 0).map((e) => e.request)
  }
}

/**
 * Starts a `RespTestServer` answering from the fixtures, for the life of the scope.
 * Handshake commands the recordings lack get the server's defaults (a `HELLO 3` that was
 * recorded, as in `resp3.json`, is served from the recording).
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  fixtures: Fixture | ReadonlyArray<Fixture>,
  options: { readonly pass?: Pass | undefined } = {}
): Effect.Effect<
  RespTestServer.Server & { readonly replay: Replay },
  RespTestServer.RespTestServerError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const r = replay(fixtures, options)
    const server = yield* RespTestServer.make({ handler: r.handler })
    return { ...server, replay: r }
  })

/**
 * A `RespTestServer` layer that replays `<version>/<scenario>.json` files.
 *
 * @example
 * ```ts
 * import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
 * import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
 * import { Effect } from "effect"
 *
 * // A loopback server that answers exactly the recorded FalkorDB 4.18.11 exchanges of a scenario.
 * const program = Effect.gen(function* () {
 *   const server = yield* RespTestServer.RespTestServer
 *   return server.url // connect the client under test here
 * }).pipe(Effect.provide(FixtureReplay.layer("falkordb-4.18.11", ["nodes"])))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  version: string,
  scenarios: ReadonlyArray<string>,
  options: { readonly pass?: Pass | undefined } = {}
): Layer.Layer<RespTestServer.RespTestServer, FixtureError | RespTestServer.RespTestServerError> =>
  Layer.effect(
    RespTestServer.RespTestServer,
    Effect.gen(function* () {
      const fixtures = yield* Effect.forEach(scenarios, (scenario) => loadScenario(version, scenario))
      return yield* serve(fixtures, options)
    })
  )
