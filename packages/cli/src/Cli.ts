/**
 * The `effect-falkordb` command line, built with `effect/cli`:
 *
 * - `query -g <graph> <cypher> [--param k=v]… [--format table|json|csv] [--ro]`
 * - `explain -g <graph> <cypher>` / `profile -g <graph> <cypher>`: the plan as an indented tree
 * - `load -g <graph> --nodes [Label=]file… --relationships [TYPE=]file…`: the `GRAPH.BULK`
 *   loader, with a progress bar on a terminal and plain lines when piped; `--ingest` loads the
 *   same files through batched Cypher queries instead (`IngestFiles`), for a server that
 *   refuses `GRAPH.BULK`
 * - `graphs list` / `graphs delete <graph>` / `graphs copy <from> <to>`
 * - `info`: server, module and query counts
 * - `migrate -g <graph> <folder>`: the folder's migrations not applied yet (`GraphMigrator`)
 *
 * The server comes from `--url` or `FALKORDB_URL` (default `redis://127.0.0.1:6379`), the
 * password from `--password` or `FALKORDB_PASSWORD` (never printed), TLS from `--tls` or a
 * `rediss://` URL. Exit codes: 0 ok, 1 the server or the data refused (message and hint on
 * stderr), 2 usage.
 *
 * @example
 * ```ts
 * import * as Cli from "@effect-falkordb/cli/Cli"
 * import * as NodeServices from "@effect/platform-node/NodeServices"
 * import { Effect } from "effect"
 *
 * // What the `effect-falkordb` binary does with its arguments.
 * const exitCode = Cli.run(["query", "-g", "social", "MATCH (n) RETURN count(n) AS n"]).pipe(
 *   Effect.provide(NodeServices.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as BulkLoader from "@effect-falkordb/graph/BulkLoader"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import { isFalkorError } from "@effect-falkordb/graph/FalkorError"
import type { Parameters } from "@effect-falkordb/graph/Graph"
import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
import * as IngestFiles from "@effect-falkordb/graph/IngestFiles"
import { isLoadError } from "@effect-falkordb/graph/LoadError"
import { isMigrationError } from "@effect-falkordb/graph/MigrationError"
import { isRedisError } from "@effect-falkordb/redis/RedisError"
import { MapReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Format from "./internal/Format.ts"

const TypeId = "~@effect-falkordb/cli/Cli/CommandError" as const

/**
 * The command line was given something it cannot use (exit code 2).
 *
 * @since 0.1.0
 * @category reasons
 */
export class Usage extends Data.TaggedError("Usage")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
  get hint(): string {
    return "see effect-falkordb --help"
  }
}

/**
 * An error of the command line itself; server and data errors stay `FalkorError` / `LoadError`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CommandError extends Data.TaggedError("CommandError")<{ readonly reason: Usage }> {
  readonly [TypeId] = TypeId
  override get message(): string {
    return this.reason.message
  }
  get hint(): string {
    return this.reason.hint
  }
}

const usage = (detail: string) => new CommandError({ reason: new Usage({ detail }) })

// Flags every command shares: where the server is.
const root = Command.make("effect-falkordb").pipe(
  Command.withDescription("A command line for FalkorDB"),
  Command.withSharedFlags({
    url: Flag.String("url").pipe(
      Flag.withDescription("server URL (redis://, rediss:// for TLS); env FALKORDB_URL"),
      Flag.withFallbackConfig(Config.String("FALKORDB_URL")),
      Flag.withDefault("redis://127.0.0.1:6379")
    ),
    password: Flag.Redacted("password").pipe(
      Flag.withDescription("server password; env FALKORDB_PASSWORD (never printed)"),
      Flag.withFallbackConfig(Config.Redacted("FALKORDB_PASSWORD")),
      Flag.optional
    ),
    tls: Flag.Boolean("tls").pipe(Flag.withDescription("connect with TLS"), Flag.withDefault(false))
  })
)

/** Runs `use` with a client of the server the shared flags name. */
const withClient = <A, E, R>(use: (db: FalkorDB.FalkorDB["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const flags = yield* root
    const password: Redacted.Redacted<string> | undefined = Option.getOrUndefined(flags.password)
    const layer = FalkorDB.layer({
      url: flags.url,
      connections: 1,
      ...(password === undefined ? {} : { password }),
      ...(flags.tls ? { tls: true } : {})
    })
    return yield* FalkorDB.FalkorDB.use(use).pipe(Effect.provide(layer))
  })

const graphFlag = Flag.String("graph").pipe(Flag.withAlias("g"), Flag.withDescription("the graph"))

/** `k=v`: the value as JSON when it parses (numbers, booleans, null, lists, maps, "quoted"), else as text. */
const parameters = (pairs: ReadonlyArray<string>): Effect.Effect<Parameters, CommandError> =>
  Effect.suspend(() => {
    const out: Record<string, Parameters[string]> = {}
    for (const pair of pairs) {
      const eq = pair.indexOf("=")
      if (eq <= 0) return Effect.fail(usage(`--param ${JSON.stringify(pair)}: expected name=value`))
      const text = pair.slice(eq + 1)
      let value: Parameters[string]
      try {
        value = JSON.parse(text) as Parameters[string]
      } catch {
        value = text
      }
      out[pair.slice(0, eq)] = value
    }
    return Effect.succeed(out)
  })

const query = Command.make(
  "query",
  {
    graph: graphFlag,
    cypher: Argument.String("cypher").pipe(Argument.withDescription("the Cypher query")),
    param: Flag.String("param").pipe(
      Flag.withAlias("p"),
      Flag.withDescription("a parameter, name=value (value as JSON, else text); repeatable"),
      Flag.atLeast(0)
    ),
    format: Flag.Literals("format", ["table", "json", "csv"]).pipe(
      Flag.withAlias("f"),
      Flag.withDescription("output: an aligned table, JSON lines or CSV"),
      Flag.withDefault("table")
    ),
    ro: Flag.Boolean("ro").pipe(Flag.withDescription("read-only (GRAPH.RO_QUERY)"), Flag.withDefault(false))
  },
  (input) =>
    withClient((db) =>
      Effect.gen(function* () {
        const params = yield* parameters(input.param)
        const graph = db.graph(input.graph)
        const result = input.ro ? yield* graph.roQuery(input.cypher, params) : yield* graph.query(input.cypher, params)
        const text =
          input.format === "json"
            ? Format.jsonLines(result)
            : input.format === "csv"
              ? Format.csv(result)
              : Format.table(result)
        if (text.length > 0) yield* Console.log(text)
        const stats = Format.statistics(result)
        if (stats !== undefined && input.format === "table") yield* Console.error(stats)
      })
    )
).pipe(Command.withDescription("run a Cypher query and print its rows"))

const planCommand = (name: "explain" | "profile") =>
  Command.make(
    name,
    {
      graph: graphFlag,
      cypher: Argument.String("cypher").pipe(Argument.withDescription("the Cypher query")),
      param: Flag.String("param").pipe(Flag.withAlias("p"), Flag.atLeast(0))
    },
    (input) =>
      withClient((db) =>
        Effect.gen(function* () {
          const params = yield* parameters(input.param)
          const graph = db.graph(input.graph)
          const plan =
            name === "explain" ? yield* graph.explain(input.cypher, params) : yield* graph.profile(input.cypher, params)
          yield* Console.log(Format.plan(plan.roots))
        })
      )
  ).pipe(
    Command.withDescription(
      name === "explain"
        ? "print the execution plan as a tree"
        : "run the query and print the plan with records and time"
    )
  )

/** `Label=path` or `path` (label from the file name); `.jsonl`/`.ndjson` are JSONL, the rest CSV. */
const inputSpec = (spec: string, delimiter: string | undefined) => {
  const eq = spec.indexOf("=")
  const name = eq > 0 ? spec.slice(0, eq) : undefined
  const path = eq > 0 ? spec.slice(eq + 1) : spec
  const input = /\.(jsonl|ndjson)$/i.test(path) ? BulkLoader.jsonl(path) : BulkLoader.csv(path, { delimiter })
  return { name, input }
}

const load = Command.make(
  "load",
  {
    graph: graphFlag,
    nodes: Flag.String("nodes").pipe(
      Flag.withAlias("n"),
      Flag.withDescription("a node file, [Label=]path (CSV with a header, or .jsonl); repeatable"),
      Flag.atLeast(1)
    ),
    relationships: Flag.String("relationships").pipe(
      Flag.withAlias("r"),
      Flag.withDescription("a relationship file, [TYPE=]path; repeatable"),
      Flag.atLeast(0)
    ),
    delimiter: Flag.String("delimiter").pipe(Flag.withDescription("CSV field delimiter"), Flag.withDefault(",")),
    maxBufferSize: Flag.Int("max-buffer-size").pipe(
      Flag.withDescription("largest GRAPH.BULK command, in MB (default 64)"),
      Flag.withDefault(64)
    ),
    ingest: Flag.Boolean("ingest").pipe(
      Flag.withDescription(
        "load through batched Cypher queries (UNWIND … CREATE) instead of GRAPH.BULK: slower, for a server or ACL that refuses GRAPH.BULK"
      ),
      Flag.withDefault(false)
    ),
    batchSize: Flag.Int("batch-size").pipe(
      Flag.withDescription("rows per query with --ingest (default 1000)"),
      Flag.withDefault(1000)
    )
  },
  (input) =>
    withClient((db) =>
      Effect.gen(function* () {
        const tty = process.stderr.isTTY === true
        let lastDraw = 0
        let lastCommands = 0
        // A confirmed step: a GRAPH.BULK command, or with --ingest one batch (query).
        const unit = input.ingest ? "batch" : "command"
        const draw = (p: BulkLoader.Progress, final: boolean) =>
          Effect.sync(() => {
            const counts = `${p.nodes} nodes, ${p.relationships} relationships`
            if (tty) {
              const now = Date.now()
              if (!final && now - lastDraw < 100) return
              lastDraw = now
              const line = `${Format.bar(p.bytesRead, p.bytesTotal)} ${Format.bytes(p.bytesRead)}/${Format.bytes(p.bytesTotal)}  ${p.rowsRead} rows read, ${counts} loaded`
              process.stderr.write(`\r\u001b[2K${line}${final ? "\n" : ""}`)
            } else if (p.commands > lastCommands) {
              lastCommands = p.commands
              process.stderr.write(
                `loaded ${p.commands} ${unit}${p.commands === 1 ? "" : unit === "batch" ? "es" : "s"}: ${counts} (${Format.bytes(p.bytesRead)} of ${Format.bytes(p.bytesTotal)} read)\n`
              )
            }
          })
        let last: BulkLoader.Progress | undefined
        const inputs = {
          nodes: input.nodes.map((spec) => {
            const { name, input: file } = inputSpec(spec, input.delimiter)
            return { label: name, input: file }
          }),
          relationships: input.relationships.map((spec) => {
            const { name, input: file } = inputSpec(spec, input.delimiter)
            return { type: name, input: file }
          }),
          onProgress: (p: BulkLoader.Progress) => {
            last = p
            return draw(p, false)
          }
        }
        const loading = input.ingest
          ? IngestFiles.load(db, input.graph, { ...inputs, batchSize: input.batchSize })
          : BulkLoader.load(db.connection, input.graph, { ...inputs, maxBufferSize: input.maxBufferSize * 1_000_000 })
        const summary = yield* loading.pipe(
          Effect.ensuring(Effect.suspend(() => (last !== undefined && tty ? draw(last, true) : Effect.void)))
        )
        yield* Console.log(
          `graph ${summary.graph}: ${summary.nodes} nodes, ${summary.relationships} relationships in ${summary.commands} ${input.ingest ? "Ingest batch" : "GRAPH.BULK command"}${summary.commands === 1 ? "" : input.ingest ? "es" : "s"}`
        )
      })
    )
).pipe(
  Command.withDescription(
    "build a new graph from node and relationship files (GRAPH.BULK; --ingest: batched Cypher queries)"
  )
)

const graphs = Command.make("graphs").pipe(
  Command.withDescription("list, delete and copy graphs"),
  Command.withSubcommands([
    Command.make("list", {}, () =>
      withClient((db) => Effect.flatMap(db.list(), (names) => Effect.forEach(names, (n) => Console.log(n))))
    ).pipe(Command.withDescription("the graphs on the server, one per line")),
    Command.make("delete", { graph: Argument.String("graph") }, (input) =>
      withClient((db) => Effect.andThen(db.graph(input.graph).delete(), Console.log(`deleted ${input.graph}`)))
    ).pipe(Command.withDescription("delete a graph")),
    Command.make("copy", { from: Argument.String("from"), to: Argument.String("to") }, (input) =>
      withClient((db) =>
        Effect.andThen(db.graph(input.from).copy(input.to), Console.log(`copied ${input.from} to ${input.to}`))
      )
    ).pipe(Command.withDescription("copy a graph to a new name"))
  ])
)

/** The version number of the `graph` module in a `MODULE LIST` reply (`41612` for 4.16.12). */
const graphModuleVersion = (reply: Reply): number | undefined => {
  if (!Array.isArray(reply)) return undefined
  for (const entry of reply as ReadonlyArray<Reply>) {
    const fields = Array.isArray(entry) ? (entry as ReadonlyArray<Reply>) : entry instanceof MapReply ? entry.flat : []
    const pairs = new Map<string, Reply>()
    for (let i = 0; i + 1 < fields.length; i += 2) pairs.set(replyToString(fields[i]!) ?? "", fields[i + 1]!)
    if (replyToString(pairs.get("name") ?? null) === "graph") return Number(pairs.get("ver"))
  }
  return undefined
}

/** `field:value` lines of an INFO section. */
const infoField = (text: string, field: string) => new RegExp(`^${field}:(.*)$`, "m").exec(text)?.[1]?.trim()

const info = Command.make("info", {}, () =>
  withClient((db) =>
    Effect.gen(function* () {
      const server = yield* db.connection.execute(["INFO", "server"])
      const text =
        typeof server === "string" ? server : server instanceof Uint8Array ? new TextDecoder().decode(server) : ""
      const names = yield* db.list()
      const graphInfo = yield* db.info()
      yield* Console.log(`server: ${infoField(text, "redis_version") ?? "unknown"}`)
      const modules = yield* db.connection.execute(["MODULE", "LIST"]).pipe(Effect.orElseSucceed((): Reply => []))
      const version = graphModuleVersion(modules)
      if (version !== undefined) {
        yield* Console.log(
          `falkordb: ${Math.floor(version / 10000)}.${Math.floor(version / 100) % 100}.${version % 100}`
        )
      }
      yield* Console.log(`graphs: ${names.length}`)
      yield* Console.log(`running queries: ${graphInfo.runningQueries?.length ?? 0}`)
      yield* Console.log(`waiting queries: ${graphInfo.waitingQueries?.length ?? 0}`)
    })
  )
).pipe(Command.withDescription("the server, the module and what it runs"))

const migrate = Command.make(
  "migrate",
  {
    graph: graphFlag,
    folder: Argument.String("folder").pipe(
      Argument.withDescription("the migrations: <id>_<name>.cypher (statements split at ;) or .js/.ts modules")
    )
  },
  (input) =>
    withClient(() =>
      Effect.gen(function* () {
        const applied = yield* GraphMigrator.run({
          graph: input.graph,
          loader: GraphMigrator.fromFileSystem(input.folder)
        })
        if (applied.length === 0) yield* Console.log("nothing to apply")
        for (const [id, name] of applied) yield* Console.log(`applied ${id}_${name}`)
      })
    )
).pipe(Command.withDescription("apply a folder of migrations not applied yet, in id order (GraphMigrator)"))

/**
 * The command tree.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = root.pipe(
  Command.withSubcommands([query, planCommand("explain"), planCommand("profile"), load, graphs, info, migrate])
)

/**
 * The exit code of a failure: 2 for usage (the parser's errors, `Usage`), 1 for the rest (the
 * server, the data or the migrations refused).
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitCodeOf = (error: unknown): number => {
  if (error instanceof CommandError) return 2
  if (CliError.isCliError(error)) return error._tag === "ShowHelp" && error.errors.length === 0 ? 0 : 2
  return 1
}

/** What to print for a failure the parser did not render itself. */
const describe = (error: unknown): string | undefined => {
  if (CliError.isCliError(error)) return undefined
  if (
    error instanceof CommandError ||
    isFalkorError(error) ||
    isLoadError(error) ||
    isRedisError(error) ||
    isMigrationError(error)
  ) {
    return `error: ${error.message}\nhint: ${error.hint}`
  }
  return `error: ${Predicate.hasProperty(error, "message") ? String(error.message) : String(error)}`
}

/**
 * Runs the command line on `args` (without the node and script paths) and returns the exit
 * code; failures are printed to stderr (message, then hint).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (args: ReadonlyArray<string>) =>
  Command.runWith(command, { version: "0.1.0" })(args).pipe(
    Effect.exit,
    Effect.flatMap((exit) => {
      if (Exit.isSuccess(exit)) return Effect.succeed(0)
      const error = Exit.findErrorOption(exit)
      if (Option.isNone(error)) {
        return Effect.as(Console.error(`error: ${String(exit.cause)}`), 1)
      }
      const text = describe(error.value)
      return Effect.as(text === undefined ? Effect.void : Console.error(text), exitCodeOf(error.value))
    })
  )
