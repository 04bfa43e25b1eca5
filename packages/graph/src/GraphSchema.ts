/**
 * Typed query functions over Cypher, like `effect/sql/SqlSchema`: each helper takes a
 * `Request` schema, a `Result` schema and an `execute` function (usually a `Graph` call),
 * and builds a function of the decoded request that encodes it into parameters, runs the
 * query and decodes the rows.
 *
 * - `findAll`: every row (maybe none); `findNonEmpty`: at least one, else
 *   `NoSuchElementError`; `findOne`: the first row, else `NoSuchElementError`;
 *   `findOneOption`: the first row as an `Option`; `void`: runs it for its effect.
 * - `execute` answers a `QueryResult` (each row is decoded from `row.toObject()`, by column
 *   alias) or the rows themselves.
 * - A request its schema refuses fails with `FalkorError` reason `InvalidParameter` (nothing
 *   is sent); a row its schema refuses fails with `RowDecode`, naming the row and the column.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphSchema from "@effect-falkordb/graph/GraphSchema"
 * import { Effect, Schema } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   const peopleBornAfter = GraphSchema.findAll({
 *     Request: Schema.Struct({ year: Schema.Int }),
 *     Result: Schema.Struct({ name: Schema.String, born: Schema.Int }),
 *     execute: (request) =>
 *       graph.roQuery("MATCH (p:Person) WHERE p.born > $year RETURN p.name AS name, p.born AS born", request)
 *   })
 *   const people = yield* peopleBornAfter({ year: 1900 }) // Array<{ name: string; born: number }>
 *   return people
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { FalkorError } from "./FalkorError.ts"
import { decoder, encoder, type Rows, rowsOf } from "./internal/Requests.ts"

/**
 * What a query function answers: a `QueryResult` (rows decoded from `row.toObject()`) or the
 * rows themselves.
 *
 * @since 0.1.0
 * @category models
 */
export type Answer = Rows

/**
 * The options of every helper but `void`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Req extends Schema.Top, Res extends Schema.Top, E, R> {
  readonly Request: Req
  readonly Result: Res
  readonly execute: (request: Req["Encoded"]) => Effect.Effect<Answer, E, R>
  /** Names the function in errors (default `GraphSchema`). */
  readonly name?: string | undefined
}

/** A request schema, a function that runs the encoded request, and the name errors give it. */
interface RunOptions<Req extends Schema.Top, A, E, R> {
  readonly Request: Req
  readonly execute: (request: Req["Encoded"]) => Effect.Effect<A, E, R>
  readonly name?: string | undefined
}

/** Encode and run. */
const run = <Req extends Schema.Top, A, E, R>(options: RunOptions<Req, A, E, R>) => {
  const encode = encoder(options.Request, options.name ?? "GraphSchema", false)
  return (request: Req["Type"]) => Effect.flatMap(encode(request), options.execute)
}

/** Encode, run, the rows of the answer, and a decoder of one row. */
const prepare = <Req extends Schema.Top, Res extends Schema.Top, E, R>(options: Options<Req, Res, E, R>) => {
  const execute = run(options)
  return {
    rows: (request: Req["Type"]) => Effect.map(execute(request), rowsOf),
    decode: decoder(options.Result),
    name: options.name ?? "GraphSchema"
  }
}

/**
 * A query function that encodes the request and decodes every row (an empty result is an
 * empty array).
 *
 * @since 0.1.0
 * @category constructors
 */
export const findAll = <Req extends Schema.Top, Res extends Schema.Top, E, R>(options: Options<Req, Res, E, R>) => {
  const { decode, name, rows } = prepare(options)
  return (
    request: Req["Type"]
  ): Effect.Effect<Array<Res["Type"]>, E | FalkorError, Req["EncodingServices"] | Res["DecodingServices"] | R> =>
    Effect.flatMap(rows(request), (all) => Effect.forEach(all, (row, i) => decode(row, i, name)))
}

/**
 * Like {@link findAll}, failing with `NoSuchElementError` when there is no row.
 *
 * @since 0.1.0
 * @category constructors
 */
export const findNonEmpty = <Req extends Schema.Top, Res extends Schema.Top, E, R>(
  options: Options<Req, Res, E, R>
) => {
  const find = findAll(options)
  return (
    request: Req["Type"]
  ): Effect.Effect<
    Arr.NonEmptyArray<Res["Type"]>,
    E | FalkorError | Cause.NoSuchElementError,
    Req["EncodingServices"] | Res["DecodingServices"] | R
  > =>
    Effect.flatMap(find(request), (results) =>
      Arr.isArrayNonEmpty(results) ? Effect.succeed(results) : Effect.fail(new Cause.NoSuchElementError())
    )
}

/**
 * The first row decoded, or `NoSuchElementError` when there is none (later rows are not
 * decoded).
 *
 * @since 0.1.0
 * @category constructors
 */
export const findOne = <Req extends Schema.Top, Res extends Schema.Top, E, R>(options: Options<Req, Res, E, R>) => {
  const { decode, name, rows } = prepare(options)
  return (
    request: Req["Type"]
  ): Effect.Effect<
    Res["Type"],
    E | FalkorError | Cause.NoSuchElementError,
    Req["EncodingServices"] | Res["DecodingServices"] | R
  > =>
    Effect.flatMap(
      rows(request),
      (all): Effect.Effect<Res["Type"], FalkorError | Cause.NoSuchElementError, Res["DecodingServices"]> =>
        all.length > 0 ? decode(all[0], 0, name) : Effect.fail(new Cause.NoSuchElementError())
    )
}

/**
 * The first row decoded as `Option.some`, or `Option.none` when there is none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const findOneOption = <Req extends Schema.Top, Res extends Schema.Top, E, R>(
  options: Options<Req, Res, E, R>
) => {
  const { decode, name, rows } = prepare(options)
  return (
    request: Req["Type"]
  ): Effect.Effect<
    Option.Option<Res["Type"]>,
    E | FalkorError,
    Req["EncodingServices"] | Res["DecodingServices"] | R
  > =>
    Effect.flatMap(
      rows(request),
      (all): Effect.Effect<Option.Option<Res["Type"]>, FalkorError, Res["DecodingServices"]> =>
        all.length > 0 ? Effect.asSome(decode(all[0], 0, name)) : Effect.succeedNone
    )
}

const void_ = <Req extends Schema.Top, E, R>(options: RunOptions<Req, unknown, E, R>) => {
  const execute = run(options)
  return (request: Req["Type"]): Effect.Effect<void, E | FalkorError, Req["EncodingServices"] | R> =>
    Effect.asVoid(execute(request))
}

export {
  /**
   * A query function run for its effect: the request is encoded, the answer discarded.
   *
   * @since 0.1.0
   * @category constructors
   */
  void_ as void
}
