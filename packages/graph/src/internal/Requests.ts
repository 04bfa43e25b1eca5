// What GraphSchema, GraphResolver and GraphModel share: the rows of a query function's answer,
// a request encoded with its Schema (a refusal is `InvalidParameter` naming the request) and a
// row decoded with its Schema (a refusal is `RowDecode` naming the row, the column and the request).
import * as Effect from "effect/Effect"
import * as Formatter from "effect/Formatter"
import * as Schema from "effect/Schema"
import { encodeLiteral } from "../Cypher.ts"
import type { ParameterValue } from "../Cypher.ts"
import { Decode, FalkorError, InvalidParameter, RowDecode } from "../FalkorError.ts"
import type { QueryResult } from "../Graph.ts"
import { firstPathKey } from "./SchemaIssue.ts"

/** What a query function answers: a `QueryResult` (its rows become plain objects) or the rows themselves. */
export type Rows = QueryResult | ReadonlyArray<unknown>

/** The rows of an answer, each a plain object `{ alias: value }` for a `QueryResult`. */
export const rowsOf = (answer: Rows): ReadonlyArray<unknown> =>
  Array.isArray(answer) ? answer : (answer as QueryResult).rows.map((row) => row.toObject())

/** A request as the errors name it: `UserById("u3")`. */
export const describe = (name: string, payload: unknown): string => {
  const text = Formatter.format(payload)
  return `${name}(${text.length > 120 ? `${text.slice(0, 117)}...` : text})`
}

/**
 * Encodes `payload` with `schema`; a failure is `InvalidParameter` whose `path` names the
 * request. With `literal`, the encoded value must also be a Cypher literal (so one bad value
 * fails its own request, not the query of a whole batch).
 */
export const encoder = <S extends Schema.Top>(schema: S, name: string, literal: boolean) => {
  const encode = Schema.encodeEffect(schema)
  return (payload: S["Type"]): Effect.Effect<S["Encoded"], FalkorError, S["EncodingServices"]> =>
    encode(payload).pipe(
      Effect.mapError((cause) => invalidRequest(name, payload, cause.message, cause)),
      literal
        ? Effect.tap((encoded) =>
            Effect.mapError(encodeLiteral(encoded as ParameterValue), (cause) =>
              invalidRequest(name, payload, `${cause.message} (${cause.hint})`, cause)
            )
          )
        : (self) => self
    )
}

const invalidRequest = (name: string, payload: unknown, detail: string, cause: unknown): FalkorError =>
  new FalkorError({
    reason: new InvalidParameter({
      path: describe(name, payload),
      detail,
      serverMessage: undefined,
      command: name,
      cause
    })
  })

/** Decodes one row with `schema`; a failure is `RowDecode` (its `command` names the request, when known). */
export const decoder = <S extends Schema.Top>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (row: unknown, index: number, request: string): Effect.Effect<S["Type"], FalkorError, S["DecodingServices"]> =>
    Effect.mapError(decode(row), (cause) => rowDecode(cause, index, request))
}

/** A row that does not match its Schema, naming the request it answers (as `command`). */
export const rowDecode = (cause: Schema.SchemaError, row: number, request: string): FalkorError =>
  new FalkorError({ reason: new RowDecode({ row, column: firstPathKey(cause), cause, command: request }) })

/** An answer of the wrong shape for the helper (e.g. not one row per request). */
export const malformedAnswer = (name: string, detail: string): FalkorError =>
  new FalkorError({ reason: new Decode({ command: name, row: undefined, column: undefined, detail }) })
