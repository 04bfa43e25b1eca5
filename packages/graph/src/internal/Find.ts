/**
 * The graph's `findAll` / `findOne` / `findOneOption`: a read-only query whose rows are
 * decoded with a `Schema` by column alias, with the row decoding `GraphSchema` uses (a row
 * that does not match fails with `RowDecode`, naming the row and the column).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Cypher from "../Cypher.ts"
import type { FalkorError } from "../FalkorError.ts"
import type { QueryOptions, QueryResult } from "../Graph.ts"
import { decoder, rowsOf } from "./Requests.ts"

type ReadOnlyQuery = (
  query: string | Cypher.Query,
  parameters?: object,
  options?: QueryOptions
) => Effect.Effect<QueryResult, FalkorError>

/** The three find functions over one read-only query function. */
export const make = (readOnlyQuery: ReadOnlyQuery) => {
  const rows = (query: string | Cypher.Query, parameters?: object, options?: QueryOptions) =>
    Effect.map(readOnlyQuery(query, parameters, options), rowsOf)
  return {
    findAll: <S extends Schema.Top>(
      schema: S,
      query: string | Cypher.Query,
      parameters?: object,
      options?: QueryOptions
    ): Effect.Effect<Array<S["Type"]>, FalkorError, S["DecodingServices"]> => {
      const decode = decoder(schema)
      return Effect.flatMap(rows(query, parameters, options), (all) =>
        Effect.forEach(all, (row, i) => decode(row, i, "Graph.findAll"))
      )
    },
    findOne: <S extends Schema.Top>(
      schema: S,
      query: string | Cypher.Query,
      parameters?: object,
      options?: QueryOptions
    ): Effect.Effect<S["Type"], FalkorError | Cause.NoSuchElementError, S["DecodingServices"]> => {
      const decode = decoder(schema)
      return Effect.flatMap(
        rows(query, parameters, options),
        (all): Effect.Effect<S["Type"], FalkorError | Cause.NoSuchElementError, S["DecodingServices"]> =>
          all.length > 0
            ? decode(all[0], 0, "Graph.findOne")
            : Effect.fail(new Cause.NoSuchElementError("Graph.findOne: the query returned no row"))
      )
    },
    findOneOption: <S extends Schema.Top>(
      schema: S,
      query: string | Cypher.Query,
      parameters?: object,
      options?: QueryOptions
    ): Effect.Effect<Option.Option<S["Type"]>, FalkorError, S["DecodingServices"]> => {
      const decode = decoder(schema)
      return Effect.flatMap(
        rows(query, parameters, options),
        (all): Effect.Effect<Option.Option<S["Type"]>, FalkorError, S["DecodingServices"]> =>
          all.length > 0 ? Effect.asSome(decode(all[0], 0, "Graph.findOneOption")) : Effect.succeedNone
      )
    }
  }
}
