/**
 * Request resolvers that end N+1 queries, like `effect/sql/SqlResolver`: the requests many
 * fibers make in the same tick become **one** query, written over
 * `UNWIND $requests AS r …`, and each request gets its own result or its own error.
 *
 * - `findById`: one row per id (matched by `ResultId`); an id without a row fails alone with
 *   `NoSuchElementError`; duplicate ids are sent once.
 * - `grouped`: the rows of each request (matched by key), at least one.
 * - `ordered`: one row per request, in request order (e.g. `UNWIND … CREATE … RETURN`).
 * - `void`: runs the batch for its effect.
 *
 * Each request is encoded with its schema one by one: a request the schema (or the Cypher
 * literal encoder) refuses fails alone with `FalkorError` reason `InvalidParameter`, whose
 * `path` names the request (`UserById(42)`), and is left out of the query. Each row is
 * decoded one by one: a row that does not match fails its own request with `RowDecode`,
 * whose `command` names the request. A batch larger than `maxBatchSize` (default 128) is
 * split into several queries. Requests go through `Effect.request`, so they batch with
 * `Effect.forEach(…, { concurrency })`, `Effect.all`, `Stream.mapEffect({ concurrency })`,
 * and cache with `RequestResolver.withCache`.
 *
 * `execute` runs with the services of the first request of its batch (as in `SqlResolver`).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
 * import { Effect, Schema } from "effect"
 *
 * const User = Schema.Struct({ id: Schema.String, name: Schema.String })
 *
 * const program = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   const UserById = GraphResolver.findById({
 *     Id: Schema.String,
 *     Result: User,
 *     ResultId: (user) => user.id,
 *     execute: (ids) =>
 *       graph.roQuery("UNWIND $requests AS r MATCH (u:User {id: r}) RETURN u.id AS id, u.name AS name", {
 *         requests: ids
 *       })
 *   })
 *   const userById = GraphResolver.request(UserById)
 *   // Three lookups, one GRAPH.RO_QUERY.
 *   return yield* Effect.forEach(["u1", "u2", "u3"], userById, { concurrency: "unbounded" })
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import * as Hash from "effect/Hash"
import * as MutableHashMap from "effect/MutableHashMap"
import * as Request from "effect/Request"
import * as RequestResolver from "effect/RequestResolver"
import * as Schema from "effect/Schema"
import type { FalkorError } from "./FalkorError.ts"
import { decoder, describe, encoder, malformedAnswer, type Rows, rowDecode, rowsOf } from "./internal/Requests.ts"

/**
 * A request of a graph resolver: its payload, and the result, error and services of the
 * resolver. Equal payloads make equal requests (for deduplication and caching).
 *
 * @since 0.1.0
 * @category models
 */
export interface GraphRequest<In, A, E, R> extends Request.Request<A, E | FalkorError, R> {
  readonly payload: In
}

const GraphRequestProto = {
  ...Request.Class.prototype,
  [Equal.symbol](this: GraphRequest<any, any, any, any>, that: GraphRequest<any, any, any, any>): boolean {
    return Equal.equals(this.payload, that.payload)
  },
  [Hash.symbol](this: GraphRequest<any, any, any, any>): number {
    return Hash.hash(this.payload)
  }
}

/**
 * A request of `payload` (equality and hash by payload).
 *
 * @since 0.1.0
 * @category constructors
 */
export const GraphRequest = <In, A, E, R>(payload: In): GraphRequest<In, A, E, R> => {
  const self = Object.create(GraphRequestProto)
  self.payload = payload
  return self
}

/**
 * Runs `payload` through `resolver`: `request(resolver)` gives a function of the payload.
 *
 * @example
 * ```ts
 * import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
 * import { Effect, Schema } from "effect"
 *
 * const Echo = GraphResolver.ordered({
 *   Request: Schema.String,
 *   Result: Schema.String,
 *   execute: (requests) => Effect.succeed(requests)
 * })
 * const echo = GraphResolver.request(Echo)
 * const both = Effect.all([echo("a"), echo("b")], { concurrency: "unbounded" }) // one batch
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const request: {
  <In, A, E, R>(
    resolver: RequestResolver.RequestResolver<GraphRequest<In, A, E, R>>
  ): (payload: In) => Effect.Effect<A, E | FalkorError, R>
  <In, A, E, R>(
    payload: In,
    resolver: RequestResolver.RequestResolver<GraphRequest<In, A, E, R>>
  ): Effect.Effect<A, E | FalkorError, R>
} = ((...args: ReadonlyArray<any>) =>
  args.length === 1
    ? (payload: unknown) => Effect.request(GraphRequest(payload), args[0])
    : Effect.request(GraphRequest(args[0]), args[1])) as any

/**
 * What every resolver takes besides its schemas and `execute`.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchOptions {
  /**
   * At most this many requests per query; a larger batch is split into several queries, which
   * a multiplexed client sends on several connections. Default {@link defaultMaxBatchSize}.
   */
  readonly maxBatchSize?: number | undefined
  /** Names the resolver in errors (`UserById("u3")`). Default `GraphResolver.<kind>`. */
  readonly name?: string | undefined
}

/**
 * The default `maxBatchSize`: 128. FalkorDB's cost per request of an `UNWIND … MATCH` by an
 * indexed property grows with the list (measured on FalkorDB 4.16: about 10 µs per id at 128
 * ids, 15 at 512, 25 or more at 1024, against about 140 µs for a whole single-id query), and
 * one query runs on one server thread; 128 keeps the per-id cost flat while the round trip is
 * shared, and lets the batches of a larger tick run on several connections and threads.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxBatchSize = 128

type Entry<In, A, E, R> = Request.Entry<GraphRequest<In, A, E, R>>

const makeResolver = <In, A, E, R>(
  options: BatchOptions,
  runAll: (entries: Arr.NonEmptyArray<Entry<In, A, E, R>>) => Effect.Effect<void, unknown, any>
): RequestResolver.RequestResolver<GraphRequest<In, A, E, R>> =>
  // A failure of the whole batch (the query failed) goes to every request not completed yet.
  RequestResolver.make<GraphRequest<In, A, E, R>>(runAll as any).pipe(
    RequestResolver.batchN(options.maxBatchSize ?? defaultMaxBatchSize)
  )

/**
 * Encodes each entry with its own services; a refused entry is completed with its error at
 * once. Entries with equal keys (by `Equal`) share one encoded request: the returned groups
 * list, per encoded request, the entries it answers.
 */
const encodeEntries = <In, A, E, R, K>(
  entries: ReadonlyArray<Entry<In, A, E, R>>,
  encode: (payload: In) => Effect.Effect<unknown, FalkorError, any>,
  keyOf: ((payload: In) => K) | undefined
) =>
  Effect.gen(function* () {
    const inputs: Array<unknown> = []
    const groups: Array<Array<Entry<In, A, E, R>>> = []
    const byKey = MutableHashMap.empty<unknown, Array<Entry<In, A, E, R>>>()
    for (const entry of entries) {
      const key = keyOf?.(entry.request.payload)
      if (keyOf !== undefined) {
        const existing = MutableHashMap.get(byKey, key)
        if (existing._tag === "Some") {
          existing.value.push(entry)
          continue
        }
      }
      const encoded = yield* Effect.exit(Effect.provideContext(encode(entry.request.payload), entry.context))
      if (Exit.isFailure(encoded)) {
        entry.completeUnsafe(encoded as Exit.Exit<never, any>)
        continue
      }
      const group = [entry]
      if (keyOf !== undefined) MutableHashMap.set(byKey, key, group)
      inputs.push(encoded.value)
      groups.push(group)
    }
    return { inputs, groups, byKey }
  })

const completeAll = <In, A, E, R>(group: ReadonlyArray<Entry<In, A, E, R>>, exit: Exit.Exit<any, any>) => {
  for (const entry of group) entry.completeUnsafe(exit)
}

/**
 * One row per request, in request order: row `i` answers request `i`. An answer with a
 * different number of rows fails the batch with reason `Decode` — a `MATCH` that finds
 * nothing drops its row, so write such queries with `OPTIONAL MATCH` or use `findById`.
 * Requests are not deduplicated (two equal inserts insert twice).
 *
 * @since 0.1.0
 * @category resolvers
 */
export const ordered = <Req extends Schema.Top, Res extends Schema.Top, E, R>(
  options: BatchOptions & {
    readonly Request: Req
    readonly Result: Res
    readonly execute: (requests: Arr.NonEmptyArray<Req["Encoded"]>) => Effect.Effect<Rows, E, R>
  }
): RequestResolver.RequestResolver<
  GraphRequest<Req["Type"], Res["Type"], E, Req["EncodingServices"] | Res["DecodingServices"] | R>
> => {
  const name = options.name ?? "GraphResolver.ordered"
  const encode = encoder(options.Request, name, true)
  const decode = decoder(options.Result)
  return makeResolver(options, (entries) =>
    Effect.gen(function* () {
      const { groups, inputs } = yield* encodeEntries(entries, encode, undefined)
      if (!Arr.isArrayNonEmpty(inputs)) return
      const rows = rowsOf(yield* Effect.provideContext(options.execute(inputs), entries[0].context))
      if (rows.length !== inputs.length) {
        const error = malformedAnswer(
          name,
          `expected one row per request (${inputs.length}), got ${rows.length}; a MATCH that finds nothing drops its row (use OPTIONAL MATCH)`
        )
        for (const group of groups) completeAll(group, Exit.fail(error))
        return
      }
      for (let i = 0; i < groups.length; i++) {
        const group = groups[i]!
        const request = describe(name, group[0]!.request.payload)
        const exit = yield* Effect.exit(Effect.provideContext(decode(rows[i], i, request), group[0]!.context))
        completeAll(group, exit)
      }
    })
  )
}

/**
 * Decodes `rows` one by one and hands each decoded result to its group (found by `keyOf`); a
 * row that fails to decode is attributed by `rowKey` when given, else it fails every group
 * left without a row. Groups without any row fail with `NoSuchElementError`.
 */
const distribute = <
  Res extends Schema.Top,
  K,
  Row,
  G extends { readonly entries: ReadonlyArray<Entry<any, any, any, any>> }
>(
  rows: ReadonlyArray<unknown>,
  decode: (row: unknown) => Effect.Effect<Res["Type"], Schema.SchemaError, any>,
  options: {
    readonly name: string
    readonly groups: MutableHashMap.MutableHashMap<unknown, G>
    readonly keyOf: (result: Res["Type"], row: Row) => K
    readonly rowKey: ((row: Row) => Effect.Effect<K, unknown, any>) | undefined
    readonly add: (group: G, result: Res["Type"]) => void
    readonly finish: (group: G) => Exit.Exit<any, any>
  }
) =>
  Effect.gen(function* () {
    const requestOf = (group: G) => describe(options.name, group.entries[0]!.request.payload)
    const failed = new Map<G, FalkorError>()
    let unattributed: { readonly cause: Schema.SchemaError; readonly row: number } | undefined
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Row
      const decoded = yield* Effect.exit(decode(row))
      if (Exit.isSuccess(decoded)) {
        const group = MutableHashMap.get(options.groups, options.keyOf(decoded.value, row))
        if (group._tag === "Some") options.add(group.value, decoded.value)
        continue
      }
      const cause = Cause.squash(decoded.cause) as Schema.SchemaError
      const key = options.rowKey === undefined ? undefined : yield* Effect.option(options.rowKey(row))
      const group = key?._tag === "Some" ? MutableHashMap.get(options.groups, key.value) : undefined
      if (group?._tag === "Some") {
        if (!failed.has(group.value)) failed.set(group.value, rowDecode(cause, i, requestOf(group.value)))
      } else unattributed ??= { cause, row: i }
    }
    for (const [, group] of options.groups) {
      const error = failed.get(group)
      if (error !== undefined) {
        completeAll(group.entries, Exit.fail(error))
        continue
      }
      const exit = options.finish(group)
      // A group left without a row may be the one whose row did not decode: it gets that error.
      completeAll(
        group.entries,
        Exit.isFailure(exit) && unattributed !== undefined
          ? Exit.fail(rowDecode(unattributed.cause, unattributed.row, requestOf(group)))
          : exit
      )
    }
  })

const noRow = (name: string, payload: unknown) =>
  Exit.fail(new Cause.NoSuchElementError(`${describe(name, payload)}: no row answers this request`))

/**
 * One row per id: each decoded row goes to the request whose id `ResultId` gives. An id
 * without a row fails alone with `NoSuchElementError`; duplicate ids are sent once and
 * share the answer. `RowId` reads the (encoded) id from a raw row, so that a row which fails
 * to decode fails only its own request (without it, such a row fails every request left
 * without a row).
 *
 * @since 0.1.0
 * @category resolvers
 */
export const findById = <Id extends Schema.Top, Res extends Schema.Top, Row, E, R>(
  options: BatchOptions & {
    readonly Id: Id
    readonly Result: Res
    readonly ResultId: (result: Res["Type"], row: Row) => Id["Type"]
    readonly RowId?: ((row: Row) => Id["Encoded"]) | undefined
    readonly execute: (ids: Arr.NonEmptyArray<Id["Encoded"]>) => Effect.Effect<Rows, E, R>
  }
): RequestResolver.RequestResolver<
  GraphRequest<
    Id["Type"],
    Res["Type"],
    E | Cause.NoSuchElementError,
    Id["EncodingServices"] | Id["DecodingServices"] | Res["DecodingServices"] | R
  >
> => {
  const name = options.name ?? "GraphResolver.findById"
  const encode = encoder(options.Id, name, true)
  const decode = Schema.decodeUnknownEffect(options.Result)
  const decodeId = Schema.decodeUnknownEffect(options.Id)
  const rowId = options.RowId
  return makeResolver(options, (entries) =>
    Effect.gen(function* () {
      const { inputs, byKey } = yield* encodeEntries(entries, encode, (payload) => payload)
      if (!Arr.isArrayNonEmpty(inputs)) return
      const rows = rowsOf(yield* Effect.provideContext(options.execute(inputs), entries[0].context))
      type Group = { entries: ReadonlyArray<Entry<any, any, any, any>>; result: { value: unknown } | undefined }
      const groups = MutableHashMap.empty<unknown, Group>()
      for (const [id, group] of byKey) MutableHashMap.set(groups, id, { entries: group, result: undefined })
      yield* Effect.provideContext(
        distribute<Res, Id["Type"], Row, Group>(rows, decode, {
          name,
          groups,
          keyOf: options.ResultId,
          rowKey: rowId === undefined ? undefined : (row) => decodeId(rowId(row)),
          add: (group, result) => {
            group.result ??= { value: result }
          },
          finish: (group) =>
            group.result === undefined
              ? noRow(name, group.entries[0]!.request.payload)
              : Exit.succeed(group.result.value)
        }),
        entries[0].context
      )
    })
  )
}

/**
 * The rows of each request: each decoded row goes to the requests whose
 * `RequestGroupKey` equals its `ResultGroupKey`; a request without rows fails with
 * `NoSuchElementError`. Requests with equal keys are sent once. `RowGroupKey` reads the key
 * from a raw row, so that a row which fails to decode fails only its own request.
 *
 * @since 0.1.0
 * @category resolvers
 */
export const grouped = <Req extends Schema.Top, Res extends Schema.Top, K, Row, E, R>(
  options: BatchOptions & {
    readonly Request: Req
    readonly RequestGroupKey: (request: Req["Type"]) => K
    readonly Result: Res
    readonly ResultGroupKey: (result: Res["Type"], row: Row) => K
    readonly RowGroupKey?: ((row: Row) => K) | undefined
    readonly execute: (requests: Arr.NonEmptyArray<Req["Encoded"]>) => Effect.Effect<Rows, E, R>
  }
): RequestResolver.RequestResolver<
  GraphRequest<
    Req["Type"],
    Arr.NonEmptyArray<Res["Type"]>,
    E | Cause.NoSuchElementError,
    Req["EncodingServices"] | Res["DecodingServices"] | R
  >
> => {
  const name = options.name ?? "GraphResolver.grouped"
  const encode = encoder(options.Request, name, true)
  const decode = Schema.decodeUnknownEffect(options.Result)
  const rowGroupKey = options.RowGroupKey
  return makeResolver(options, (entries) =>
    Effect.gen(function* () {
      const { inputs, byKey } = yield* encodeEntries(entries, encode, options.RequestGroupKey)
      if (!Arr.isArrayNonEmpty(inputs)) return
      const rows = rowsOf(yield* Effect.provideContext(options.execute(inputs), entries[0].context))
      type Group = { entries: ReadonlyArray<Entry<any, any, any, any>>; results: Array<unknown> }
      const groups = MutableHashMap.empty<unknown, Group>()
      for (const [key, group] of byKey) MutableHashMap.set(groups, key, { entries: group, results: [] })
      yield* Effect.provideContext(
        distribute<Res, K, Row, Group>(rows, decode, {
          name,
          groups,
          keyOf: options.ResultGroupKey,
          rowKey: rowGroupKey === undefined ? undefined : (row) => Effect.succeed(rowGroupKey(row)),
          add: (group, result) => {
            group.results.push(result)
          },
          finish: (group) =>
            group.results.length === 0 ? noRow(name, group.entries[0]!.request.payload) : Exit.succeed(group.results)
        }),
        entries[0].context
      )
    })
  )
}

const void_ = <Req extends Schema.Top, E, R>(
  options: BatchOptions & {
    readonly Request: Req
    readonly execute: (requests: Arr.NonEmptyArray<Req["Encoded"]>) => Effect.Effect<unknown, E, R>
  }
): RequestResolver.RequestResolver<GraphRequest<Req["Type"], void, E, Req["EncodingServices"] | R>> => {
  const name = options.name ?? "GraphResolver.void"
  const encode = encoder(options.Request, name, true)
  return makeResolver(options, (entries) =>
    Effect.gen(function* () {
      const { groups, inputs } = yield* encodeEntries(entries, encode, undefined)
      if (!Arr.isArrayNonEmpty(inputs)) return
      yield* Effect.provideContext(options.execute(inputs), entries[0].context)
      for (const group of groups) completeAll(group, Exit.void)
    })
  )
}

export {
  /**
   * A resolver that runs its batch for its effect (e.g. `UNWIND $requests AS r MATCH … DELETE`).
   *
   * @since 0.1.0
   * @category resolvers
   */
  void_ as void
}
