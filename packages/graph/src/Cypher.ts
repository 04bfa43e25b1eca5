/**
 * The `CYPHER name=value …` parameter prefix. FalkorDB has no bind API, so parameters
 * travel as literals in front of the query; this encoder only emits literals both
 * servers parse, and refuses everything else with a typed error.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * A parameter value could not be encoded as a Cypher literal.
 *
 * @since 0.1.0
 * @category errors
 */
export class ParameterError extends Data.TaggedError("ParameterError")<{
  readonly path: string
  readonly reason:
    | "UnsafeName"
    | "NonFinite"
    | "NulCharacter"
    | "LoneSurrogate"
    | "OutOfRange"
    | "Subnormal"
    | "Unsupported"
  readonly message: string
}> {
  get hint(): string {
    return hints[this.reason]
  }
}

const hints: Record<ParameterError["reason"], string> = {
  UnsafeName: "parameter names and map keys must be non-empty and contain no backtick or NUL",
  NonFinite: "Cypher has no NaN/Infinity literal; send null or a sentinel instead",
  NulCharacter: "a NUL character truncates the query on the server and has no escape",
  LoneSurrogate: "the string is not valid Unicode (lone UTF-16 surrogate)",
  OutOfRange: "integers must fit in a signed 64-bit value",
  Subnormal: "FalkorDB 4.4 rejects doubles below 2.2250738585072014e-308 (Float overflow); send 0 or a string",
  Unsupported: "pass plain data (ids, strings, maps) and build points/vectors/temporals in Cypher"
}

/**
 * Values accepted as parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type ParameterValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | ReadonlyArray<ParameterValue>
  | { readonly [key: string]: ParameterValue }

const bareName = /^[A-Za-z_][A-Za-z0-9_]*$/
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const minInt64 = -(2n ** 63n)
const maxInt64 = 2n ** 63n - 1n
/** The smallest normal double. */
const DBL_MIN = 2.2250738585072014e-308

const fail = (path: string, reason: ParameterError["reason"], message: string): never => {
  throw new ParameterError({ path, reason, message })
}

const encodeName = (name: string, path: string): string => {
  if (name.length === 0 || name.includes("`") || name.includes("\u0000")) {
    return fail(path, "UnsafeName", `cannot encode the name ${JSON.stringify(name)}`)
  }
  // Backticks always for parameter names: a bare name starting with "cypher" is mangled by the C server.
  return `\`${name}\``
}

const encodeString = (s: string, path: string): string => {
  if (s.includes("\u0000")) return fail(path, "NulCharacter", `string at ${path} contains NUL`)
  if (loneSurrogate.test(s)) return fail(path, "LoneSurrogate", `string at ${path} has a lone surrogate`)
  // Raw bytes pass unchanged inside quotes; only the backslash and the quote need escaping.
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`
}

const encodeValue = (value: ParameterValue, path: string): string => {
  if (value === null || value === undefined) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      if (value < minInt64 || value > maxInt64) return fail(path, "OutOfRange", `${value} does not fit int64`)
      return value.toString()
    case "number": {
      if (!Number.isFinite(value)) return fail(path, "NonFinite", `${value} at ${path} has no Cypher literal`)
      if (Number.isSafeInteger(value)) return Object.is(value, -0) ? "0" : String(value)
      // The C server parses with strtod and fails on ERANGE, so subnormals are refused ("Float overflow").
      if (value !== 0 && Math.abs(value) < DBL_MIN) {
        return fail(path, "Subnormal", `${value} at ${path} is subnormal; the server refuses it`)
      }
      const text = String(value)
      // A double must carry "." or "e", otherwise the server reads it as an integer.
      return /[.e]/.test(text) ? text : `${text}.0`
    }
    case "string":
      return encodeString(value, path)
    case "object": {
      if (Array.isArray(value)) {
        return `[${(value as ReadonlyArray<ParameterValue>).map((v, i) => encodeValue(v, `${path}[${i}]`)).join(", ")}]`
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) {
        return fail(path, "Unsupported", `${proto?.constructor?.name ?? "object"} at ${path} is not plain data`)
      }
      const entries = Object.entries(value as { readonly [key: string]: ParameterValue })
      const parts = entries.map(([k, v]) => {
        const key = bareName.test(k) ? k : encodeName(k, `${path}.${k}`)
        return `${key}: ${encodeValue(v, `${path}.${k}`)}`
      })
      return `{${parts.join(", ")}}`
    }
    default:
      return fail(path, "Unsupported", `${typeof value} at ${path} cannot be a parameter`)
  }
}

/**
 * Encodes one value as a Cypher literal.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeLiteral = (value: ParameterValue): Effect.Effect<string, ParameterError> =>
  Effect.try({ try: () => encodeValue(value, "$"), catch: (e) => e as ParameterError })

/**
 * Builds `CYPHER \`a\`=1 \`b\`='x' <query>`; the query is returned unchanged without parameters.
 *
 * @since 0.1.0
 * @category encoding
 */
export const withParameters = (
  query: string,
  parameters: { readonly [name: string]: ParameterValue } | undefined
): Effect.Effect<string, ParameterError> =>
  Effect.try({
    try: () => {
      const entries = parameters === undefined ? [] : Object.entries(parameters)
      if (entries.length === 0) return query
      let prefix = "CYPHER "
      for (const [name, value] of entries) prefix += `${encodeName(name, name)}=${encodeValue(value, name)} `
      return prefix + query
    },
    catch: (e) => e as ParameterError
  })

/**
 * A query text with the parameters it refers to, as built by {@link cypher}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Query {
  readonly _tag: "CypherQuery"
  readonly text: string
  readonly parameters: { readonly [name: string]: ParameterValue }
}

/**
 * A tagged template that binds every interpolated value as a parameter, never as text:
 * `` cypher`MATCH (m:Movie {title: ${title}}) RETURN m` `` gives the text
 * `MATCH (m:Movie {title: $p0}) RETURN m` with `{ p0: title }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cypher = (strings: TemplateStringsArray, ...values: ReadonlyArray<ParameterValue>): Query => {
  let text = strings[0]!
  const parameters: Record<string, ParameterValue> = {}
  for (let i = 0; i < values.length; i++) {
    parameters[`p${i}`] = values[i]
    text += `$p${i}${strings[i + 1]!}`
  }
  return { _tag: "CypherQuery", text, parameters }
}

/**
 * True for a {@link Query}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isQuery = (u: unknown): u is Query =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "CypherQuery"
