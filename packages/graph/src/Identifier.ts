/**
 * Labels, relationship types, property names and procedure output names as Cypher
 * identifiers. Every name a helper of this package writes into a query text goes through
 * {@link quote}: a plain name (`Doc`, `title_2`) stays bare, anything else is wrapped in
 * backticks (`` `Odd Label` ``), and a name that cannot be one identifier (empty, with a
 * backtick, NUL or an unpaired surrogate) is refused with a typed error — it is never
 * spliced into the text.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { FalkorError } from "./FalkorError.ts"
import { invalidIdentifier } from "./internal/errors.ts"

const bare = /^[A-Za-z_][A-Za-z0-9_]*$/
const quoted = /^`([^`\u0000]+)`$/
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

// Words the Cypher grammar gives a meaning to: a bare label named `MATCH` or `null` would
// be read as the keyword, so these are always backticked (compared case-insensitively).
const keywords = new Set(
  (
    "all and any as asc ascending by call case contains count create delete desc descending detach distinct " +
    "drop else end ends exists explain extract false filter for foreach from in index is limit load match " +
    "merge none not null on optional or order profile remove return set single skip starts then to true " +
    "union unique unwind when where with xor yield constraint csv fulltext vector options"
  ).split(" ")
)

/**
 * Why a name cannot be an identifier, or `undefined` when it can.
 *
 * @since 0.1.0
 * @category validation
 */
export const problem = (name: string): string | undefined => {
  if (name.length === 0) return "it is empty"
  if (name.includes("`")) return "it contains a backtick, which FalkorDB identifiers cannot escape"
  if (name.includes("\u0000")) return "it contains a NUL character, which truncates the query on the server"
  if (loneSurrogate.test(name)) return "it is not valid Unicode (lone UTF-16 surrogate)"
  return undefined
}

/**
 * The identifier text for `name`, or a thrown `FalkorError` (for synchronous builders that
 * run inside `Effect.try`).
 *
 * @since 0.1.0
 * @category quoting
 */
export const quoteOrThrow = (name: string, what = "identifier", graph?: string): string => {
  const why = problem(name)
  if (why !== undefined) throw invalidIdentifier(name, what, why, graph)
  return bare.test(name) && !keywords.has(name.toLowerCase()) ? name : `\`${name}\``
}

/**
 * Quotes `name` as one Cypher identifier, bare when it is a plain name.
 *
 * @example
 * ```ts
 * import * as Identifier from "@effect-falkordb/graph/Identifier"
 * import { Effect } from "effect"
 *
 * Effect.runSync(Identifier.quote("Doc"))        // "Doc"
 * Effect.runSync(Identifier.quote("Odd Label"))  // "`Odd Label`"
 * ```
 *
 * @since 0.1.0
 * @category quoting
 */
export const quote = (name: string, what = "identifier"): Effect.Effect<string, FalkorError> =>
  Effect.try({ try: () => quoteOrThrow(name, what), catch: (e) => e as FalkorError })

/**
 * Reads one identifier token back (bare or backticked); `undefined` when the text is not
 * exactly one identifier.
 *
 * @since 0.1.0
 * @category quoting
 */
export const unquote = (token: string): string | undefined => {
  if (bare.test(token)) return keywords.has(token.toLowerCase()) ? undefined : token
  const match = quoted.exec(token)
  return match === null ? undefined : match[1]
}

/**
 * A variable name for a pattern on `label`: its first letter in lower case when that is an
 * ASCII letter, else `e` (the name never needs quoting and is never a keyword).
 *
 * @since 0.1.0
 * @category quoting
 */
export const variableFor = (label: string): string => {
  const first = label.charAt(0)
  return /[A-Za-z]/.test(first) ? first.toLowerCase() : "e"
}
