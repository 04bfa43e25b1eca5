/**
 * The bulk loader: a new graph built from node and relationship files (CSV with a header,
 * JSONL) or Streams through `GRAPH.BULK`, FalkorDB's binary bulk-insert command (the one
 * `falkordb-bulk-loader` speaks), the fastest way in.
 *
 * - Inputs are streamed: a file is read in chunks and sent in commands of at most
 *   `maxBufferSize` bytes, so a 2 GB file is never in memory whole; the next command is built
 *   while the server runs the current one.
 * - Nodes: each row is a node with the input's label(s); its key column (`key`, default the
 *   first) identifies it for relationships, per id space (default one space for all). The key
 *   is also stored as a property, unless its column name starts with `_`.
 * - Relationships: `from` / `to` columns (default the first two) hold node keys; the rest are
 *   properties. Node inputs are all read before relationship inputs.
 * - Types: inferred per value like `falkordb-bulk-loader` (empty → no property; integer,
 *   double, boolean, `[…]` JSON array, else string), or declared per column (`types`).
 * - Errors (`LoadError`): a malformed row (file, line, column), a duplicate node key, a
 *   relationship to an unknown node, a graph that already exists, a server that refuses
 *   `GRAPH.BULK` (use `Ingest` then), and a load that stops part way (`Interrupted`, with
 *   what the server confirmed). Nothing is sent for a row that fails to read; a load that
 *   fails after its first command leaves a partial graph and says so.
 *
 * The loader needs only a connection's `execute` (`Executor`): `FalkorDB`'s `connection`, or a
 * `RedisConnection`.
 *
 * @example
 * ```ts
 * import * as BulkLoader from "@effect-falkordb/graph/BulkLoader"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const summary = yield* BulkLoader.load(db.connection, "social", {
 *     nodes: [{ label: "Person", input: BulkLoader.csv("people.csv"), types: { zip: "string" } }],
 *     relationships: [{ type: "KNOWS", input: BulkLoader.csv("knows.csv") }],
 *     onProgress: (p) => Effect.log(`${p.nodes} nodes, ${p.relationships} relationships`)
 *   })
 *   return summary.nodes
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { RedisError } from "@effect-falkordb/redis/RedisError"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { fromRedis, fromServer } from "./FalkorError.ts"
import { command as bulkCommand, header as encodeHeader, ValueProblem, Writer } from "./internal/BulkEncoder.ts"
import {
  type Column,
  inputName,
  nodeColumns,
  nodeLabel,
  relationshipColumns,
  relationshipType
} from "./internal/BulkColumns.ts"
import * as BulkSources from "./internal/BulkSources.ts"
import { type ColumnType, keyOf, writeText, writeValue } from "./internal/BulkValues.ts"
import {
  BulkUnsupported,
  DuplicateKey,
  GraphExists,
  Interrupted,
  InvalidSource,
  LimitExceeded,
  LoadError,
  type LoadErrorReason,
  MalformedRow,
  UnknownEndpoint
} from "./LoadError.ts"

export type {
  /**
   * A column's type: `"infer"` (per value, the default) or one of `"integer"`, `"double"`,
   * `"boolean"`, `"string"`, `"array"`.
   *
   * @since 0.1.0
   * @category models
   */
  ColumnType
} from "./internal/BulkValues.ts"

/**
 * What the loader sends through: a connection's `execute`.
 *
 * @since 0.1.0
 * @category models
 */
export type Executor = Pick<RedisConnection["Service"], "execute">

/**
 * An input: a CSV or JSONL file, or a Stream of records.
 *
 * @since 0.1.0
 * @category models
 */
export type Input =
  | { readonly _tag: "Csv"; readonly path: string; readonly delimiter: string | undefined }
  | { readonly _tag: "Jsonl"; readonly path: string }
  | {
      readonly _tag: "Records"
      readonly name: string
      readonly records: Stream.Stream<{ readonly [key: string]: unknown }, LoadError>
    }

/**
 * A CSV file whose first row is the header.
 *
 * @since 0.1.0
 * @category inputs
 */
export const csv = (path: string, options: { readonly delimiter?: string | undefined } = {}): Input => ({
  _tag: "Csv",
  path,
  delimiter: options.delimiter
})

/**
 * A JSONL file: one JSON object per line; the first object's keys are the columns.
 *
 * @since 0.1.0
 * @category inputs
 */
export const jsonl = (path: string): Input => ({ _tag: "Jsonl", path })

/**
 * A Stream of records (plain objects); the first record's keys are the columns. `name`
 * stands for a file name in errors.
 *
 * @since 0.1.0
 * @category inputs
 */
export const records = <E>(
  name: string,
  stream: Stream.Stream<{ readonly [key: string]: unknown }, E>,
  onError: (error: E) => LoadError = (error) =>
    new LoadError({ reason: new InvalidSource({ source: name, detail: "the records stream failed", cause: error }) })
): Input => ({ _tag: "Records", name, records: Stream.mapError(stream, onError) })

/**
 * A node input.
 *
 * @since 0.1.0
 * @category models
 */
export interface NodeInput {
  /** The label; several joined with `:` (`Person:Employee`). Default: the file's base name. */
  readonly label?: string | undefined
  readonly input: Input
  /** The key column. Default: the first column. */
  readonly key?: string | undefined
  /** The id space of the keys. Default `""` (one space for every input). */
  readonly idSpace?: string | undefined
  /** Column types; unlisted columns are inferred. `"ignore"` leaves a column out. */
  readonly types?: { readonly [column: string]: ColumnType | "ignore" } | undefined
}

/**
 * A relationship input.
 *
 * @since 0.1.0
 * @category models
 */
export interface RelationshipInput {
  /** The relationship type. Default: the file's base name. */
  readonly type?: string | undefined
  readonly input: Input
  /** The column of the source node's key. Default: the first column. */
  readonly from?: string | undefined
  /** The column of the destination node's key. Default: the second column. */
  readonly to?: string | undefined
  /** Id spaces of the endpoints. Default `""`. */
  readonly fromSpace?: string | undefined
  readonly toSpace?: string | undefined
  readonly types?: { readonly [column: string]: ColumnType | "ignore" } | undefined
}

/**
 * Where a load is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  /** Nodes and relationships the server confirmed. */
  readonly nodes: number
  readonly relationships: number
  /** `GRAPH.BULK` commands the server confirmed. */
  readonly commands: number
  /** Rows read from the inputs so far (sent or waiting to be sent). */
  readonly rowsRead: number
  /** Bytes read from the input files so far, and their total size. */
  readonly bytesRead: number
  readonly bytesTotal: number
}

/**
 * What `load` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  readonly graph: string
  readonly nodes: number
  readonly relationships: number
  readonly commands: number
}

/**
 * Options of a load.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly nodes: ReadonlyArray<NodeInput>
  readonly relationships?: ReadonlyArray<RelationshipInput> | undefined
  /** Largest command, in bytes. Default 64 MB (as `falkordb-bulk-loader`); at most 1 GB. */
  readonly maxBufferSize?: number | undefined
  /** Largest token (one binary argument), in bytes. Default 64 MB; at most 512 MB. */
  readonly maxTokenSize?: number | undefined
  /** Most tokens per command. Default and at most 1024 × 1023. */
  readonly maxTokenCount?: number | undefined
  /** How long to wait for one command. Default: no limit. */
  readonly timeout?: Duration.Input | undefined
  /** Called after each chunk read and each command confirmed. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

const MB = 1_000_000

const fail = (reason: LoadErrorReason) => Effect.fail(new LoadError({ reason }))

/** One token being filled: its header and the entities after it. */
interface Token {
  readonly header: Uint8Array
  readonly body: Writer
  entities: number
}

/**
 * Loads the inputs into the new graph `graph` through `executor` (`GRAPH.BULK`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (executor: Executor, graph: string, options: Options): Effect.Effect<Summary, LoadError> =>
  Effect.gen(function* () {
    const maxBufferSize = options.maxBufferSize ?? 64 * MB
    const maxTokenSize = Math.min(options.maxTokenSize ?? 64 * MB, maxBufferSize)
    const maxTokenCount = options.maxTokenCount ?? 1024 * 1023
    const limitProblem = !(Number.isSafeInteger(maxBufferSize) && maxBufferSize > 0 && maxBufferSize <= 1024 * MB)
      ? `maxBufferSize must be 1 byte to 1 GB (got ${maxBufferSize})`
      : !(Number.isSafeInteger(maxTokenSize) && maxTokenSize > 0 && maxTokenSize <= 512 * MB)
        ? `maxTokenSize must be 1 byte to 512 MB (got ${maxTokenSize})`
        : !(Number.isSafeInteger(maxTokenCount) && maxTokenCount > 0 && maxTokenCount <= 1024 * 1023)
          ? `maxTokenCount must be 1 to ${1024 * 1023} (got ${maxTokenCount})`
          : typeof graph !== "string" || graph.length === 0
            ? "the graph name must be a non-empty string"
            : undefined
    if (limitProblem !== undefined) {
      return yield* fail(new InvalidSource({ source: "BulkLoader options", detail: limitProblem }))
    }
    const timeout = options.timeout ?? "Infinity"

    // Fail fast, before reading anything, when the key exists (BEGIN checks again, atomically).
    const exists = yield* executor
      .execute(["EXISTS", graph], { timeout })
      .pipe(Effect.mapError(toInterrupted(graph, zero, false)))
    if (exists === 1 || exists === 1n) return yield* fail(new GraphExists({ graph, serverMessage: undefined }))

    let bytesTotal = 0
    for (const input of [...options.nodes, ...(options.relationships ?? [])].map((i) => i.input)) {
      if (input._tag !== "Records") bytesTotal += (yield* BulkSources.fileSize(input.path)) ?? 0
    }

    // Node ids: the server numbers the nodes of a new graph 0, 1, 2 … in the order sent.
    const ids = new Map<string, Map<string, number>>()
    const space = (name: string) => {
      let map = ids.get(name)
      if (map === undefined) ids.set(name, (map = new Map()))
      return map
    }
    let nextNodeId = 0
    let rowsRead = 0
    let bytesRead = 0
    const committed = { nodes: 0, relationships: 0, commands: 0 }
    const progress = (): Progress => ({ ...committed, rowsRead, bytesRead, bytesTotal })
    const report =
      options.onProgress === undefined ? Effect.void : Effect.suspend(() => options.onProgress!(progress()))

    // The command being filled.
    let nodeTokens: Array<Uint8Array> = []
    let relationshipTokens: Array<Uint8Array> = []
    let pendingBytes = 0
    let pendingNodes = 0
    let pendingRelationships = 0
    let inFlight: Fiber.Fiber<void, LoadError> | undefined

    const send = (command: Array<string | Uint8Array>, nodes: number, relationships: number, first: boolean) =>
      executor.execute(command, { timeout }).pipe(
        Effect.mapError(toInterrupted(graph, committed, first)),
        Effect.flatMap((reply) => checkReply(reply, graph, committed, first)),
        Effect.andThen(
          Effect.sync(() => {
            committed.nodes += nodes
            committed.relationships += relationships
            committed.commands++
          })
        ),
        Effect.andThen(report)
      )

    /** Sends the filled command; the previous one must have succeeded first (order matters). */
    const flush = Effect.gen(function* () {
      if (nodeTokens.length === 0 && relationshipTokens.length === 0 && committed.commands + (inFlight ? 1 : 0) > 0)
        return
      if (inFlight !== undefined) yield* Fiber.join(inFlight)
      const first = committed.commands === 0
      const command = bulkCommand(graph, first, pendingNodes, pendingRelationships, nodeTokens, relationshipTokens)
      const nodes = pendingNodes
      const relationships = pendingRelationships
      nodeTokens = []
      relationshipTokens = []
      pendingBytes = 0
      pendingNodes = 0
      pendingRelationships = 0
      inFlight = yield* Effect.forkChild(send(command, nodes, relationships, first))
    })

    const closeToken = (token: Token, kind: "node" | "relationship") => {
      if (token.entities === 0) return
      const bytes = new Uint8Array(token.header.length + token.body.length)
      bytes.set(token.header)
      bytes.set(token.body.contents(), token.header.length)
      ;(kind === "node" ? nodeTokens : relationshipTokens).push(bytes)
      pendingBytes += bytes.length
      token.body.reset()
      token.entities = 0
    }

    /**
     * Adds one entity (in `row`) to `token`, closing the token or sending the command first
     * when a limit would be passed; returns whether the command must be sent now.
     */
    const add = (token: Token, row: Writer, kind: "node" | "relationship", source: string, line: number) => {
      const size = row.length
      if (token.header.length + size > maxTokenSize) {
        return new LimitExceeded({
          source,
          line,
          detail: `the row takes ${size} bytes, more than a token holds (maxTokenSize ${maxTokenSize} bytes)`
        })
      }
      let mustFlush = false
      if (token.header.length + token.body.length + size > maxTokenSize) closeToken(token, kind)
      const tokenCount = nodeTokens.length + relationshipTokens.length + (token.entities > 0 ? 1 : 0)
      if (
        pendingBytes + token.header.length + token.body.length + size > maxBufferSize ||
        (token.entities === 0 && tokenCount + 1 > maxTokenCount)
      ) {
        closeToken(token, kind)
        mustFlush = true
      }
      return mustFlush
    }

    /**
     * Runs one input through `onRow`, which fills tokens. `onRow` returns a problem, nothing
     * (the row is in), or the step that adds the row once the filled command is sent.
     */
    const readInput = (
      input: Input,
      onHeader: (columns: ReadonlyArray<string>) => LoadErrorReason | undefined,
      onRow: (
        line: number,
        cell: (index: number) => unknown,
        text: boolean
      ) => LoadErrorReason | (() => void) | undefined
    ) => {
      const source = inputName(input)
      let columns: ReadonlyArray<string> | undefined
      const onBytes = (n: number) => {
        bytesRead += n
      }
      const visitText = (row: BulkSources.TextRow) => {
        if (columns === undefined) {
          columns = row.cells.map((c) => c.trim())
          return onHeader(columns)
        }
        if (row.cells.length !== columns.length) {
          return new MalformedRow({
            source,
            line: row.line,
            column: undefined,
            detail: `expected ${columns.length} columns (${columns.join(", ")}), found ${row.cells.length}`
          })
        }
        rowsRead++
        return onRow(row.line, (i) => row.cells[i], true)
      }
      const visitObject = (row: BulkSources.ObjectRow) => {
        const record = row.record
        if (columns === undefined) {
          columns = Object.keys(record)
          const problem = onHeader(columns)
          if (problem !== undefined) return problem
        }
        for (const key in record) {
          if (!columns.includes(key)) {
            return new MalformedRow({
              source,
              line: row.line,
              column: key,
              detail: `a column the first record did not have (columns: ${columns.join(", ")})`
            })
          }
        }
        rowsRead++
        const names = columns
        return onRow(row.line, (i) => record[names[i]!], false)
      }
      // Rows are visited synchronously, a chunk at a time; only a filled command suspends.
      const each = <A>(
        rows: Stream.Stream<ReadonlyArray<A>, LoadError>,
        visit: (row: A) => LoadErrorReason | (() => void) | undefined
      ) =>
        Stream.runForEach(rows, (chunk) =>
          Effect.gen(function* () {
            for (const row of chunk) {
              const outcome = visit(row)
              if (outcome === undefined) continue
              if (typeof outcome === "function") {
                yield* flush
                outcome()
                continue
              }
              return yield* fail(outcome)
            }
            yield* report
          })
        )
      switch (input._tag) {
        case "Csv":
          return each(BulkSources.csvRows(input.path, { delimiter: input.delimiter }, onBytes), visitText)
        case "Jsonl":
          return each(BulkSources.jsonlRows(input.path, onBytes), visitObject)
        case "Records":
          return each(
            input.records.pipe(
              Stream.map((record, i) => ({ line: i + 1, record })),
              Stream.chunks
            ),
            visitObject
          )
      }
    }

    const openToken = (name: string, properties: ReadonlyArray<Column>): Token => ({
      header: encodeHeader(
        name,
        properties.map((p) => p.name)
      ),
      body: new Writer(),
      entities: 0
    })

    const scratch = new Writer(1024)
    /**
     * Places the entity in `scratch` into `token`: a problem, nothing (it is in), or the step
     * that adds it once the filled command is sent.
     */
    const place = (
      token: Token,
      kind: "node" | "relationship",
      source: string,
      line: number
    ): LoadErrorReason | (() => void) | undefined => {
      const verdict = add(token, scratch, kind, source, line)
      if (typeof verdict === "object") return verdict
      const append = () => {
        token.body.append(scratch)
        token.entities++
        if (kind === "node") pendingNodes++
        else pendingRelationships++
      }
      // A full command is sent first; the entity then opens the next one.
      if (verdict) return append
      append()
      return undefined
    }
    /** Writes the properties of a row into `scratch`; a problem names the column. */
    const writeProperties = (
      properties: ReadonlyArray<Column>,
      cell: (index: number) => unknown,
      text: boolean,
      source: string,
      line: number
    ): LoadErrorReason | undefined => {
      for (const column of properties) {
        try {
          const value = cell(column.index)
          if (text) writeText(scratch, value as string, column.type)
          else writeValue(scratch, value, column.type)
        } catch (error) {
          if (!(error instanceof ValueProblem)) throw error
          return new MalformedRow({ source, line, column: column.name, detail: error.message })
        }
      }
      return undefined
    }

    const loadAll = Effect.gen(function* () {
      // Nodes ---------------------------------------------------------------------------------
      for (const node of options.nodes) {
        const source = inputName(node.input)
        const label = nodeLabel(node, source)
        if (typeof label !== "string") return yield* fail(label)
        const keys = space(node.idSpace ?? "")
        let token: Token | undefined
        let keyIndex = 0
        let properties: ReadonlyArray<Column> = []
        yield* readInput(
          node.input,
          (names) => {
            const columns = nodeColumns(names, source, node)
            if ("_tag" in columns) return columns
            keyIndex = columns.key
            properties = columns.properties
            token = openToken(label, properties)
            return undefined
          },
          (line, cell, text) => {
            const key = keyOf(cell(keyIndex))
            if (key === undefined) {
              return new MalformedRow({
                source,
                line,
                column: node.key ?? "key (first column)",
                detail: "the node has no key"
              })
            }
            if (keys.has(key)) return new DuplicateKey({ source, line, idSpace: node.idSpace ?? "", key })
            scratch.reset()
            const problem = writeProperties(properties, cell, text, source, line)
            if (problem !== undefined) return problem
            const placed = place(token!, "node", source, line)
            if (typeof placed !== "object") keys.set(key, nextNodeId++)
            return placed
          }
        )
        if (token !== undefined) closeToken(token, "node")
      }

      // Relationships -------------------------------------------------------------------------
      for (const relationship of options.relationships ?? []) {
        const source = inputName(relationship.input)
        const type = relationshipType(relationship, source)
        if (typeof type !== "string") return yield* fail(type)
        const fromKeys = space(relationship.fromSpace ?? "")
        const toKeys = space(relationship.toSpace ?? "")
        let token: Token | undefined
        let fromIndex = 0
        let toIndex = 1
        let properties: ReadonlyArray<Column> = []
        yield* readInput(
          relationship.input,
          (names) => {
            const columns = relationshipColumns(names, source, relationship)
            if ("_tag" in columns) return columns
            fromIndex = columns.from
            toIndex = columns.to
            properties = columns.properties
            token = openToken(type, properties)
            return undefined
          },
          (line, cell, text) => {
            const endpoint = (index: number, keys: Map<string, number>, side: string, idSpace: string) => {
              const key = keyOf(cell(index))
              const id = key === undefined ? undefined : keys.get(key)
              if (id !== undefined) return id
              return new UnknownEndpoint({ source, line, column: side, idSpace, key: key ?? "" })
            }
            const from = endpoint(
              fromIndex,
              fromKeys,
              relationship.from ?? "from (first column)",
              relationship.fromSpace ?? ""
            )
            if (typeof from !== "number") return from
            const to = endpoint(toIndex, toKeys, relationship.to ?? "to (second column)", relationship.toSpace ?? "")
            if (typeof to !== "number") return to
            scratch.reset()
            scratch.u64(from)
            scratch.u64(to)
            const problem = writeProperties(properties, cell, text, source, line)
            if (problem !== undefined) return problem
            return place(token!, "relationship", source, line)
          }
        )
        if (token !== undefined) closeToken(token, "relationship")
      }

      yield* flush
      if (inFlight !== undefined) yield* Fiber.join(inFlight)
    })
    // A row or input that fails after the server confirmed commands leaves a partial graph:
    // say so (the failure of a command still in flight comes first, from its join).
    yield* loadAll.pipe(
      Effect.catch((error) =>
        Effect.gen(function* () {
          if (inFlight !== undefined) yield* Fiber.join(inFlight)
          const reason = error.reason
          if (committed.commands === 0 || reason._tag === "Interrupted") return yield* Effect.fail(error)
          return yield* fail(new Interrupted({ graph, committed: { ...committed }, uncertain: false, cause: reason }))
        })
      )
    )
    return { graph, nodes: committed.nodes, relationships: committed.relationships, commands: committed.commands }
  }).pipe(Effect.withSpan("BulkLoader.load", { attributes: { "db.system.name": "falkordb", "db.namespace": graph } }))

const zero = { nodes: 0, relationships: 0, commands: 0 }

const unsupported = /unknown command|NOPERM|not allowed|unknown subcommand|command not found/i

/** The reply of one command: `N nodes created, M edges created`, or an error to classify. */
const checkReply = (
  reply: Reply,
  graph: string,
  committed: { readonly nodes: number; readonly relationships: number; readonly commands: number },
  first: boolean
): Effect.Effect<void, LoadError> => {
  if (!(reply instanceof ErrorReply)) return Effect.void
  const message = reply.message
  if (first && message.includes("already exists")) return fail(new GraphExists({ graph, serverMessage: message }))
  if (first && unsupported.test(message)) return fail(new BulkUnsupported({ graph, serverMessage: message }))
  return fail(
    new Interrupted({
      graph,
      committed: { ...committed },
      uncertain: false,
      cause: fromServer(message, { graph, command: "GRAPH.BULK" })
    })
  )
}

/** An engine failure of one command: a reply error is classified, anything else interrupts. */
const toInterrupted =
  (
    graph: string,
    committed: { readonly nodes: number; readonly relationships: number; readonly commands: number },
    first: boolean
  ) =>
  (error: RedisError): LoadError => {
    const reason = error.reason
    if (reason._tag === "Reply") {
      if (first && unsupported.test(reason.serverMessage)) {
        return new LoadError({ reason: new BulkUnsupported({ graph, serverMessage: reason.serverMessage }) })
      }
      if (first && reason.serverMessage.includes("already exists")) {
        return new LoadError({ reason: new GraphExists({ graph, serverMessage: reason.serverMessage }) })
      }
    }
    return new LoadError({
      reason: new Interrupted({
        graph,
        committed: { ...committed },
        uncertain: error.written,
        cause: fromRedis(error, { graph, command: "GRAPH.BULK" })
      })
    })
  }
