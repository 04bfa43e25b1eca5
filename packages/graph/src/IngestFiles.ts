/**
 * The bulk loader's files loaded through `Ingest` (batched `UNWIND $rows AS r …` Cypher
 * queries) instead of `GRAPH.BULK`: for a server, a proxy or an ACL that refuses `GRAPH.BULK`
 * (`LoadError` reason `BulkUnsupported`), or to add to a graph that already exists.
 *
 * It takes `BulkLoader.load`'s inputs and builds the same graph from them: the same node and
 * relationship inputs (`BulkLoader.csv`, `jsonl`, `records`), labels and types from file
 * names, key columns (stored as a property unless the name starts with `_`), id spaces,
 * declared column types, the same value inference (a whole-number double such as `3.0` stays a
 * double), and the same `LoadError` reasons for a malformed row, a duplicate key, an unknown
 * endpoint or a graph that already exists.
 *
 * How: nodes first, each batch `CREATE`s its nodes and returns their internal ids, which the
 * loader keeps per key (one map entry per node, as `BulkLoader` does); relationships then find
 * their endpoints by id (`NodeByIdSeek`, no index needed, no temporary property to remove).
 * The ids are only valid while nobody deletes nodes of the graph during the load: a batch that
 * creates fewer relationships than it has rows (an endpoint deleted meanwhile) fails the load
 * with reason `EndpointsGone`, never silently (a deleted id that FalkorDB already reused for a
 * new node cannot be told apart: do not delete nodes while loading).
 *
 * It is slower than `GRAPH.BULK` (each row is Cypher text the server parses and runs), and a
 * load that fails part way leaves the batches confirmed so far (`Interrupted` says how many).
 *
 * @example
 * ```ts
 * import * as BulkLoader from "@effect-falkordb/graph/BulkLoader"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as IngestFiles from "@effect-falkordb/graph/IngestFiles"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const summary = yield* IngestFiles.load(db, "social", {
 *     nodes: [{ label: "Person", input: BulkLoader.csv("people.csv") }],
 *     relationships: [{ type: "KNOWS", input: BulkLoader.csv("knows.csv") }],
 *     batchSize: 1000,
 *     onProgress: (p) => Effect.log(`${p.nodes} nodes, ${p.relationships} relationships`)
 *   })
 *   return summary.nodes
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Executor, Input, NodeInput, Progress, RelationshipInput, Summary } from "./BulkLoader.ts"
import type { ParameterValue } from "./Cypher.ts"
import { fromRedis } from "./FalkorError.ts"
import type { QueryResult } from "./Graph.ts"
import * as Identifier from "./Identifier.ts"
import * as Ingest from "./Ingest.ts"
import { ValueProblem, Writer } from "./internal/BulkEncoder.ts"
import {
  type Column,
  inputName,
  nodeColumns,
  nodeLabel,
  relationshipColumns,
  relationshipType
} from "./internal/BulkColumns.ts"
import * as BulkSources from "./internal/BulkSources.ts"
import { keyOf, writeText, writeValue } from "./internal/BulkValues.ts"
import {
  DuplicateKey,
  EndpointsGone,
  GraphExists,
  Interrupted,
  InvalidSource,
  LoadError,
  type LoadErrorReason,
  MalformedRow,
  UnknownEndpoint
} from "./LoadError.ts"

/**
 * What the load needs: a connection's `execute` (to see whether the graph exists) and a
 * graph's `query` (`Ingest.Target`). The `FalkorDB` service is one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Client {
  readonly connection: Executor
  readonly graph: (name: string) => Ingest.Target
}

/**
 * Options of a load: `BulkLoader`'s inputs, and how the batches go.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly nodes: ReadonlyArray<NodeInput>
  readonly relationships?: ReadonlyArray<RelationshipInput> | undefined
  /** Rows per query. Default 1000. */
  readonly batchSize?: number | undefined
  /** Batches in flight at once. Default 2 (see `Ingest.Options`). */
  readonly concurrency?: number | undefined
  /** Retries of a batch that never ran (see `Ingest.Options`). */
  readonly retry?: { readonly times?: number | undefined; readonly baseDelay?: Duration.Input | undefined } | undefined
  /**
   * A graph that already exists: `"fail"` (the default, `GraphExists`, as `BulkLoader`) or
   * `"add"` (the nodes and relationships are added to it; keys refer to the loaded nodes only).
   */
  readonly existing?: "fail" | "add" | undefined
  /**
   * Called after each chunk read and each batch confirmed; `commands` counts the batches
   * (queries) the server confirmed.
   */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

const fail = (reason: LoadErrorReason) => Effect.fail(new LoadError({ reason }))

/** A problem with an input's names (a label, a type, a property key), as that input's `InvalidSource`. */
const invalidSource = (source: string) => (e: { readonly message: string }) =>
  new LoadError({ reason: new InvalidSource({ source, detail: e.message }) })

/** A row read from an input: where it is and its cells (text from CSV, values otherwise). */
interface ReadRow {
  readonly line: number
  readonly cell: (index: number) => unknown
  readonly text: boolean
}

/**
 * The rows of `input`, a chunk at a time, checked as `BulkLoader` checks them (a row of CSV
 * with another column count, a record with a column the first lacked); `onHeader` sees the
 * column names before the first row.
 */
const readRows = (
  input: Input,
  onHeader: (columns: ReadonlyArray<string>) => LoadErrorReason | undefined,
  onBytes: (n: number) => void
): Stream.Stream<ReadonlyArray<ReadRow>, LoadError> => {
  const source = inputName(input)
  let columns: ReadonlyArray<string> | undefined
  const text = (rows: ReadonlyArray<BulkSources.TextRow>) =>
    Effect.suspend(() => {
      const out: Array<ReadRow> = []
      for (const row of rows) {
        if (columns === undefined) {
          columns = row.cells.map((c) => c.trim())
          const problem = onHeader(columns)
          if (problem !== undefined) return fail(problem)
          continue
        }
        if (row.cells.length !== columns.length) {
          return fail(
            new MalformedRow({
              source,
              line: row.line,
              column: undefined,
              detail: `expected ${columns.length} columns (${columns.join(", ")}), found ${row.cells.length}`
            })
          )
        }
        const cells = row.cells
        out.push({ line: row.line, cell: (i) => cells[i], text: true })
      }
      return Effect.succeed(out)
    })
  const objects = (rows: ReadonlyArray<BulkSources.ObjectRow>) =>
    Effect.suspend(() => {
      const out: Array<ReadRow> = []
      for (const row of rows) {
        const record = row.record
        if (columns === undefined) {
          columns = Object.keys(record)
          const problem = onHeader(columns)
          if (problem !== undefined) return fail(problem)
        }
        for (const key in record) {
          if (!columns.includes(key)) {
            return fail(
              new MalformedRow({
                source,
                line: row.line,
                column: key,
                detail: `a column the first record did not have (columns: ${columns.join(", ")})`
              })
            )
          }
        }
        const names = columns
        out.push({ line: row.line, cell: (i) => record[names[i]!], text: false })
      }
      return Effect.succeed(out)
    })
  switch (input._tag) {
    case "Csv":
      return Stream.mapEffect(BulkSources.csvRows(input.path, { delimiter: input.delimiter }, onBytes), text)
    case "Jsonl":
      return Stream.mapEffect(BulkSources.jsonlRows(input.path, onBytes), objects)
    case "Records":
      return input.records.pipe(
        Stream.map((record, i) => ({ line: i + 1, record })),
        Stream.chunks,
        Stream.mapEffect(objects)
      )
  }
}

/**
 * The values of a row's properties, inferred or coerced by the very code `BulkLoader` encodes
 * them with (written as GRAPH.BULK bytes, then read back), so both loaders agree on every
 * type. A whole-number double (`3.0`) would be sent as the JavaScript number 3, which the
 * parameter encoder writes as the integer literal `3`: such a value goes into the row's last
 * slot instead, a map `{d<position>: 3}` the query reads through `toFloat`.
 */
// One scratch buffer: a row is written and read back synchronously, so loads never interleave in it.
const scratch = new Writer(1024)
const utf8 = new TextDecoder()

const readBack = (doubles: Record<string, ParameterValue>, into: Array<ParameterValue>): void => {
  const bytes = scratch.contents()
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 0
  // `position`: the value's place in the row, or -1 inside an array.
  const value = (position: number): ParameterValue => {
    const tag = bytes[at++]
    switch (tag) {
      case 0:
        return null
      case 1:
        return bytes[at++] === 1
      case 2: {
        const n = view.getFloat64(at, true)
        at += 8
        if (position >= 0 && Number.isInteger(n)) {
          doubles[`d${position}`] = n
          return null
        }
        return n
      }
      case 3: {
        const end = bytes.indexOf(0, at)
        const s = utf8.decode(bytes.subarray(at, end))
        at = end + 1
        return s
      }
      case 4: {
        const n = view.getBigInt64(at, true)
        at += 8
        return n
      }
      default: {
        const length = Number(view.getBigInt64(at, true))
        at += 8
        const items: Array<ParameterValue> = []
        // Inside an array a whole number is an integer for both loaders (BulkEncoder.value).
        for (let i = 0; i < length; i++) items.push(value(-1))
        return items
      }
    }
  }
  while (at < bytes.length) into.push(value(into.length))
}

/** Appends the row's property values (and the map of whole-number doubles) to `into`. */
const properties = (
  columns: ReadonlyArray<Column>,
  row: ReadRow,
  source: string,
  into: Array<ParameterValue>
): LoadErrorReason | undefined => {
  scratch.reset()
  for (const column of columns) {
    try {
      const value = row.cell(column.index)
      if (row.text) writeText(scratch, value as string, column.type)
      else writeValue(scratch, value, column.type)
    } catch (error) {
      if (!(error instanceof ValueProblem)) throw error
      return new MalformedRow({ source, line: row.line, column: column.name, detail: error.message })
    }
  }
  const doubles: Record<string, ParameterValue> = {}
  readBack(doubles, into)
  into.push(doubles)
  return undefined
}

/**
 * `SET v.a = r[1], …`: a property from its place in the row; a column that may hold a
 * whole-number double reads the row's map of those first (a null value sets nothing).
 * `coalesce`, not `CASE`: FalkorDB evaluates `toFloat` of every branch, and fails on a boolean.
 */
const setClause = (variable: string, columns: ReadonlyArray<Column>, first: number) =>
  Effect.gen(function* () {
    if (columns.length === 0) return ""
    const flags = first + columns.length
    const sets: Array<string> = []
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i]!
      const at = `r[${first + i}]`
      const name = yield* Identifier.quote(column.name, "property")
      const expression =
        column.type === "double" || column.type === "infer" ? `coalesce(toFloat(r[${flags}].d${first + i}), ${at})` : at
      sets.push(`${variable}.${name} = ${expression}`)
    }
    return ` SET ${sets.join(", ")}`
  })

const labelsOf = (label: string) =>
  Effect.map(
    Effect.forEach(label.split(":"), (one) => Identifier.quote(one, "label")),
    (quoted) => quoted.map((q) => `:${q}`).join("")
  )

/**
 * Loads the inputs into the graph `graph` through `Ingest`'s batched queries: nodes first,
 * then relationships. Fails with `GraphExists` when the graph exists (unless `existing:
 * "add"`), and with the `LoadError` of the first bad row or failed batch; after the first
 * confirmed batch a failure is `Interrupted`, with what was confirmed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (client: Client, graph: string, options: Options): Effect.Effect<Summary, LoadError> =>
  Effect.gen(function* () {
    if (typeof graph !== "string" || graph.length === 0) {
      return yield* fail(
        new InvalidSource({ source: "IngestFiles options", detail: "the graph name must be a non-empty string" })
      )
    }
    if ((options.existing ?? "fail") === "fail") {
      const exists = yield* client.connection.execute(["EXISTS", graph]).pipe(
        Effect.mapError(
          (error) =>
            new LoadError({
              reason: new Interrupted({
                graph,
                committed: { nodes: 0, relationships: 0, commands: 0 },
                uncertain: false,
                cause: fromRedis(error, { graph, command: "EXISTS" })
              })
            })
        )
      )
      if (exists === 1 || exists === 1n) return yield* fail(new GraphExists({ graph, serverMessage: undefined }))
    }
    const target = client.graph(graph)

    let bytesTotal = 0
    for (const input of [...options.nodes, ...(options.relationships ?? [])].map((i) => i.input)) {
      if (input._tag !== "Records") bytesTotal += (yield* BulkSources.fileSize(input.path)) ?? 0
    }
    let rowsRead = 0
    let bytesRead = 0
    const onBytes = (n: number) => {
      bytesRead += n
    }
    const committed = { nodes: 0, relationships: 0, commands: 0 }
    const report =
      options.onProgress === undefined
        ? Effect.void
        : Effect.suspend(() => options.onProgress!({ ...committed, rowsRead, bytesRead, bytesTotal }))

    // Node keys per id space → internal node id (-1 until the node's batch is confirmed).
    const ids = new Map<string, Map<string, number>>()
    const space = (name: string) => {
      let map = ids.get(name)
      if (map === undefined) ids.set(name, (map = new Map()))
      return map
    }

    /**
     * Runs the rows of one input through Ingest. The query depends on the header, read only
     * when the stream starts, so the target runs `query.text` (set by then: no batch is sent
     * before its first row is read) rather than the placeholder Ingest is given.
     */
    const ingest = (
      rows: Stream.Stream<ReadonlyArray<ParameterValue>, LoadError>,
      query: { text: string },
      confirmed: (result: QueryResult, rows: number) => void
    ) =>
      Ingest.run(
        {
          name: target.name,
          query: (_, parameters) =>
            target
              .query(query.text, parameters)
              .pipe(Effect.tap((result) => Effect.sync(() => confirmed(result, parameters.rows.length))))
        },
        Stream.flattenIterable(Stream.tap(rows, () => report)),
        {
          query: "UNWIND $rows AS r",
          batchSize: options.batchSize,
          concurrency: options.concurrency,
          retry: options.retry,
          onProgress: () => report
        }
      )

    const loadAll = Effect.gen(function* () {
      for (const node of options.nodes) {
        const source = inputName(node.input)
        const label = nodeLabel(node, source)
        if (typeof label !== "string") return yield* fail(label)
        const labels = yield* labelsOf(label).pipe(Effect.mapError(invalidSource(source)))
        const idSpace = node.idSpace ?? ""
        const keys = space(idSpace)
        const query = { text: "" }
        let keyIndex = 0
        let columns: ReadonlyArray<Column> = []
        const rows = readRows(
          node.input,
          (names) => {
            const found = nodeColumns(names, source, node)
            if ("_tag" in found) return found
            keyIndex = found.key
            columns = found.properties
            return undefined
          },
          onBytes
        ).pipe(
          Stream.mapEffect((chunk) =>
            Effect.gen(function* () {
              if (query.text === "" && chunk.length > 0) {
                // Row: [key, ...properties, whole-number doubles]; the key travels to pair the id back.
                const set = yield* setClause("n", columns, 1).pipe(Effect.mapError(invalidSource(source)))
                query.text = `UNWIND $rows AS r CREATE (n${labels})${set} RETURN r[0], ID(n)`
              }
              const out: Array<ReadonlyArray<ParameterValue>> = []
              for (const row of chunk) {
                rowsRead++
                const key = keyOf(row.cell(keyIndex))
                if (key === undefined) {
                  return yield* fail(
                    new MalformedRow({
                      source,
                      line: row.line,
                      column: node.key ?? "key (first column)",
                      detail: "the node has no key"
                    })
                  )
                }
                if (keys.has(key)) return yield* fail(new DuplicateKey({ source, line: row.line, idSpace, key }))
                const values: Array<ParameterValue> = [key]
                const problem = properties(columns, row, source, values)
                if (problem !== undefined) return yield* fail(problem)
                keys.set(key, -1)
                out.push(values)
              }
              return out
            })
          )
        )
        yield* ingest(rows, query, (result) => {
          for (const row of result.rows) keys.set(row.getAt(0) as string, Number(row.getAt(1)))
          committed.nodes += result.statistics.nodesCreated
          committed.commands++
        })
      }

      for (const relationship of options.relationships ?? []) {
        const source = inputName(relationship.input)
        const type = relationshipType(relationship, source)
        if (typeof type !== "string") return yield* fail(type)
        const quotedType = yield* Identifier.quote(type, "relationship type").pipe(
          Effect.mapError(invalidSource(source))
        )
        const fromSpace = relationship.fromSpace ?? ""
        const toSpace = relationship.toSpace ?? ""
        const fromKeys = space(fromSpace)
        const toKeys = space(toSpace)
        const query = { text: "" }
        let fromIndex = 0
        let toIndex = 1
        let columns: ReadonlyArray<Column> = []
        const rows = readRows(
          relationship.input,
          (names) => {
            const found = relationshipColumns(names, source, relationship)
            if ("_tag" in found) return found
            fromIndex = found.from
            toIndex = found.to
            columns = found.properties
            return undefined
          },
          onBytes
        ).pipe(
          Stream.mapEffect((chunk) =>
            Effect.gen(function* () {
              if (query.text === "" && chunk.length > 0) {
                // Row: [from id, to id, ...properties, whole-number doubles]. The ids go through
                // WITH: FalkorDB seeks a node by id (NodeByIdSeek) only for a projected
                // variable; `ID(a) = r[0]` would scan every node for every row.
                const set = yield* setClause("e", columns, 2).pipe(Effect.mapError(invalidSource(source)))
                query.text = `UNWIND $rows AS r WITH r, r[0] AS f, r[1] AS t MATCH (a) WHERE ID(a) = f MATCH (b) WHERE ID(b) = t CREATE (a)-[e:${quotedType}]->(b)${set}`
              }
              const out: Array<ReadonlyArray<ParameterValue>> = []
              for (const row of chunk) {
                rowsRead++
                const endpoint = (index: number, keys: Map<string, number>, side: string, idSpace: string) => {
                  const key = keyOf(row.cell(index))
                  const id = key === undefined ? undefined : keys.get(key)
                  if (id !== undefined && id >= 0) return id
                  return new UnknownEndpoint({ source, line: row.line, column: side, idSpace, key: key ?? "" })
                }
                const from = endpoint(fromIndex, fromKeys, relationship.from ?? "from (first column)", fromSpace)
                if (typeof from !== "number") return yield* fail(from)
                const to = endpoint(toIndex, toKeys, relationship.to ?? "to (second column)", toSpace)
                if (typeof to !== "number") return yield* fail(to)
                const values: Array<ParameterValue> = [from, to]
                const problem = properties(columns, row, source, values)
                if (problem !== undefined) return yield* fail(problem)
                out.push(values)
              }
              return out
            })
          )
        )
        // Each row creates one relationship, unless an endpoint vanished since its node's batch.
        const sent = { rows: 0, created: 0 }
        yield* ingest(rows, query, (result, batchRows) => {
          committed.relationships += result.statistics.relationshipsCreated
          committed.commands++
          sent.rows += batchRows
          sent.created += result.statistics.relationshipsCreated
        })
        if (sent.created < sent.rows) return yield* fail(new EndpointsGone({ source, ...sent }))
      }
      yield* report
    })

    // After the first confirmed batch the graph holds a partial load: say so, as BulkLoader does.
    yield* loadAll.pipe(
      Effect.catch((error) => {
        const reason = error.reason
        if (committed.commands === 0 || reason._tag === "Interrupted") return Effect.fail(error)
        return fail(new Interrupted({ graph, committed: { ...committed }, uncertain: false, cause: reason }))
      })
    )
    if (committed.commands === 0 && (options.existing ?? "fail") === "fail") {
      // Nothing to load: the graph is still made, empty, as GRAPH.BULK makes it.
      yield* target.query("RETURN 0", { rows: [] }).pipe(
        Effect.mapError(
          (cause) =>
            new LoadError({
              reason: new Interrupted({ graph, committed: { ...committed }, uncertain: false, cause })
            })
        )
      )
    }
    return { graph, nodes: committed.nodes, relationships: committed.relationships, commands: committed.commands }
  }).pipe(Effect.withSpan("IngestFiles.load", { attributes: { "db.system.name": "falkordb", "db.namespace": graph } }))
