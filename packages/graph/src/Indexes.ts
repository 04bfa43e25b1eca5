/**
 * Range, full-text and vector indexes of one graph: create, drop, list (typed, with the
 * build status parsed) and wait until operational.
 *
 * Labels and property names are always written as Cypher identifiers
 * ({@link Identifier.quote}): a label `Odd Label` works, a name that cannot be quoted is
 * refused with a typed error before anything is sent. Options are validated and written as
 * literals (numbers, one of the similarity functions) or sent as parameters (full-text
 * language, stop words and field weights).
 *
 * Index creation is asynchronous on the server: `CREATE … INDEX` returns at once and the
 * index is `[Indexing] n/total: UNDER CONSTRUCTION` until it has seen every entity. Use
 * {@link Indexes.awaitOperational} before relying on it (a vector query against an index
 * still building fails with `Invalid arguments for procedure …`). An existing index fails
 * creation with the reason `IndexExists`, dropping a missing one with `IndexNotFound`.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as Indexes from "@effect-falkordb/graph/Indexes"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const indexes = Indexes.make(db.graph("movies"))
 *   yield* indexes.createRange({ label: "Movie", properties: ["title"] })
 *   yield* indexes.createVector({ label: "Movie", property: "embedding", dimension: 768, similarityFunction: "cosine" })
 *   yield* indexes.awaitOperational({ timeout: "30 seconds" })
 *   return yield* indexes.list()
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type { FalkorError } from "./FalkorError.ts"
import type { Graph, Statistics } from "./Graph.ts"
import { quoteOrThrow, variableFor } from "./Identifier.ts"
import { invalidArgument, malformed, waitTimeout } from "./internal/errors.ts"
import * as Procedures from "./Procedures.ts"
import type { Row } from "./Row.ts"
import type { FalkorMap, FalkorValue } from "./Value.ts"

/**
 * What an index or constraint is on.
 *
 * @since 0.1.0
 * @category models
 */
export type EntityType = "NODE" | "RELATIONSHIP"

/**
 * The kind of an index field.
 *
 * @since 0.1.0
 * @category models
 */
export type IndexType = "RANGE" | "FULLTEXT" | "VECTOR"

/**
 * The build status of an index, parsed from `db.indexes()`'s `status` column.
 *
 * - `Operational`: `OPERATIONAL`.
 * - `UnderConstruction`: `[Indexing] 3161/20000: UNDER CONSTRUCTION` (`indexed`/`total`
 *   when the server says them).
 * - `Other`: any other text, kept as sent.
 *
 * @since 0.1.0
 * @category models
 */
export type IndexStatus =
  | { readonly _tag: "Operational" }
  | { readonly _tag: "UnderConstruction"; readonly indexed: number | undefined; readonly total: number | undefined }
  | { readonly _tag: "Other"; readonly text: string }

/**
 * One row of `CALL db.indexes()`: an index of one label (or relationship type), possibly
 * over several properties of several kinds.
 *
 * @since 0.1.0
 * @category models
 */
export interface IndexInfo {
  readonly label: string
  readonly properties: ReadonlyArray<string>
  /** The index kinds of each property (`{ title: ["RANGE", "FULLTEXT"] }`). */
  readonly types: { readonly [property: string]: ReadonlyArray<IndexType> }
  /** Per-property options (vector: `dimension`, `similarityFunction`, `M`, `efConstruction`, `efRuntime`). */
  readonly options: { readonly [property: string]: FalkorMap }
  /** The full-text language (the server reports one for every index). */
  readonly language: string | undefined
  readonly stopwords: ReadonlyArray<string>
  readonly entityType: EntityType
  readonly status: IndexStatus
  /** The status text as sent. */
  readonly statusText: string
  /** The search engine's `info` map, when listed (its contents vary between server builds). */
  readonly info: FalkorMap | undefined
}

/**
 * A range index: `CREATE INDEX FOR (l:Label) ON (l.p, …)`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RangeIndexSpec {
  readonly label: string
  readonly properties: ReadonlyArray<string>
  /** Default `"NODE"`. */
  readonly entityType?: EntityType | undefined
}

/**
 * A full-text index. Without options it is `CREATE FULLTEXT INDEX FOR … ON (…)`; with a
 * language, stop words or field weights (node labels only) it is
 * `CALL db.idx.fulltext.createNodeIndex($options, $field…)` with every value a parameter.
 *
 * @since 0.1.0
 * @category models
 */
export interface FulltextIndexSpec {
  readonly label: string
  readonly properties: ReadonlyArray<string>
  readonly entityType?: EntityType | undefined
  /** Stemming language, e.g. `"german"`. */
  readonly language?: string | undefined
  readonly stopwords?: ReadonlyArray<string> | undefined
  /** Field weights (default 1), by property. */
  readonly weights?: { readonly [property: string]: number } | undefined
}

/**
 * A vector index on one property.
 *
 * @since 0.1.0
 * @category models
 */
export interface VectorIndexSpec {
  readonly label: string
  readonly property: string
  readonly entityType?: EntityType | undefined
  readonly dimension: number
  readonly similarityFunction: "euclidean" | "cosine"
  /** HNSW: maximum outgoing edges per node. */
  readonly M?: number | undefined
  /** HNSW: candidates considered while building. */
  readonly efConstruction?: number | undefined
  /** HNSW: candidates considered while querying. */
  readonly efRuntime?: number | undefined
}

/**
 * Which index to drop.
 *
 * @since 0.1.0
 * @category models
 */
export interface DropSpec {
  readonly type: IndexType
  readonly label: string
  readonly properties: ReadonlyArray<string>
  readonly entityType?: EntityType | undefined
}

/**
 * Which indexes to wait for, and how long.
 *
 * @since 0.1.0
 * @category models
 */
export interface AwaitOptions {
  /** Only indexes of this label or relationship type (default: every index). */
  readonly label?: string | undefined
  /** Only indexes covering this property (with `label`). */
  readonly property?: string | undefined
  /** Give up after this long with `WaitTimeout` showing the last status. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
  /** The polling schedule. Default: every 100 ms, doubling up to 1 second. */
  readonly schedule?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * The index operations of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface Indexes {
  /** Creates a range index; the statistics say `Indices created: n`. */
  readonly createRange: (spec: RangeIndexSpec) => Effect.Effect<Statistics, FalkorError>
  /** Creates a full-text index. */
  readonly createFulltext: (spec: FulltextIndexSpec) => Effect.Effect<Statistics, FalkorError>
  /** Creates a vector index. */
  readonly createVector: (spec: VectorIndexSpec) => Effect.Effect<Statistics, FalkorError>
  /**
   * Drops an index. A drop of an index that never existed fails (`Unable to drop index on
   * :Doc(nothing): no such index.`); FalkorDB 4.18 answers a second drop of a range index it
   * just dropped with no `Indices deleted` (the statistics say 0).
   */
  readonly drop: (spec: DropSpec) => Effect.Effect<Statistics, FalkorError>
  /** `CALL db.indexes()`, typed. */
  readonly list: () => Effect.Effect<ReadonlyArray<IndexInfo>, FalkorError>
  /**
   * Polls `db.indexes()` until every matching index is `OPERATIONAL`; at the deadline (or
   * when a finite schedule runs out) fails with `WaitTimeout` showing the last status, or
   * with `InvalidArgument` when no index matched.
   */
  readonly awaitOperational: (options?: AwaitOptions) => Effect.Effect<ReadonlyArray<IndexInfo>, FalkorError>
}

const similarityFunctions = new Set(["euclidean", "cosine"])

const pattern = (label: string, entityType: EntityType | undefined, graph: string): [string, string] => {
  const variable = variableFor(label)
  const quoted = quoteOrThrow(label, entityType === "RELATIONSHIP" ? "relationship type" : "label", graph)
  return [entityType === "RELATIONSHIP" ? `()-[${variable}:${quoted}]-()` : `(${variable}:${quoted})`, variable]
}

const onClause = (variable: string, properties: ReadonlyArray<string>, graph: string): string => {
  if (properties.length === 0) throw invalidArgument("properties", "an index needs at least one property", graph)
  return `(${properties.map((p) => `${variable}.${quoteOrThrow(p, "property name", graph)}`).join(", ")})`
}

const positiveInteger = (value: number | undefined, name: string, graph: string): string | undefined => {
  if (value === undefined) return undefined
  if (!Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument(name, `the vector index option ${name} must be a positive integer, got ${value}`, graph)
  }
  return `${name}: ${value}`
}

/**
 * The query text of a range index creation (`CREATE INDEX FOR (d:Doc) ON (d.n)`).
 *
 * @since 0.1.0
 * @category query text
 */
export const rangeIndexText = (spec: RangeIndexSpec, graph = ""): string => {
  const [p, v] = pattern(spec.label, spec.entityType, graph)
  return `CREATE INDEX FOR ${p} ON ${onClause(v, spec.properties, graph)}`
}

/**
 * The query text of a full-text index creation without options.
 *
 * @since 0.1.0
 * @category query text
 */
export const fulltextIndexText = (spec: FulltextIndexSpec, graph = ""): string => {
  const [p, v] = pattern(spec.label, spec.entityType, graph)
  return `CREATE FULLTEXT INDEX FOR ${p} ON ${onClause(v, spec.properties, graph)}`
}

/**
 * The query text of a vector index creation; options in the server's documented order.
 *
 * @since 0.1.0
 * @category query text
 */
export const vectorIndexText = (spec: VectorIndexSpec, graph = ""): string => {
  const [p, v] = pattern(spec.label, spec.entityType, graph)
  if (!similarityFunctions.has(spec.similarityFunction)) {
    throw invalidArgument(
      "similarityFunction",
      `must be "euclidean" or "cosine", got ${spec.similarityFunction}`,
      graph
    )
  }
  const options = [
    positiveInteger(spec.dimension, "dimension", graph),
    `similarityFunction: '${spec.similarityFunction}'`,
    positiveInteger(spec.M, "M", graph),
    positiveInteger(spec.efConstruction, "efConstruction", graph),
    positiveInteger(spec.efRuntime, "efRuntime", graph)
  ].filter((o) => o !== undefined)
  return `CREATE VECTOR INDEX FOR ${p} ON ${onClause(v, [spec.property], graph)} OPTIONS {${options.join(", ")}}`
}

/**
 * The query text of a drop (`DROP VECTOR INDEX FOR (d:Doc) ON (d.emb)`).
 *
 * @since 0.1.0
 * @category query text
 */
export const dropIndexText = (spec: DropSpec, graph = ""): string => {
  const [p, v] = pattern(spec.label, spec.entityType, graph)
  const kind = spec.type === "RANGE" ? "" : `${spec.type} `
  return `DROP ${kind}INDEX FOR ${p} ON ${onClause(v, spec.properties, graph)}`
}

const statusPattern = /^\[Indexing\] (\d+)\/(\d+): UNDER CONSTRUCTION$/

/**
 * Parses a `status` text of `db.indexes()`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseStatus = (text: string): IndexStatus => {
  if (text === "OPERATIONAL") return { _tag: "Operational" }
  const progress = statusPattern.exec(text)
  if (progress !== null) {
    return { _tag: "UnderConstruction", indexed: Number(progress[1]), total: Number(progress[2]) }
  }
  if (text.endsWith("UNDER CONSTRUCTION")) return { _tag: "UnderConstruction", indexed: undefined, total: undefined }
  return { _tag: "Other", text }
}

const isMap = (v: FalkorValue | undefined): v is FalkorMap =>
  typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype
const isStringList = (v: FalkorValue | undefined): v is ReadonlyArray<string> =>
  Array.isArray(v) && v.every((s) => typeof s === "string")

/**
 * Parses one row of `CALL db.indexes()` (any subset of its columns that includes
 * `label` and `properties`; absent columns get neutral values).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseIndexRow = (row: Row, graph: string): IndexInfo => {
  const bad = (column: string) =>
    malformed(`db.indexes() column ${column} has an unexpected value`, graph, "db.indexes")
  const label = row.get("label")
  const properties = row.get("properties")
  if (typeof label !== "string") throw bad("label")
  if (!isStringList(properties)) throw bad("properties")
  const typesValue = row.get("types")
  const types: Record<string, ReadonlyArray<IndexType>> = {}
  if (typesValue !== undefined) {
    if (!isMap(typesValue)) throw bad("types")
    for (const [property, kinds] of Object.entries(typesValue)) {
      if (!isStringList(kinds)) throw bad("types")
      types[property] = kinds as ReadonlyArray<IndexType>
    }
  }
  const optionsValue = row.get("options")
  const options: Record<string, FalkorMap> = {}
  if (optionsValue !== undefined && optionsValue !== null) {
    if (!isMap(optionsValue)) throw bad("options")
    for (const [property, value] of Object.entries(optionsValue)) {
      if (!isMap(value)) throw bad("options")
      options[property] = value
    }
  }
  const language = row.get("language")
  if (language !== undefined && language !== null && typeof language !== "string") throw bad("language")
  const stopwords = row.get("stopwords")
  if (stopwords !== undefined && stopwords !== null && !isStringList(stopwords)) throw bad("stopwords")
  const entityType = row.get("entitytype") ?? "NODE"
  if (entityType !== "NODE" && entityType !== "RELATIONSHIP") throw bad("entitytype")
  const statusText = row.get("status") ?? "OPERATIONAL"
  if (typeof statusText !== "string") throw bad("status")
  const info = row.get("info")
  if (info !== undefined && info !== null && !isMap(info)) throw bad("info")
  return {
    label,
    properties,
    types,
    options,
    language: language ?? undefined,
    stopwords: stopwords ?? [],
    entityType,
    status: parseStatus(statusText),
    statusText,
    info: info ?? undefined
  }
}

const describe = (index: IndexInfo) =>
  `${index.entityType === "RELATIONSHIP" ? `[:${index.label}]` : `(:${index.label})`} (${index.properties.join(", ")}): ${index.statusText}`

/**
 * The index operations of `graph`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (graph: Graph): Indexes => {
  const name = graph.name
  const build = (f: () => string) => Effect.try({ try: f, catch: (e) => e as FalkorError })
  const run = (text: Effect.Effect<string, FalkorError>) =>
    Effect.flatMap(text, (t) => Effect.map(graph.query(t), (result) => result.statistics))

  const list = () =>
    graph.roQuery("CALL db.indexes()").pipe(
      Effect.flatMap((result) =>
        Effect.try({ try: () => result.rows.map((row) => parseIndexRow(row, name)), catch: (e) => e as FalkorError })
      ),
      Effect.withSpan("Indexes.list", { attributes: { "db.namespace": name } })
    )

  const createFulltext = (spec: FulltextIndexSpec) => {
    const hasOptions = spec.language !== undefined || spec.stopwords !== undefined || spec.weights !== undefined
    if (!hasOptions) return run(build(() => fulltextIndexText(spec, name)))
    if (spec.entityType === "RELATIONSHIP") {
      return Effect.fail(
        invalidArgument(
          "entityType",
          "full-text options (language, stopwords, weights) are supported on node labels only",
          name
        )
      )
    }
    // The procedure takes the label, options and fields as values, so they all travel as parameters.
    const options: Record<string, Procedures.Argument> = { label: spec.label }
    if (spec.language !== undefined) options.language = spec.language
    if (spec.stopwords !== undefined) options.stopwords = spec.stopwords
    const fields = spec.properties.map((property): Procedures.Argument => {
      const weight = spec.weights?.[property]
      return weight === undefined ? property : { field: property, weight }
    })
    if (fields.length === 0)
      return Effect.fail(invalidArgument("properties", "an index needs at least one property", name))
    return Procedures.make(graph)
      .call("db.idx.fulltext.createNodeIndex", [options, ...fields], { readOnly: false })
      .pipe(Effect.map((result) => result.statistics))
  }

  const awaitOperational = (options: AwaitOptions = {}) => {
    const matching = (all: ReadonlyArray<IndexInfo>) =>
      all.filter(
        (index) =>
          (options.label === undefined || index.label === options.label) &&
          (options.property === undefined || index.properties.includes(options.property))
      )
    let last: ReadonlyArray<IndexInfo> = []
    const schedule = options.schedule ?? Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")])
    const poll = Effect.flatMap(list(), (all) => {
      last = matching(all)
      return last.length > 0 && last.every((index) => index.status._tag === "Operational")
        ? Effect.succeed(last)
        : Effect.fail("pending" as const)
    })
    const what =
      options.label === undefined
        ? "every index"
        : `the index on ${options.label}${options.property === undefined ? "" : `.${options.property}`}`
    const gaveUp = () =>
      last.length === 0
        ? invalidArgument("label", `no index matches ${what}`, name, "db.indexes")
        : waitTimeout(what, last.map(describe).join("; "), name)
    return poll.pipe(
      Effect.retry({ schedule, while: (e) => e === "pending" }),
      // A finite schedule that runs out while an index still builds gives up like the deadline.
      Effect.mapError((e) => (e === "pending" ? gaveUp() : e)),
      Effect.timeoutOrElse({
        duration: options.timeout ?? Duration.seconds(60),
        orElse: () => Effect.fail(gaveUp())
      }),
      Effect.withSpan("Indexes.awaitOperational", { attributes: { "db.namespace": name } })
    )
  }

  return {
    createRange: (spec) => run(build(() => rangeIndexText(spec, name))).pipe(Effect.withSpan("Indexes.createRange")),
    createFulltext: (spec) => createFulltext(spec).pipe(Effect.withSpan("Indexes.createFulltext")),
    createVector: (spec) => run(build(() => vectorIndexText(spec, name))).pipe(Effect.withSpan("Indexes.createVector")),
    drop: (spec) => run(build(() => dropIndexText(spec, name))).pipe(Effect.withSpan("Indexes.drop")),
    list,
    awaitOperational
  }
}
