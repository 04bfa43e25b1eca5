/**
 * A scripted FalkorDB for users' tests: the real `FalkorDB` client (`FalkorDB.layerFromRedis`)
 * on top of a `RedisConnection` that answers `GRAPH.QUERY` / `GRAPH.RO_QUERY` from scripts.
 *
 * **Why a scripted connection and not a fake `FalkorDB` service.** Each scripted answer is
 * turned into a real `--compact` reply (ids for labels, relationship types and property
 * keys, typed cells, statistics) and handed to the real client, so a test runs the same
 * parameter encoding, reply parsing, schema-cache refreshes (`CALL db.labels()` … answered
 * from the mock's own id tables), row decoding, `Schema`-typed rows and error
 * classification as production does. A fake service would skip all of that and let
 * a test pass that fails against a server.
 *
 * Scripts match by the query text exactly as written (without the `CYPHER …` prefix the
 * client adds for parameters) or by a predicate over the call; optional `graph` and
 * `readOnly` narrow them, `times` limits how often one answers. Answers are rows as plain
 * objects (columns are the first row's keys, in order; values are the graph value model:
 * strings, numbers, bigint, booleans, null, arrays, maps, `Node`, `Edge`, `Path`, `Point`,
 * `Float32Array`, temporal values), statistics, an error text as the server would send
 * it, or a raw reply. Every call is recorded with its parsed parameters.
 *
 * The schema commands the graph client's helpers send are simulated, so code that creates
 * indexes and constraints or loads UDFs can be tested without scripts: index DDL
 * (`CREATE|DROP [FULLTEXT|VECTOR] INDEX FOR …`), `CALL db.indexes()` and
 * `CALL db.constraints()` (answered from that state when no script matches them),
 * `GRAPH.CONSTRAINT` (a unique constraint needs its range index, as on the server),
 * `GRAPH.UDF` and `GRAPH.INFO`. Everything is `OPERATIONAL` at once; script `db.indexes()`
 * rows to test other statuses.
 *
 * A query no script matches is answered with an error reply that says it is not scripted, names
 * the closest scripted text and where the two differ (or why a script of the same text did not
 * answer: another graph, `readOnly`, `times` used up), and lists the scripts. A query whose
 * `$name` parameters are not all given is answered `Missing parameters`, as the server answers
 * it (FalkorDB 4.18), whatever the scripts say. `roQuery` of a
 * query with a write clause is answered with the server's read-only error.
 *
 * @since 0.1.0
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import type { ParameterValue } from "@effect-falkordb/graph/Cypher"
import type {
  CommandOptions,
  ExclusiveConnection,
  Future,
  PipelineOptions
} from "@effect-falkordb/redis/RedisConnection"
import {
  type ExecuteAllOptions,
  makeExecuteAll,
  makeService,
  RedisConnection
} from "@effect-falkordb/redis/RedisConnection"
import { Closed, fromErrorReply, RedisError } from "@effect-falkordb/redis/RedisError"
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as EffectResult from "effect/Result"
import type * as Scope from "effect/Scope"
import * as CompactEncoder from "./CompactEncoder.ts"
import { AdminState } from "./internal/AdminState.ts"
import * as Closest from "./internal/ClosestScript.ts"
import * as CypherPrefix from "./internal/CypherPrefix.ts"
import { referencedParameters } from "./internal/ParameterReferences.ts"
import type * as RespTestServer from "./RespTestServer.ts"

/**
 * One query the client sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly command: "GRAPH.QUERY" | "GRAPH.RO_QUERY"
  readonly graph: string
  /** The query text without the `CYPHER …` parameter prefix. */
  readonly query: string
  /** The parameters, read back from the prefix (`undefined` was sent as `null`). */
  readonly parameters: { readonly [name: string]: Parameter }
  readonly readOnly: boolean
  /** The server `TIMEOUT` in milliseconds, when sent. */
  readonly timeout: number | undefined
  /** The query text as sent, prefix included. */
  readonly text: string
}

/**
 * A parameter value as the mock read it back from the query's `CYPHER` prefix.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameter = CypherPrefix.Parameter

/**
 * A row: column alias → value.
 *
 * @since 0.1.0
 * @category models
 */
export type MockRow = { readonly [column: string]: CompactEncoder.Encodable }

/**
 * What a script answers. With `rows` (or `columns`) the reply has a header and rows; with
 * neither it is a write's statistics-only reply. `error` answers the server error text
 * (e.g. `"Query timed out"`), `reply` a raw reply.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly rows?: ReadonlyArray<MockRow> | undefined
  /** The columns, in order; needed when `rows` is empty. Default: the first row's keys. */
  readonly columns?: ReadonlyArray<string> | undefined
  readonly statistics?: CompactEncoder.StatisticsInput | undefined
  readonly error?: string | undefined
  readonly reply?: Reply | undefined
}

/**
 * A scripted answer and what it answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Script extends Result {
  /** The exact query text (without the parameter prefix), or a predicate over the call. */
  readonly query: string | ((call: Call) => boolean)
  /** Only calls on this graph. */
  readonly graph?: string | undefined
  /** Only `roQuery` (true) or only `query` (false) calls. */
  readonly readOnly?: boolean | undefined
  /** Answers at most this many calls, then no longer matches. Default: any number. */
  readonly times?: number | undefined
  /** Computes the answer from the call (e.g. from its parameters) instead of a fixed one. */
  readonly respond?: ((call: Call) => Result) | undefined
  /** Names a predicate script in the "no script matches" message. */
  readonly description?: string | undefined
}

/**
 * A failed expectation.
 *
 * @since 0.1.0
 * @category errors
 */
export class FalkorDBMockError extends Data.TaggedError("FalkorDBMockError")<{
  readonly reason: "ExpectationFailed"
  readonly message: string
}> {}

/**
 * The schema names the mock has assigned ids to, per graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface SchemaSnapshot {
  readonly labels: ReadonlyArray<string>
  readonly relationshipTypes: ReadonlyArray<string>
  readonly propertyKeys: ReadonlyArray<string>
}

/**
 * The mock's controls, for scripting and assertions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Mock {
  /** Every query call, in order (schema refreshes are not calls; see `schemaFetches`). */
  readonly calls: Effect.Effect<ReadonlyArray<Call>>
  /** Calls no script matched. */
  readonly unmatched: Effect.Effect<ReadonlyArray<Call>>
  /** Adds scripts, tried after the existing ones. */
  readonly script: (...scripts: ReadonlyArray<Script>) => Effect.Effect<void>
  /** Forgets the recorded calls (scripts and schema stay). */
  readonly reset: Effect.Effect<void>
  /** Schema-procedure requests the client sent (its schema-cache refreshes). */
  readonly schemaFetches: Effect.Effect<number>
  /** The names the mock assigned ids to on `graph`. */
  readonly schema: (graph: string) => Effect.Effect<SchemaSnapshot>
  /**
   * Succeeds when calls matching `query` (text or predicate) — and `graph` / `parameters`
   * when given — happened `times` times (default: at least once); otherwise fails with a
   * `FalkorDBMockError` listing the calls that were made.
   */
  readonly expectCalled: (
    query: string | ((call: Call) => boolean),
    options?: {
      readonly times?: number | undefined
      readonly graph?: string | undefined
      readonly parameters?: { readonly [name: string]: ParameterValue } | undefined
    }
  ) => Effect.Effect<void, FalkorDBMockError>
  /** Succeeds when no call matched `query`. */
  readonly expectNotCalled: (query: string | ((call: Call) => boolean)) => Effect.Effect<void, FalkorDBMockError>
  /** Answers one command as the mock's connection does (for serving it over a socket). */
  readonly answer: (command: ReadonlyArray<string>) => Reply
  /** The scripted connection the `FalkorDB` client runs on. */
  readonly connection: RedisConnection["Service"]
}

/**
 * The mock's controls as a service.
 *
 * @since 0.1.0
 * @category services
 */
export class FalkorDBMock extends Context.Service<FalkorDBMock, Mock>()("@effect-falkordb/testing/FalkorDBMock") {}

/**
 * Options of the mock.
 *
 * @since 0.1.0
 * @category models
 */
export interface MockOptions {
  /** Graphs that exist before any write (for `GRAPH.LIST`, `GRAPH.DELETE`, `GRAPH.COPY`). */
  readonly graphs?: ReadonlyArray<string> | undefined
  /**
   * Answer `roQuery` of a query with a write clause (`CREATE`, `MERGE`, `SET`, `DELETE`,
   * `REMOVE`) with the server's read-only error, as a server does. Default true.
   */
  readonly enforceReadOnly?: boolean | undefined
}

const utf8 = new TextEncoder()
// Every code point kept: a leading U+FEFF is part of the text.
const bulk = (text: string): Uint8Array => utf8.encode(text)

const PROCEDURE = /^CALL db\.(labels|relationshipTypes|propertyKeys)\(\)(?: YIELD (\w+) RETURN \2 SKIP (\d+))?$/
const COLUMN = { labels: "label", relationshipTypes: "relationshipType", propertyKeys: "propertyKey" } as const
const WRITE_CLAUSE = /\b(CREATE|MERGE|SET|DELETE|REMOVE)\b/i

/** The query without its string literals and comments, for the read-only check. */
const code = (query: string): string =>
  query.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`/g, "''").replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, " ")

const describeScript = (script: Script, i: number): string => {
  const what =
    typeof script.query === "string"
      ? JSON.stringify(script.query)
      : `<predicate${script.description === undefined ? "" : `: ${script.description}`}>`
  const narrow = [
    script.graph === undefined ? undefined : `graph "${script.graph}"`,
    script.readOnly === undefined ? undefined : script.readOnly ? "roQuery" : "query",
    script.times === undefined ? undefined : `${script.times}x`
  ].filter((s) => s !== undefined)
  return `${i + 1}. ${what}${narrow.length > 0 ? ` (${narrow.join(", ")})` : ""}`
}

const jsonParameters = (parameters: { readonly [name: string]: ParameterValue }): string =>
  JSON.stringify(parameters, (_, v) => (typeof v === "bigint" ? `${v}n` : v))

const describeCall = (call: Call): string =>
  `${call.command} on graph "${call.graph}": ${JSON.stringify(call.query)}${Object.keys(call.parameters).length > 0 ? ` with parameters ${jsonParameters(call.parameters)}` : ""}`

const sameValue = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true
  if (typeof a === "bigint" || typeof b === "bigint") return typeof a === typeof b && a === b
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]))
  if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return (
      ka.length === kb.length &&
      ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    )
  }
  // A parameter sent as `undefined` arrives as null.
  return (a === undefined && b === null) || (a === null && b === undefined)
}

/**
 * Builds the mock: its controls and the scripted connection. Use {@link layer} to get the
 * `FalkorDB` client on top of it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("FalkorDBMock.make")(function* (
  scripts: ReadonlyArray<Script> = [],
  options: MockOptions = {},
  /** Answers every command that is not a `GRAPH.*` command (e.g. a `RedisMock`). */
  fallback?: RedisConnection["Service"] | undefined
) {
  const list: Array<{ readonly script: Script; used: number }> = scripts.map((script) => ({ script, used: 0 }))
  const calls: Array<Call> = []
  const unmatched: Array<Call> = []
  const tables = new Map<string, CompactEncoder.SchemaTables>()
  const graphs = new Set<string>(options.graphs ?? [])
  const enforceReadOnly = options.enforceReadOnly ?? true
  const admin = new AdminState()
  let schemaFetches = 0
  let closed = false
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
    })
  )

  const tablesOf = (graph: string): CompactEncoder.SchemaTables => {
    let t = tables.get(graph)
    if (t === undefined) {
      t = new CompactEncoder.SchemaTables()
      tables.set(graph, t)
    }
    return t
  }

  /** The schema version the `version` argument checks: changes whenever names are added. */
  const versionOf = (graph: string): number => {
    if (!graphs.has(graph)) return 0
    const t = tablesOf(graph)
    // A stable, non-zero 32-bit value per schema size; the server's is an opaque hash.
    return (
      ((t.labels.length * 73856093) ^
        (t.relationshipTypes.length * 19349663) ^
        (t.propertyKeys.length * 83492791) ^
        0x5bd1e995) >>>
      0
    )
  }

  const matches = (script: Script, call: Call): boolean => {
    if (script.graph !== undefined && script.graph !== call.graph) return false
    if (script.readOnly !== undefined && script.readOnly !== call.readOnly) return false
    return typeof script.query === "string" ? script.query === call.query : script.query(call)
  }

  /**
   * The answer to a query no script matches: the nearest scripted text and where it differs,
   * or why a script of the very same text did not answer (graph, read-only, used up).
   */
  const notScripted = (call: Call): string => {
    const head = `FalkorDBMock: query not scripted: ${describeCall(call)}.`
    if (list.length === 0) return `${head} No script at all: script it with FalkorDBMock.layer([{ query, rows }]).`
    const sameText = list.findIndex((e) => e.script.query === call.query)
    const texts = list.flatMap((e) => (typeof e.script.query === "string" ? [e.script.query] : []))
    const nearest = sameText === -1 ? Closest.closest(call.query, texts) : call.query
    const why =
      sameText !== -1
        ? ` Script ${describeScript(list[sameText]!.script, sameText)} has this text but ${refusal(list[sameText]!, call)}.`
        : nearest === undefined
          ? ""
          : ` Closest scripted: ${JSON.stringify(nearest)}; ${Closest.difference(call.query, nearest)}.`
    return `${head}${why} Scripted: ${list.map((e, i) => describeScript(e.script, i)).join("; ")}`
  }

  /** Why a script of the call's text did not answer it. */
  const refusal = (entry: { readonly script: Script; readonly used: number }, call: Call): string => {
    const { script } = entry
    if (script.graph !== undefined && script.graph !== call.graph) return `is for graph "${script.graph}"`
    if (script.readOnly !== undefined && script.readOnly !== call.readOnly) {
      return script.readOnly ? "answers roQuery only" : "answers query (not roQuery) only"
    }
    return `has answered its ${script.times} time(s)`
  }

  const resultReply = (result: Result, call: Call): Reply => {
    if (result.reply !== undefined) return result.reply
    if (result.error !== undefined) return new ErrorReply(result.error)
    const rows = result.rows
    const columns =
      result.columns ??
      (rows !== undefined && rows.length > 0 ? Object.keys(rows[0]!) : rows === undefined ? undefined : [])
    const values =
      rows === undefined || columns === undefined
        ? undefined
        : rows.map((row, r) => {
            const keys = Object.keys(row)
            const missing = columns.filter((c) => !(c in row))
            const extra = keys.filter((k) => !columns.includes(k))
            if (missing.length > 0 || extra.length > 0) {
              throw new CompactEncoder.CompactEncodeError({
                path: `row ${r}`,
                message: `row ${r} has columns [${keys.join(", ")}] but the columns are [${columns.join(", ")}]`
              })
            }
            return columns.map((c) => row[c])
          })
    return CompactEncoder.encodeResult({ columns, rows: values, statistics: result.statistics }, tablesOf(call.graph))
  }

  const query = (command: "GRAPH.QUERY" | "GRAPH.RO_QUERY", args: ReadonlyArray<string>): Reply => {
    const graph = args[1]
    const text = args[2]
    if (graph === undefined || text === undefined) {
      return new ErrorReply(`ERR wrong number of arguments for '${args[0]}' command`)
    }
    let compact = false
    let timeout: number | undefined
    let version: number | undefined
    for (let i = 3; i < args.length; i++) {
      const flag = args[i]!.toUpperCase()
      if (flag === "--COMPACT") compact = true
      else if (flag === "TIMEOUT") timeout = Number(args[++i])
      else if (flag === "VERSION") version = Number(args[++i])
    }
    const procedure = PROCEDURE.exec(text)
    if (procedure !== null) {
      // The client's schema-cache refresh: answered from the ids this mock assigned.
      schemaFetches++
      const kind = procedure[1] as keyof typeof COLUMN
      const skip = procedure[3] === undefined ? 0 : Number(procedure[3])
      return CompactEncoder.encodeNameList(COLUMN[kind], tablesOf(graph)[kind].slice(skip), compact)
    }
    if (version !== undefined && version !== versionOf(graph)) {
      // Nothing runs on a mismatch, as on the server.
      return [new ErrorReply("version mismatch"), versionOf(graph)]
    }
    let split: CypherPrefix.Split
    try {
      split = CypherPrefix.split(text)
    } catch (e) {
      return new ErrorReply(
        `FalkorDBMock cannot read the CYPHER parameters of ${JSON.stringify(text)}: ${(e as Error).message}`
      )
    }
    const call: Call = {
      command,
      graph,
      query: split.query,
      parameters: split.parameters,
      readOnly: command === "GRAPH.RO_QUERY",
      timeout,
      text
    }
    calls.push(call)
    if (!compact) {
      return new ErrorReply(`FalkorDBMock answers compact queries only (add --compact): ${describeCall(call)}`)
    }
    if (call.readOnly && enforceReadOnly && WRITE_CLAUSE.test(code(call.query))) {
      return new ErrorReply("graph.RO_QUERY is to be executed only on read-only queries")
    }
    // As the server (after its read-only check): a `$name` with no value fails the query.
    if (referencedParameters(call.query).some((name) => !Object.hasOwn(call.parameters, name))) {
      return new ErrorReply("Missing parameters")
    }
    const entry = list.find((e) => (e.script.times === undefined || e.used < e.script.times) && matches(e.script, call))
    // Index DDL, db.indexes() and db.constraints() are answered from the mock's own state
    // unless a script answers them.
    const adminAnswer =
      entry === undefined && call.parameters !== undefined ? admin.query(graph, call.query) : undefined
    if (adminAnswer !== undefined) {
      if (adminAnswer.error === undefined && !call.readOnly) graphs.add(graph)
      return resultReply(adminAnswer as Result, call)
    }
    if (entry === undefined) {
      unmatched.push(call)
      return new ErrorReply(notScripted(call))
    }
    entry.used++
    if (!call.readOnly) graphs.add(graph)
    try {
      return resultReply(entry.script.respond === undefined ? entry.script : entry.script.respond(call), call)
    } catch (e) {
      const message = e instanceof CompactEncoder.CompactEncodeError ? `${e.path}: ${e.message}` : String(e)
      return new ErrorReply(`FalkorDBMock cannot encode the scripted answer to ${describeCall(call)}: ${message}`)
    }
  }

  const answer = (args: ReadonlyArray<string>): Reply => {
    const name = (args[0] ?? "").toUpperCase()
    switch (name) {
      case "GRAPH.QUERY":
      case "GRAPH.RO_QUERY":
        return query(name, args)
      case "GRAPH.LIST":
        return [...graphs].map(bulk)
      case "GRAPH.DELETE": {
        const graph = args[1] ?? ""
        if (!graphs.delete(graph)) return new ErrorReply("ERR Invalid graph operation on empty key")
        tables.delete(graph)
        admin.forget(graph)
        return "OK"
      }
      case "GRAPH.COPY": {
        const [source, destination] = [args[1] ?? "", args[2] ?? ""]
        if (!graphs.has(source)) return new ErrorReply("ERR Invalid graph operation on empty key")
        if (graphs.has(destination)) return new ErrorReply("destination key already exists")
        graphs.add(destination)
        tables.set(destination, tablesOf(source).copy())
        return bulk("OK")
      }
      case "GRAPH.CONSTRAINT": {
        const reply = admin.constraint(args)
        if (typeof reply === "string" && args[2] !== undefined) graphs.add(args[2])
        return reply
      }
      case "GRAPH.UDF":
        return admin.udf(args)
      case "GRAPH.INFO":
        return admin.info(args)
      case "PING":
        return "PONG"
      default:
        return new ErrorReply(
          `ERR FalkorDBMock has no answer for '${args[0]}' (it answers GRAPH.QUERY, GRAPH.RO_QUERY, GRAPH.LIST, GRAPH.DELETE, GRAPH.COPY, GRAPH.CONSTRAINT, GRAPH.UDF, GRAPH.INFO and PING); for other commands build it with FalkorDBMock.layerFromRedis over a RedisConnection, e.g. Layer.provide(RedisMock.layer())`
        )
    }
  }

  const textOf = (command: Command): Array<string> =>
    command.map((a) => (a instanceof Uint8Array ? decodeUtf8(a) : String(a)))

  /** Graph commands are the mock's; every other command goes to the fallback, when there is one. */
  const isMine = (command: Command): boolean =>
    fallback === undefined ||
    String(command[0] ?? "")
      .toUpperCase()
      .startsWith("GRAPH.")

  const answerGraph = (command: Command): Effect.Effect<Reply, RedisError> =>
    Effect.suspend((): Effect.Effect<Reply, RedisError> => {
      if (closed)
        return Effect.fail(
          new RedisError({ reason: new Closed({ written: false, message: "the FalkorDBMock connection is closed" }) })
        )
      const reply = answer(textOf(command))
      return reply instanceof ErrorReply
        ? Effect.fail(fromErrorReply(reply, String(command[0])))
        : Effect.succeed(reply)
    })

  const run = (command: Command, options?: CommandOptions): Effect.Effect<Reply, RedisError> =>
    isMine(command) ? answerGraph(command) : fallback!.execute(command, options)

  const answerBatch = (commands: ReadonlyArray<Command>): Effect.Effect<ReadonlyArray<Reply>, RedisError> =>
    Effect.suspend(
      (): Effect.Effect<ReadonlyArray<Reply>, RedisError> =>
        closed
          ? Effect.fail(
              new RedisError({
                reason: new Closed({ written: false, message: "the FalkorDBMock connection is closed" })
              })
            )
          : Effect.succeed(commands.map((c) => answer(textOf(c))))
    )

  /**
   * A batch in order: runs of graph commands answered by the mock, runs of other commands sent
   * as one pipeline to the fallback; replies (error replies as values) in command order.
   */
  const pipeline = (
    commands: ReadonlyArray<Command>,
    options?: PipelineOptions,
    other: (commands: ReadonlyArray<Command>) => Effect.Effect<ReadonlyArray<Reply>, RedisError> = (batch) =>
      fallback!.pipeline(batch, options)
  ): Effect.Effect<ReadonlyArray<Reply>, RedisError> => {
    const runs: Array<{ readonly mine: boolean; readonly commands: Array<Command> }> = []
    for (const command of commands) {
      const mine = isMine(command)
      const last = runs[runs.length - 1]
      if (last !== undefined && last.mine === mine) last.commands.push(command)
      else runs.push({ mine, commands: [command] })
    }
    return Effect.map(
      Effect.forEach(runs, (run) => (run.mine ? answerBatch(run.commands) : other(run.commands))),
      (replies) => replies.flat()
    )
  }

  /**
   * Independent commands: graph commands answered by the mock, the others sent to `other`
   * (the fallback's `executeAll`) in one call; one result per command, in command order.
   */
  const executeAll = (
    other: (
      commands: ReadonlyArray<Command>,
      options: ExecuteAllOptions | undefined
    ) => Effect.Effect<ReadonlyArray<EffectResult.Result<Reply, RedisError>>, RedisError>
  ) =>
    makeExecuteAll((commands, options) =>
      Effect.gen(function* () {
        const out: Array<EffectResult.Result<Reply, RedisError>> = new Array(commands.length)
        const others: Array<number> = []
        for (let i = 0; i < commands.length; i++) {
          if (isMine(commands[i]!)) out[i] = yield* Effect.result(answerGraph(commands[i]!))
          else others.push(i)
        }
        if (others.length > 0) {
          const results = yield* other(
            others.map((i) => commands[i]!),
            options
          )
          for (let j = 0; j < others.length; j++) out[others[j]!] = results[j]!
        }
        return out
      })
    )
  const viaFallback = executeAll((commands, options) => fallback!.executeAll(commands, { ...options, mode: "result" }))

  const exclusive: ExclusiveConnection = { execute: run, pipeline, executeAll: viaFallback }
  /** The fallback's exclusive connection, graph commands still answered by the mock. */
  const withinFallback = (inner: ExclusiveConnection): ExclusiveConnection => ({
    execute: (command, options) => (isMine(command) ? answerGraph(command) : inner.execute(command, options)),
    pipeline: (commands, options) => pipeline(commands, options, (batch) => inner.pipeline(batch, options)),
    executeAll: executeAll((commands, options) => inner.executeAll(commands, { ...options, mode: "result" }))
  })

  const connection: RedisConnection["Service"] = makeService({
    info: { strategy: "mock", connections: 1, window: 1, target: "falkordb-mock", protocol: 2 },
    execute: run,
    submit: (command, options) =>
      !isMine(command)
        ? fallback!.submit(command, options)
        : Effect.map(Effect.result(run(command)), (result) => {
            const settled: Effect.Effect<Reply, RedisError> =
              result._tag === "Success" ? Effect.succeed(result.success) : Effect.fail(result.failure)
            const future: Future<Reply> = { await: settled, awaitTimeout: () => settled, poll: settled }
            return future
          }),
    pipeline,
    executeAll: viaFallback,
    withExclusive: <A, E, R>(use: (c: ExclusiveConnection) => Effect.Effect<A, E, R>) =>
      fallback === undefined
        ? (Effect.scoped(use(exclusive)) as Effect.Effect<A, E | RedisError, Exclude<R, Scope.Scope>>)
        : fallback.withExclusive((inner) => use(withinFallback(inner)))
  })

  const select = (query: string | ((call: Call) => boolean)) => (call: Call) =>
    typeof query === "string" ? call.query === query : query(call)

  const mock: Mock = {
    calls: Effect.sync(() => calls.slice()),
    unmatched: Effect.sync(() => unmatched.slice()),
    script: (...more) =>
      Effect.sync(() => {
        for (const script of more) list.push({ script, used: 0 })
      }),
    reset: Effect.sync(() => {
      calls.length = 0
      unmatched.length = 0
    }),
    schemaFetches: Effect.sync(() => schemaFetches),
    schema: (graph) =>
      Effect.sync(() => {
        const t = tablesOf(graph)
        return {
          labels: t.labels.slice(),
          relationshipTypes: t.relationshipTypes.slice(),
          propertyKeys: t.propertyKeys.slice()
        }
      }),
    expectCalled: (query, expectation = {}) =>
      Effect.suspend(() => {
        const found = calls.filter(
          (call) =>
            select(query)(call) &&
            (expectation.graph === undefined || call.graph === expectation.graph) &&
            (expectation.parameters === undefined || sameValue(call.parameters, expectation.parameters))
        )
        const ok = expectation.times === undefined ? found.length > 0 : found.length === expectation.times
        if (ok) return Effect.void
        const wanted = `${typeof query === "string" ? JSON.stringify(query) : "<predicate>"}${expectation.graph === undefined ? "" : ` on graph "${expectation.graph}"`}${expectation.parameters === undefined ? "" : ` with parameters ${jsonParameters(expectation.parameters)}`}`
        const made = calls.length === 0 ? "no calls" : calls.map((c, i) => `${i + 1}. ${describeCall(c)}`).join("; ")
        return Effect.fail(
          new FalkorDBMockError({
            reason: "ExpectationFailed",
            message: `expected ${wanted} to be called ${expectation.times === undefined ? "at least once" : `${expectation.times} time(s)`}, found ${found.length}. Calls: ${made}`
          })
        )
      }),
    expectNotCalled: (query) =>
      Effect.suspend(() => {
        const found = calls.filter(select(query))
        return found.length === 0
          ? Effect.void
          : Effect.fail(
              new FalkorDBMockError({
                reason: "ExpectationFailed",
                message: `expected ${typeof query === "string" ? JSON.stringify(query) : "<predicate>"} not to be called, found ${found.length}: ${found.map(describeCall).join("; ")}`
              })
            )
      }),
    answer,
    connection
  }
  return mock
})

/**
 * The real `FalkorDB` client on the scripted connection, plus the mock's controls
 * (`FalkorDBMock`) and the connection itself (`RedisConnection`). The connection answers
 * graph commands (and `PING`) only; any other command fails with an error that says to use
 * {@link layerFromRedis}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  scripts: ReadonlyArray<Script> = [],
  options: MockOptions & FalkorDB.ClientOptions = {}
): Layer.Layer<FalkorDB.FalkorDB | FalkorDBMock | RedisConnection> => build(scripts, options, undefined)

/**
 * Like {@link layer}, on top of a `RedisConnection` you provide (e.g. `RedisMock.layer()`):
 * the mock answers `GRAPH.*` commands and passes every other command, `withExclusive`
 * included, to yours. The `RedisConnection` this layer provides is that combination — the
 * one the `FalkorDB` client runs on — whether you `Layer.provide` or `Layer.provideMerge`
 * yours, so a repository that uses both services sees one connection.
 *
 * @example
 * ```ts
 * import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
 * import * as RedisMock from "@effect-falkordb/testing/RedisMock"
 * import * as Layer from "effect/Layer"
 *
 * const TestLayer = FalkorDBMock.layerFromRedis([
 *   { query: "MATCH (m:Movie) RETURN m.title AS title", rows: [{ title: "Alien" }] }
 * ]).pipe(Layer.provide(RedisMock.layer()))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromRedis = (
  scripts: ReadonlyArray<Script> = [],
  options: MockOptions & FalkorDB.ClientOptions = {}
): Layer.Layer<FalkorDB.FalkorDB | FalkorDBMock | RedisConnection, never, RedisConnection> =>
  Layer.unwrap(Effect.map(Effect.service(RedisConnection), (redis) => build(scripts, options, redis)))

const build = (
  scripts: ReadonlyArray<Script>,
  options: MockOptions & FalkorDB.ClientOptions,
  fallback: RedisConnection["Service"] | undefined
): Layer.Layer<FalkorDB.FalkorDB | FalkorDBMock | RedisConnection> => {
  const { graphs, enforceReadOnly, ...client } = options
  const base = Layer.effectContext(
    Effect.map(make(scripts, { graphs, enforceReadOnly }, fallback), (mock) =>
      Context.make(FalkorDBMock, mock).pipe(Context.add(RedisConnection, mock.connection))
    )
  )
  return FalkorDB.layerFromRedisWith(client).pipe(Layer.provideMerge(base))
}

/**
 * A `RespTestServer` handler that answers like the mock, to run the scripts behind a
 * real socket and a real connection layer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handler =
  (mock: Mock): RespTestServer.Handler =>
  (request) => {
    const name = request.name
    if (name === "GRAPH.QUERY" || name === "GRAPH.RO_QUERY" || name.startsWith("GRAPH."))
      return mock.answer(request.command)
    return undefined
  }
