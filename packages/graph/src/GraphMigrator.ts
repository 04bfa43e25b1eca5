/**
 * Versioned migrations for a graph, in the shape of `effect/sql/Migrator`: a loader lists
 * numbered migrations (`<id>_<name>`), {@link run} applies the ones not applied yet, in id
 * order, each once, and returns what it applied.
 *
 * - **Where they are recorded.** A Redis hash, `{<graph>}:migrations` unless `key` says
 *   otherwise: one field per applied migration (the id), its value `{"name","appliedAt"}` as
 *   JSON. It is a plain key, not a graph, so it never shows in `GRAPH.LIST` or in a `MATCH`.
 *   {@link applied} reads it.
 * - **The lock.** A migrator takes `<key>:lock` (`SET NX PX`, a lease renewed while it runs)
 *   before reading the record, so migrators started at once (several instances of a service)
 *   apply each migration exactly once: the others wait for the lock (up to `lockTimeout`),
 *   then find nothing left to do. A migration is recorded only while the lease is still held
 *   (one script checks the lock and writes the record), so a migrator that stalled past its
 *   lease fails with `LockLost` instead of recording over another. On a Redis Cluster the two
 *   keys must share a slot: the default key carries the hash tag `{<graph>}`; give your own
 *   `key` one too.
 * - **Failures.** A failing migration stops the run with the reason `Failed` naming its id and
 *   name (its error as `cause`); it is not recorded, and the migrations before it stay
 *   recorded. FalkorDB has no multi-statement transactions: the statements of a failed
 *   migration that ran before the failure stay applied, so write migrations that can run
 *   again (`MERGE`, `CREATE INDEX` guarded by `ensureIndexes`).
 * - **Bad input fails before anything runs:** an id used twice (`DuplicateId`), a record key
 *   that is not `<id>_<name>` (`InvalidName`), an option out of its domain (`InvalidOption`).
 *   The errors are `MigrationError`s (module `MigrationError`).
 *
 * A migration is Cypher text (one statement), a `cypher` query, a list of those (run one by
 * one), an `Effect`, or a function of the target `Graph` returning an `Effect`. Files loaded by
 * {@link fromGlob} / {@link fromFileSystem} export one as `default`; a `.cypher` file holds
 * statements separated by `;`.
 *
 * Also here: {@link ensureIndexes} and {@link ensureConstraints}, the declarative schema a
 * service needs at start-up (create what is missing, wait until operational, leave what
 * exists).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const migrations = GraphMigrator.fromRecord({
 *   "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)",
 *   "2_seed": ["MERGE (:Person {name: 'Ada'})", "MERGE (:Person {name: 'Alan'})"],
 *   "3_counts": (graph) => graph.query("MATCH (p:Person) SET p.visits = coalesce(p.visits, 0)")
 * })
 *
 * // Applied in order, each once: the ids and names this run applied.
 * const program = GraphMigrator.run({ graph: "social", loader: migrations }).pipe(
 *   Effect.provide(FalkorDB.layer({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { FileSystem } from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { Path } from "effect/Path"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import type * as Constraints from "./Constraints.ts"
import { isQuery, type Query } from "./Cypher.ts"
import { FalkorDB } from "./FalkorDB.ts"
import { type FalkorError, fromRedis } from "./FalkorError.ts"
import type { Graph } from "./Graph.ts"
import * as Indexes from "./Indexes.ts"
import { ScriptError, splitStatements } from "./internal/CypherScript.ts"
import {
  BadState,
  DuplicateId,
  Failed,
  InvalidName,
  InvalidOption,
  isMigrationError,
  LoadFailed,
  Locked,
  LockLost,
  MigrationError,
  type MigrationErrorReason,
  SchemaMismatch
} from "./MigrationError.ts"

const failWith = (reason: MigrationErrorReason) => Effect.fail(new MigrationError({ reason }))

/**
 * One Cypher statement: text, or a `cypher` query with its parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type Statement = string | Query

/**
 * A migration: one statement, statements run in order, an `Effect`, or a function of the
 * target graph returning an `Effect`.
 *
 * @since 0.1.0
 * @category models
 */
export type Migration<R = never> =
  | Statement
  | ReadonlyArray<Statement>
  | Effect.Effect<unknown, unknown, R>
  | ((graph: Graph) => Effect.Effect<unknown, unknown, R>)

/**
 * A module whose `default` export is a migration (what a loader imports from a file).
 *
 * @since 0.1.0
 * @category models
 */
export interface MigrationModule {
  readonly default: unknown
}

/**
 * A migration as a loader lists it: id, name, and how to load it.
 *
 * @since 0.1.0
 * @category models
 */
export type ResolvedMigration<R = never> = readonly [
  id: number,
  name: string,
  load: Effect.Effect<Migration<R> | MigrationModule, MigrationError>
]

/**
 * Lists the migrations, sorted by id. `R` is what the migrations need to run, `RL` what
 * listing them needs.
 *
 * @since 0.1.0
 * @category models
 */
export type Loader<R = never, RL = never> = Effect.Effect<ReadonlyArray<ResolvedMigration<R>>, MigrationError, RL>

/**
 * A migration recorded as applied.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppliedMigration {
  readonly id: number
  readonly name: string
  readonly appliedAt: Date
}

/**
 * Options of {@link run}.
 *
 * @since 0.1.0
 * @category models
 */
export interface MigratorOptions<R = never, RL = never> {
  readonly loader: Loader<R, RL>
  /** The graph Cypher migrations run on (and migration functions receive). */
  readonly graph: string
  /** The Redis hash recording applied migrations. Default `{<graph>}:migrations`. */
  readonly key?: string | undefined
  /** The lock key. Default `<key>:lock`. */
  readonly lockKey?: string | undefined
  /** How long to wait while another migrator holds the lock. Default 5 minutes. */
  readonly lockTimeout?: Duration.Input | undefined
  /** The lock's lease, renewed every third of it while this migrator runs. Default 30 seconds. */
  readonly lockTtl?: Duration.Input | undefined
}

const namePattern = /^(\d+)_(.+)$/

const parseName = (key: string): readonly [number, string] | InvalidName => {
  const match = namePattern.exec(key)
  if (match === null) return new InvalidName({ name: key, detail: "it is not <id>_<name>" })
  const id = Number(match[1])
  if (!Number.isSafeInteger(id) || id < 1) {
    return new InvalidName({ name: key, detail: `the id ${match[1]} is not a positive safe integer` })
  }
  return [id, match[2]!]
}

const byId = (a: ResolvedMigration<unknown>, b: ResolvedMigration<unknown>) => a[0] - b[0]

/**
 * Migrations from a record keyed `<id>_<name>`: `{ "1_people": "CREATE INDEX …" }`. A key that
 * is not `<id>_<name>` fails the run (`InvalidName`) before anything runs.
 *
 * @example
 * ```ts
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { cypher } from "@effect-falkordb/graph/Cypher"
 *
 * const loader = GraphMigrator.fromRecord({
 *   "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)",
 *   "2_admin": cypher`MERGE (:Person {name: ${"admin"}})`
 * })
 * ```
 *
 * @since 0.1.0
 * @category loaders
 */
export const fromRecord = <R = never>(migrations: { readonly [key: string]: Migration<R> }): Loader<R> =>
  Effect.suspend(() => {
    const resolved: Array<ResolvedMigration<R>> = []
    for (const [key, migration] of Object.entries(migrations)) {
      const parsed = parseName(key)
      if (parsed instanceof InvalidName) return failWith(parsed)
      resolved.push([parsed[0], parsed[1], Effect.succeed(migration)])
    }
    return Effect.succeed(resolved.sort(byId))
  })

const filePattern = /^(?:.*\/)?(\d+)_([^/]+?)\.(js|ts|mjs|mts|cypher)$/
const leadingDigit = /^(?:.*\/)?\d[^/]*$/

/**
 * The migrations among file names: `<id>_<name>.<js|ts|mjs|mts|cypher>` are migrations, other
 * names that start with a digit are refused (a `3-seed.ts` is a mistake, not a file to skip),
 * names that do not start with a digit are ignored (`README.md`, helpers).
 */
const filesOf = <A>(
  files: ReadonlyArray<A>,
  nameOf: (file: A) => string,
  load: (
    file: A,
    extension: string,
    id: number,
    name: string
  ) => Effect.Effect<Migration<FalkorDB> | MigrationModule, MigrationError>
): Effect.Effect<ReadonlyArray<ResolvedMigration<FalkorDB>>, MigrationError> =>
  Effect.suspend(() => {
    const resolved: Array<ResolvedMigration<FalkorDB>> = []
    for (const file of files) {
      const fileName = nameOf(file)
      const match = filePattern.exec(fileName)
      if (match === null) {
        if (leadingDigit.test(fileName)) {
          return failWith(
            new InvalidName({ name: fileName, detail: "a migration file is <id>_<name>.<js|ts|mjs|mts|cypher>" })
          )
        }
        continue
      }
      const parsed = parseName(`${match[1]}_${match[2]}`)
      if (parsed instanceof InvalidName) return failWith(new InvalidName({ name: fileName, detail: parsed.detail }))
      resolved.push([parsed[0], parsed[1], load(file, match[3]!, parsed[0], parsed[1])])
    }
    return Effect.succeed(resolved.sort(byId))
  })

const loadFailed = (id: number, name: string, detail: string, cause?: unknown) =>
  new MigrationError({ reason: new LoadFailed({ id, name, detail, cause }) })

const importModule = (id: number, name: string, load: () => Promise<unknown>) =>
  Effect.tryPromise({
    try: load,
    catch: (cause) => loadFailed(id, name, `import failed: ${String(cause)}`, cause)
  }) as Effect.Effect<MigrationModule, MigrationError>

/** The statements of a `.cypher` file's text. */
const cypherFile = (id: number, name: string, text: unknown): Effect.Effect<ReadonlyArray<string>, MigrationError> => {
  if (typeof text !== "string")
    return Effect.fail(loadFailed(id, name, "a .cypher module's default export is not text"))
  try {
    const statements = splitStatements(text)
    return statements.length === 0
      ? Effect.fail(loadFailed(id, name, "the .cypher file holds no statement"))
      : Effect.succeed(statements)
  } catch (e) {
    return e instanceof ScriptError
      ? Effect.fail(loadFailed(id, name, `the .cypher file has an ${e.message}`))
      : Effect.die(e)
  }
}

/**
 * Migrations from a glob record of imports, as `import.meta.glob("./migrations/*")` gives
 * them: `{ "./migrations/1_people.ts": () => import(…) }`. Each module's `default` export is
 * the migration; for `.cypher` files import the text (Vite: `{ query: "?raw" }`), whose
 * statements are split at `;`.
 *
 * @example
 * ```ts
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 *
 * const loader = GraphMigrator.fromGlob({
 *   "./migrations/1_people.ts": () => Promise.resolve({ default: "CREATE INDEX FOR (p:Person) ON (p.name)" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category loaders
 */
export const fromGlob = (migrations: { readonly [path: string]: () => Promise<unknown> }): Loader<FalkorDB> =>
  filesOf(
    Object.keys(migrations),
    (path) => path,
    (path, extension, id, name) => {
      const imported = importModule(id, name, migrations[path]!)
      return extension === "cypher" ? Effect.flatMap(imported, (m) => cypherFile(id, name, defaultOf(m))) : imported
    }
  )

/**
 * Migrations from the files of a directory, read through Effect's `FileSystem` and `Path`
 * (provide the platform's, e.g. `NodeServices.layer`): `<id>_<name>.<js|ts|mjs|mts>` files are
 * imported (their `default` export is the migration), `<id>_<name>.cypher` files read as text
 * and split at `;`.
 *
 * @example
 * ```ts
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 *
 * const loader = GraphMigrator.fromFileSystem("./migrations")
 * ```
 *
 * @since 0.1.0
 * @category loaders
 */
export const fromFileSystem = (directory: string): Loader<FalkorDB, FileSystem | Path> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem
    const path = yield* Path
    const files = yield* fs.readDirectory(directory).pipe(
      Effect.mapError(
        (cause) =>
          new MigrationError({
            reason: new BadState({
              key: directory,
              detail: `the migrations directory cannot be read: ${cause.message}`
            })
          })
      )
    )
    return yield* filesOf(
      files,
      (file) => file,
      (file, extension, id, name) => {
        const full = path.join(directory, file)
        if (extension === "cypher") {
          return fs.readFileString(full).pipe(
            Effect.mapError((cause) => loadFailed(id, name, `cannot read ${full}: ${cause.message}`, cause)),
            Effect.flatMap((text) => cypherFile(id, name, text))
          )
        }
        return path.toFileUrl(full).pipe(
          Effect.mapError((cause) => loadFailed(id, name, `no file URL for ${full}`, cause)),
          Effect.flatMap((url) => importModule(id, name, () => import(/* @vite-ignore */ url.href)))
        )
      }
    )
  })

const defaultOf = (module: unknown): unknown => {
  if (!Predicate.hasProperty(module, "default")) return module
  const inner = module.default
  return Predicate.hasProperty(inner, "default") && !Effect.isEffect(inner) ? inner.default : inner
}

const isStatement = (u: unknown): u is Statement => typeof u === "string" || isQuery(u)

/** What a loaded value runs, checked: statements, or an effect. */
const prepare = (
  id: number,
  name: string,
  loaded: unknown,
  graph: Graph
): Effect.Effect<Effect.Effect<unknown, unknown, unknown>, MigrationError> => {
  const bad = (detail: string) => Effect.fail(loadFailed(id, name, detail))
  const statements = (list: ReadonlyArray<Statement>) => {
    const empty = list.findIndex((s) => (typeof s === "string" ? s : s.text).trim() === "")
    if (empty !== -1) return bad(`statement ${empty + 1} is empty`)
    return Effect.succeed(Effect.forEach(list, (s) => graph.query(s), { discard: true }))
  }
  const migration = defaultOf(loaded)
  if (isStatement(migration)) return statements([migration])
  if (Array.isArray(migration)) {
    if (migration.length === 0) return bad("the list of statements is empty")
    if (!migration.every(isStatement)) return bad("a list migration holds something that is not Cypher")
    return statements(migration)
  }
  if (Effect.isEffect(migration)) return Effect.succeed(migration)
  if (typeof migration === "function") {
    return Effect.succeed(
      Effect.suspend(() => {
        const result = (migration as (graph: Graph) => unknown)(graph)
        return Effect.isEffect(result)
          ? result
          : Effect.fail(loadFailed(id, name, "the migration function did not return an Effect"))
      })
    )
  }
  return bad(`expected Cypher text, a cypher query, a list of them, an Effect or a function, got ${typeof migration}`)
}

const checkDuplicates = (migrations: ReadonlyArray<ResolvedMigration<unknown>>) => {
  const names = new Map<number, Array<string>>()
  for (const [id, name] of migrations) {
    const list = names.get(id)
    if (list === undefined) names.set(id, [name])
    else list.push(name)
  }
  const duplicates = [...names].filter(([, list]) => list.length > 1)
  return duplicates.length === 0 ? Effect.void : failWith(new DuplicateId({ duplicates }))
}

// The lock is only ever renewed, used to record, or released by its holder: each script
// compares the token first, atomically.
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`
const RECORD = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) return 1 end return 0`
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

const replyText = (reply: Reply): string | undefined =>
  typeof reply === "string" ? reply : reply instanceof Uint8Array ? decodeUtf8(reply) : undefined

/**
 * The default record key of a graph's migrations: `{<graph>}:migrations`.
 *
 * @since 0.1.0
 * @category keys
 */
export const defaultKey = (graph: string): string => `{${graph}}:migrations`

const readApplied = (connection: RedisConnection["Service"], key: string) =>
  connection.execute(["HGETALL", key]).pipe(
    Effect.mapError((error) => fromRedis(error, { command: "HGETALL" })),
    Effect.flatMap((reply): Effect.Effect<ReadonlyArray<AppliedMigration>, MigrationError> => {
      const flat = reply instanceof MapReply ? reply.flat : Array.isArray(reply) ? reply : undefined
      const bad = (detail: string) => failWith(new BadState({ key, detail }))
      if (flat === undefined) return bad("HGETALL did not answer a hash")
      const applied: Array<AppliedMigration> = []
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const field = replyText(flat[i]!)
        const value = replyText(flat[i + 1]!)
        const id = Number(field)
        if (field === undefined || !/^\d+$/.test(field) || !Number.isSafeInteger(id)) {
          return bad(`the field ${JSON.stringify(field)} is not a migration id`)
        }
        let parsed: unknown
        try {
          parsed = JSON.parse(value ?? "")
        } catch {
          parsed = undefined
        }
        if (
          !Predicate.hasProperty(parsed, "name") ||
          !Predicate.hasProperty(parsed, "appliedAt") ||
          typeof parsed.name !== "string" ||
          typeof parsed.appliedAt !== "string" ||
          Number.isNaN(Date.parse(parsed.appliedAt))
        ) {
          return bad(`the record of migration ${id} is not {"name","appliedAt"}: ${JSON.stringify(value)}`)
        }
        applied.push({ id, name: parsed.name, appliedAt: new Date(parsed.appliedAt) })
      }
      return Effect.succeed(applied.sort((a, b) => a.id - b.id))
    }),
    Effect.catchReason("FalkorError", "WrongType", (reason) =>
      failWith(new BadState({ key, detail: `the key holds another type (${reason.serverMessage})` }))
    )
  )

/**
 * The migrations recorded as applied under `key` (default {@link defaultKey} of `graph`), by id.
 *
 * @since 0.1.0
 * @category accessors
 */
export const applied = (options: {
  readonly graph: string
  readonly key?: string | undefined
}): Effect.Effect<ReadonlyArray<AppliedMigration>, MigrationError | FalkorError, FalkorDB> =>
  FalkorDB.use((db) => readApplied(db.connection, options.key ?? defaultKey(options.graph)))

/** Holds the lock for the scope: waits for it, renews the lease, releases it at the end. */
const holdLock = (
  connection: RedisConnection["Service"],
  lockKey: string,
  token: string,
  ttl: Duration.Duration,
  timeout: Duration.Duration
) => {
  const ttlMs = String(Math.max(1, Math.round(Duration.toMillis(ttl))))
  const redis = (command: ReadonlyArray<string>) =>
    connection.execute(command).pipe(Effect.mapError((error) => fromRedis(error, { command: command[0] })))
  const release = redis(["EVAL", RELEASE, "1", lockKey, token]).pipe(
    Effect.catchTag("FalkorError", (error) =>
      Effect.logWarning(`could not release the migration lock (its lease will expire): ${error.message}`)
    )
  )
  // Each attempt registers the release only when it took the lock; the waits between attempts
  // stay interruptible (an acquireRelease around the whole wait would not be).
  const attempt = Effect.acquireRelease(
    redis(["SET", lockKey, token, "NX", "PX", ttlMs]).pipe(
      Effect.flatMap((reply) => (reply === null ? Effect.fail("held" as const) : Effect.void))
    ),
    () => release
  )
  const acquire = attempt.pipe(
    Effect.retry({
      schedule: Schedule.min([Schedule.exponential("20 millis"), Schedule.spaced("250 millis")]),
      while: (e) => e === "held"
    }),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => failWith(new Locked({ lockKey, waited: timeout }))
    }),
    // `retry` only retries "held", so what is left is a FalkorError or the timeout's MigrationError.
    Effect.mapError((e) => e as FalkorError | MigrationError)
  )
  const renew = redis(["EVAL", RENEW, "1", lockKey, token, ttlMs]).pipe(
    Effect.flatMap((reply) => (reply === 1 ? Effect.void : Effect.fail("lost" as const))),
    // A renewal that fails on the connection is tried again at the next tick; a lost lease
    // ends the renewals (recording then fails with LockLost).
    Effect.catchTag("FalkorError", (error) =>
      Effect.logWarning(`could not renew the migration lock: ${error.message}`)
    ),
    Effect.delay(Duration.divideUnsafe(ttl, 3)),
    Effect.forever,
    Effect.ignore
  )
  return acquire.pipe(Effect.andThen(Effect.forkScoped(renew)), Effect.asVoid)
}

/** The migrations not among `applied`, in the loader's (id) order. */
const notApplied = <M extends ResolvedMigration<unknown>>(
  migrations: ReadonlyArray<M>,
  applied: ReadonlyArray<AppliedMigration>
): ReadonlyArray<M> => {
  const done = new Set(applied.map((m) => m.id))
  return migrations.filter(([id]) => !done.has(id))
}

const minimumTtl = Duration.seconds(1)

/** The options with their defaults, checked. */
const checkOptions = (options: MigratorOptions<unknown, unknown>) => {
  const invalid = (option: string, detail: string) => failWith(new InvalidOption({ option, detail }))
  for (const name of ["graph", "key", "lockKey"] as const) {
    const value = options[name]
    if ((name === "graph" || value !== undefined) && (typeof value !== "string" || value.length === 0)) {
      return invalid(name, `a non-empty string, got ${JSON.stringify(value)}`)
    }
  }
  const key = options.key ?? defaultKey(options.graph)
  const lockKey = options.lockKey ?? `${key}:lock`
  if (lockKey === key) return invalid("lockKey", "the lock needs a key of its own, not the record's")
  const ttl = Duration.fromInput(options.lockTtl ?? "30 seconds")
  const timeout = Duration.fromInput(options.lockTimeout ?? "5 minutes")
  if (ttl._tag === "None" || !Duration.isFinite(ttl.value) || Duration.isLessThan(ttl.value, minimumTtl)) {
    return invalid("lockTtl", `a finite duration of at least 1 second, got ${String(options.lockTtl)}`)
  }
  if (timeout._tag === "None") return invalid("lockTimeout", `a duration, got ${String(options.lockTimeout)}`)
  return Effect.succeed({ key, lockKey, ttl: ttl.value, timeout: timeout.value })
}

/**
 * Applies the migrations of `loader` that `key` does not record yet, in id order, under the
 * lock; returns the `[id, name]` of each migration this run applied (empty when another
 * migrator applied them while this one waited).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const program = GraphMigrator.run({
 *   graph: "social",
 *   loader: GraphMigrator.fromRecord({ "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)" }),
 *   lockTimeout: "1 minute"
 * }).pipe(
 *   Effect.catchReason("MigrationError", "Failed", (failed) =>
 *     Effect.logError(`migration ${failed.id} failed`).pipe(Effect.as([]))
 *   ),
 *   Effect.provide(FalkorDB.layer({ url: "redis://127.0.0.1:6379" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = Effect.fn("GraphMigrator.run")(function* <R = never, RL = never>(
  options: MigratorOptions<R, RL>
): Effect.fn.Return<
  ReadonlyArray<readonly [id: number, name: string]>,
  MigrationError | FalkorError,
  FalkorDB | R | RL
> {
  const migrations = yield* options.loader
  yield* checkDuplicates(migrations)
  const { key, lockKey, ttl, timeout } = yield* checkOptions(options)
  const db = yield* FalkorDB
  const graph = db.graph(options.graph)
  const token = crypto.randomUUID()
  return yield* Effect.scoped(
    Effect.gen(function* () {
      yield* holdLock(db.connection, lockKey, token, ttl, timeout)
      const pending = notApplied(migrations, yield* readApplied(db.connection, key))
      const ran: Array<readonly [number, string]> = []
      for (const [id, name, load] of pending) {
        const effect = yield* Effect.flatMap(load, (loaded) => prepare(id, name, loaded, graph))
        yield* (effect as Effect.Effect<unknown, unknown, R>).pipe(
          Effect.mapError((cause) =>
            isMigrationError(cause) && cause.reason._tag === "LoadFailed"
              ? cause
              : new MigrationError({ reason: new Failed({ id, name, cause }) })
          ),
          // A migration that throws is a failed migration too, reported by id like the others.
          Effect.catchDefect((cause) => failWith(new Failed({ id, name, cause }))),
          Effect.withSpan("GraphMigrator.migration", { attributes: { "migration.id": id, "migration.name": name } })
        )
        const record = JSON.stringify({ name, appliedAt: new Date().toISOString() })
        const recorded = yield* db.connection
          .execute(["EVAL", RECORD, "2", lockKey, key, token, String(id), record])
          .pipe(Effect.mapError((error) => fromRedis(error, { command: "EVAL" })))
        if (recorded !== 1) return yield* failWith(new LockLost({ lockKey, id, name }))
        ran.push([id, name])
        yield* Effect.logDebug(`applied migration ${id}_${name}`)
      }
      return ran
    })
  )
})

/**
 * What {@link run} would apply now: the migrations of `loader` that `key` does not record yet,
 * by id. Takes no lock and runs nothing; the same checks of the loader and the options fail
 * the same way.
 *
 * @example
 * ```ts
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const report = GraphMigrator.pending({
 *   graph: "social",
 *   loader: GraphMigrator.fromRecord({ "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)" })
 * }).pipe(Effect.flatMap((todo) => Effect.log(`${todo.length} migration(s) to apply`)))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const pending = Effect.fn("GraphMigrator.pending")(function* <R = never, RL = never>(
  options: MigratorOptions<R, RL>
): Effect.fn.Return<ReadonlyArray<readonly [id: number, name: string]>, MigrationError | FalkorError, FalkorDB | RL> {
  const migrations = yield* options.loader
  yield* checkDuplicates(migrations)
  const { key } = yield* checkOptions(options)
  const db = yield* FalkorDB
  return notApplied(migrations, yield* readApplied(db.connection, key)).map(([id, name]) => [id, name] as const)
})

/**
 * {@link run} as a layer, for a service's start-up: building the layer applies the migrations.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Layer } from "effect"
 *
 * const Migrated = GraphMigrator.layer({
 *   graph: "social",
 *   loader: GraphMigrator.fromRecord({ "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)" })
 * }).pipe(Layer.provideMerge(FalkorDB.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R = never, RL = never>(
  options: MigratorOptions<R, RL>
): Layer.Layer<never, MigrationError | FalkorError, FalkorDB | R | RL> => Layer.effectDiscard(run(options))

/**
 * An index a service needs: a range, full-text or vector index spec with its `type`.
 *
 * @since 0.1.0
 * @category schema
 */
export type IndexDeclaration =
  | ({ readonly type: "RANGE" } & Indexes.RangeIndexSpec)
  | ({ readonly type: "FULLTEXT" } & Indexes.FulltextIndexSpec)
  | ({ readonly type: "VECTOR" } & Indexes.VectorIndexSpec)

/**
 * What an `ensure…` call found: the declarations it created (with only the properties that
 * were missing) and those that existed already.
 *
 * @since 0.1.0
 * @category schema
 */
export interface EnsureReport<A> {
  readonly created: ReadonlyArray<A>
  readonly existing: ReadonlyArray<A>
}

/**
 * Options of the `ensure…` calls.
 *
 * @since 0.1.0
 * @category schema
 */
export interface EnsureOptions {
  /** How long to wait for the indexes or constraints to become operational. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
}

const describeIndex = (d: IndexDeclaration): string => {
  const on = d.type === "VECTOR" ? [d.property] : d.properties
  const target = d.entityType === "RELATIONSHIP" ? `[:${d.label}]` : `(:${d.label})`
  return `the ${d.type} index on ${target} (${on.join(", ")})`
}

const creationText = (d: IndexDeclaration): string =>
  d.type === "RANGE"
    ? Indexes.rangeIndexText(d)
    : d.type === "VECTOR"
      ? Indexes.vectorIndexText(d)
      : Indexes.fulltextIndexText(d)

/** What of `d` is not there yet (`undefined`: nothing), or a mismatch with what is. */
const missingOf = (
  d: IndexDeclaration,
  all: ReadonlyArray<Indexes.IndexInfo>
): IndexDeclaration | undefined | SchemaMismatch => {
  const info = all.find((i) => i.label === d.label && i.entityType === (d.entityType ?? "NODE"))
  const has = (property: string) => (info?.types[property] ?? []).includes(d.type)
  if (d.type !== "VECTOR") {
    const missing = d.properties.filter((p) => !has(p))
    return missing.length === 0 ? undefined : { ...d, properties: missing }
  }
  if (!has(d.property)) return d
  const options = info?.options[d.property] ?? {}
  const existing = `dimension ${String(options.dimension)}, ${String(options.similarityFunction)}`
  const wanted = `dimension ${d.dimension}, ${d.similarityFunction}`
  return existing === wanted ? undefined : new SchemaMismatch({ what: describeIndex(d), existing, wanted })
}

const createIndex = (indexes: Indexes.Indexes, d: IndexDeclaration): Effect.Effect<unknown, FalkorError> =>
  d.type === "RANGE"
    ? indexes.createRange(d)
    : d.type === "VECTOR"
      ? indexes.createVector(d)
      : indexes.createFulltext(d)

/**
 * Makes sure the declared indexes exist and are operational: creates the missing ones (only
 * the missing properties of a partly indexed label), leaves the existing ones, then waits until
 * every declared label's indexes are `OPERATIONAL`. An index created meanwhile by another
 * process counts as existing. A vector index that exists with another dimension or similarity
 * function fails with `SchemaMismatch` (nothing is dropped); a declaration that cannot be
 * written (empty properties, a bad name, a bad option) fails before anything is sent.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const ready = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   return yield* GraphMigrator.ensureIndexes(graph, [
 *     { type: "RANGE", label: "Person", properties: ["name", "born"] },
 *     { type: "VECTOR", label: "Person", property: "embedding", dimension: 384, similarityFunction: "cosine" }
 *   ])
 * })
 * ```
 *
 * @since 0.1.0
 * @category schema
 */
export const ensureIndexes = Effect.fn("GraphMigrator.ensureIndexes")(function* (
  graph: { readonly indexes: Indexes.Indexes },
  declarations: ReadonlyArray<IndexDeclaration>,
  options: EnsureOptions = {}
): Effect.fn.Return<EnsureReport<IndexDeclaration>, FalkorError | MigrationError> {
  // Every declaration is checked before anything is sent.
  yield* Effect.try({ try: () => declarations.forEach(creationText), catch: (e) => e as FalkorError })
  const all = yield* graph.indexes.list()
  const created: Array<IndexDeclaration> = []
  const existing: Array<IndexDeclaration> = []
  for (const d of declarations) {
    const missing = missingOf(d, all)
    if (missing instanceof SchemaMismatch) return yield* failWith(missing)
    if (missing === undefined) {
      existing.push(d)
      continue
    }
    const made = yield* createIndex(graph.indexes, missing).pipe(
      Effect.as(true),
      Effect.catchReason("FalkorError", "IndexExists", () => Effect.succeed(false))
    )
    if (made) created.push(missing)
    else existing.push(d)
  }
  const labels = [...new Set(declarations.map((d) => d.label))]
  yield* Effect.forEach(labels, (label) => graph.indexes.awaitOperational({ label, timeout: options.timeout }), {
    discard: true
  })
  return { created, existing }
})

const sameConstraint = (info: Constraints.ConstraintInfo, spec: Constraints.ConstraintSpec) =>
  info.kind === spec.kind &&
  info.label === spec.label &&
  info.entityType === (spec.entityType ?? "NODE") &&
  info.properties.length === spec.properties.length &&
  info.properties.every((p, i) => p === spec.properties[i])

/**
 * Makes sure the declared constraints exist and are operational: creates the missing ones —
 * a unique constraint's supporting range index first, through {@link ensureIndexes} — leaves
 * the existing ones, then waits for each. A constraint the data violates fails with the
 * `FalkorError` reason `ConstraintFailed` naming it; one created meanwhile by another process
 * counts as existing.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const ready = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("users")
 *   return yield* GraphMigrator.ensureConstraints(graph, [
 *     { kind: "UNIQUE", label: "User", properties: ["email"] },
 *     { kind: "MANDATORY", label: "User", properties: ["name"] }
 *   ])
 * })
 * ```
 *
 * @since 0.1.0
 * @category schema
 */
export const ensureConstraints = Effect.fn("GraphMigrator.ensureConstraints")(function* (
  graph: { readonly indexes: Indexes.Indexes; readonly constraints: Constraints.Constraints },
  declarations: ReadonlyArray<Constraints.ConstraintSpec>,
  options: EnsureOptions = {}
): Effect.fn.Return<EnsureReport<Constraints.ConstraintSpec>, FalkorError | MigrationError> {
  const unique = declarations.filter((d) => d.kind === "UNIQUE")
  if (unique.length > 0) {
    const supporting = unique.map(
      (d): IndexDeclaration => ({ type: "RANGE", label: d.label, properties: d.properties, entityType: d.entityType })
    )
    yield* ensureIndexes(graph, supporting, options)
  }
  const all = yield* graph.constraints.list()
  const created: Array<Constraints.ConstraintSpec> = []
  const existing: Array<Constraints.ConstraintSpec> = []
  for (const d of declarations) {
    if (all.some((info) => sameConstraint(info, d))) {
      existing.push(d)
      continue
    }
    const made = yield* graph.constraints.create(d).pipe(
      Effect.as(true),
      Effect.catchReason("FalkorError", "ConstraintExists", () => Effect.succeed(false))
    )
    if (made) created.push(d)
    else existing.push(d)
  }
  yield* Effect.forEach(declarations, (d) => graph.constraints.awaitOperational(d, { timeout: options.timeout }), {
    discard: true
  })
  return { created, existing }
})
