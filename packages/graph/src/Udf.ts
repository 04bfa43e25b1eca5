/**
 * JavaScript UDF libraries (`GRAPH.UDF`, FalkorDB ≥ 4.16): load, list, delete, flush.
 * Libraries are server-wide, not per graph; a loaded function is called from Cypher as
 * `<library>.<function>(…)`.
 *
 * Errors: a library of that name is loaded already → `UdfExists` (load with
 * `replace: true`); code that does not parse or throws while loading → `UdfInvalid`; an
 * unknown library → `UdfNotFound`; a function that throws inside a query → `UdfException`;
 * a server without `GRAPH.UDF` → `Unsupported`.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as Udf from "@effect-falkordb/graph/Udf"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const udf = Udf.make(db.connection)
 *   yield* udf.load("mathlib", "function add(a, b) { return a + b; }\nfalkor.register('add', add);", { replace: true })
 *   return yield* db.graph("g").roQuery("RETURN mathlib.add(1, 2) AS three")
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import { type FalkorError, fromRedis } from "./FalkorError.ts"
import { invalidArgument, malformed } from "./internal/errors.ts"
import { text } from "./internal/Text.ts"

/**
 * One loaded library.
 *
 * @since 0.1.0
 * @category models
 */
export interface Library {
  readonly name: string
  /** The functions it registered. */
  readonly functions: ReadonlyArray<string>
  /** Its source, when listed `withCode`. */
  readonly code: string | undefined
}

/**
 * The UDF operations of a server.
 *
 * @since 0.1.0
 * @category models
 */
export interface Udf {
  /** `GRAPH.UDF LOAD [REPLACE] <library> <code>`. */
  readonly load: (
    library: string,
    code: string,
    options?: { readonly replace?: boolean | undefined }
  ) => Effect.Effect<void, FalkorError>
  /** `GRAPH.UDF LIST [library] [WITHCODE]`. */
  readonly list: (options?: {
    readonly library?: string | undefined
    readonly withCode?: boolean | undefined
  }) => Effect.Effect<ReadonlyArray<Library>, FalkorError>
  /** `GRAPH.UDF DELETE <library>`. */
  readonly delete: (library: string) => Effect.Effect<void, FalkorError>
  /** `GRAPH.UDF FLUSH`: removes every library. */
  readonly flush: () => Effect.Effect<void, FalkorError>
}

const textOf = (reply: Reply | undefined): string | undefined => (reply === undefined ? undefined : text(reply))

/**
 * Parses a `GRAPH.UDF LIST` reply: one `[library_name, n, functions, [f…] (, library_code, c)]`
 * per library.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseList = (reply: Reply): ReadonlyArray<Library> => {
  const bad = (detail: string) => malformed(`GRAPH.UDF LIST: ${detail}`, undefined, "GRAPH.UDF")
  if (!Array.isArray(reply)) throw bad("not an array")
  return (reply as ReadonlyArray<Reply>).map((entry) => {
    if (!Array.isArray(entry) || entry.length % 2 !== 0) throw bad("an entry is not name/value pairs")
    const fields = new Map<string, Reply>()
    for (let i = 0; i < entry.length; i += 2) {
      const key = textOf(entry[i])
      if (key === undefined) throw bad("a field name is not a string")
      fields.set(key, entry[i + 1]!)
    }
    const name = textOf(fields.get("library_name"))
    const functions = fields.get("functions")
    if (name === undefined) throw bad("an entry has no library_name")
    if (!Array.isArray(functions)) throw bad(`library ${name} has no functions list`)
    const names = (functions as ReadonlyArray<Reply>).map((f) => {
      const text = textOf(f)
      if (text === undefined) throw bad(`library ${name} lists a function name that is not a string`)
      return text
    })
    const code = fields.has("library_code") ? textOf(fields.get("library_code")) : undefined
    return { name, functions: names, code }
  })
}

/**
 * The UDF operations of the server behind `connection`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (connection: RedisConnection["Service"]): Udf => {
  const send = (args: ReadonlyArray<string>, readOnly = false) =>
    connection
      .execute(["GRAPH.UDF", ...args], { readOnly })
      .pipe(Effect.mapError((error) => fromRedis(error, { command: `GRAPH.UDF ${args[0]}` })))
  const ok = (args: ReadonlyArray<string>) =>
    Effect.flatMap(send(args), (reply) =>
      textOf(reply) === "OK"
        ? Effect.void
        : Effect.fail(malformed(`GRAPH.UDF ${args[0]} did not reply OK`, undefined, "GRAPH.UDF"))
    )
  const named = (library: string) =>
    library.length === 0
      ? Effect.fail(invalidArgument("library", "a UDF library name must not be empty", undefined, "GRAPH.UDF"))
      : Effect.void
  return {
    load: (library, code, options = {}) =>
      named(library).pipe(
        Effect.andThen(ok(["LOAD", ...(options.replace === true ? ["REPLACE"] : []), library, code])),
        Effect.withSpan("Udf.load", { attributes: { "falkordb.udf.library": library } })
      ),
    list: (options = {}) =>
      send(
        [
          "LIST",
          ...(options.library === undefined ? [] : [options.library]),
          ...(options.withCode === true ? ["WITHCODE"] : [])
        ],
        true
      ).pipe(
        Effect.flatMap((reply) => Effect.try({ try: () => parseList(reply), catch: (e) => e as FalkorError })),
        Effect.withSpan("Udf.list")
      ),
    delete: (library) =>
      named(library).pipe(
        Effect.andThen(ok(["DELETE", library])),
        Effect.withSpan("Udf.delete", { attributes: { "falkordb.udf.library": library } })
      ),
    flush: () => ok(["FLUSH"]).pipe(Effect.withSpan("Udf.flush"))
  }
}
