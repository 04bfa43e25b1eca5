/**
 * The `CYPHER name=value …` parameter prefix. FalkorDB has no bind API, so parameters
 * travel as literals in front of the query; this encoder only emits literals both
 * servers parse, and refuses everything else with a typed error.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { type TypedValue, typedForm } from "./internal/TypedValue.ts"

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
    | "Cyclic"
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
  Cyclic: "a parameter that contains itself has no literal; send a tree (ids instead of back references)",
  Unsupported: "pass plain data (ids, strings, maps) and build points/vectors/temporals in Cypher"
}

type Scalar = null | undefined | boolean | number | bigint | string

/**
 * Values accepted as parameters: plain data, plus points, vectors and temporal values.
 * `undefined` is sent as `null` (like an optional field that is absent), at the top level
 * and inside lists and maps alike.
 *
 * FalkorDB's `CYPHER` prefix takes literals only, so a `Point`, a `Float32Array` or a
 * temporal value is sent in its plain form — `{latitude, longitude}`, a number list, ISO
 * text (`'2024-01-02'`, `'03:04:05'`, `'2024-01-02T03:04:05'`, `'PT93600S'`) — and the query
 * must rebuild it: the {@link cypher} template writes `point($p0)`, `vecf32($p0)`,
 * `date($p0)`, `localtime($p0)`, `localdatetime($p0)`, `duration($p0)` itself; with
 * explicit parameters you write the constructor (`RETURN point($where)`).
 *
 * @since 0.1.0
 * @category models
 */
export type ParameterValue =
  | Scalar
  | TypedValue
  | ReadonlyArray<ParameterValue>
  | { readonly [key: string]: ParameterValue }

/**
 * `T` checked as plain data, field by field, so values typed by an `interface` are accepted
 * (an interface has no index signature, so it never matches `ParameterValue`'s map). Class
 * instances such as `Date` or `Float32Array` and functions are refused by the type, as the
 * encoder refuses them at run time.
 *
 * @example
 * ```ts
 * import type { Parameter } from "@effect-falkordb/graph/Cypher"
 *
 * interface User { readonly name: string; readonly tags: ReadonlyArray<string> }
 * const user: Parameter<User> = { name: "Ann", tags: ["a"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Parameter<T> = T extends Scalar
  ? T
  : T extends TypedValue
    ? T
    : T extends ReadonlyArray<infer U>
      ? ReadonlyArray<Parameter<U>>
      : T extends (...args: ReadonlyArray<never>) => unknown
        ? never
        : T extends object
          ? { readonly [K in keyof T]: Parameter<T[K]> }
          : never

/**
 * A parameters object checked as plain data (see {@link Parameter}).
 *
 * @since 0.1.0
 * @category models
 */
export type ParametersOf<P> = { readonly [K in keyof P]: Parameter<P[K]> }

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
  // Sent as UTF-8, a lone surrogate would become U+FFFD: the server would see another key.
  if (loneSurrogate.test(name)) return fail(path, "LoneSurrogate", `the name at ${path} has a lone surrogate`)
  // Backticks always for parameter names: a bare name starting with "cypher" is mangled by the C server.
  return `\`${name}\``
}

const encodeString = (s: string, path: string): string => {
  if (s.includes("\u0000")) return fail(path, "NulCharacter", `string at ${path} contains NUL`)
  if (loneSurrogate.test(s)) return fail(path, "LoneSurrogate", `string at ${path} has a lone surrogate`)
  // Raw bytes pass unchanged inside quotes; only the backslash and the quote need escaping.
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`
}

const encodeValue = (value: ParameterValue, path: string, ancestors: Set<object>): string => {
  if (value === null || value === undefined) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      if (value < minInt64 || value > maxInt64) return fail(path, "OutOfRange", `${value} does not fit int64`)
      return value.toString()
    case "number": {
      if (!Number.isFinite(value)) return fail(path, "NonFinite", `${value} at ${path} has no Cypher literal`)
      // -0 is a double: as "-0.0" the server keeps its sign (`RETURN $p` gives -0 back); "0" or "-0" would be integer 0.
      if (Number.isSafeInteger(value)) return Object.is(value, -0) ? "-0.0" : String(value)
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
      if (ancestors.has(value)) {
        return fail(path, "Cyclic", `${path} contains itself (a cycle back to an enclosing list or map)`)
      }
      if (Array.isArray(value)) {
        ancestors.add(value)
        const items = (value as ReadonlyArray<ParameterValue>).map((v, i) => encodeValue(v, `${path}[${i}]`, ancestors))
        ancestors.delete(value)
        return `[${items.join(", ")}]`
      }
      const typed = typedForm(value)
      if (typed !== undefined) return encodeValue(typed[1] as ParameterValue, path, ancestors)
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) {
        return fail(path, "Unsupported", `${proto?.constructor?.name ?? "object"} at ${path} is not plain data`)
      }
      ancestors.add(value)
      const entries = Object.entries(value as { readonly [key: string]: ParameterValue })
      const parts = entries.map(([k, v]) => {
        const key = bareName.test(k) ? k : encodeName(k, `${path}.${k}`)
        return `${key}: ${encodeValue(v, `${path}.${k}`, ancestors)}`
      })
      ancestors.delete(value)
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
  Effect.try({ try: () => encodeValue(value, "$", new Set()), catch: (e) => asParameterError(e, "$") })

/** What the encoder threw, as a `ParameterError` (a stack overflow on absurd nesting included). */
const asParameterError = (e: unknown, path: string): ParameterError =>
  e instanceof ParameterError
    ? e
    : new ParameterError({ path, reason: "Unsupported", message: `cannot encode ${path}: ${String(e)}` })

/**
 * Builds `CYPHER \`a\`=1 \`b\`='x' <query>`; the query is returned unchanged without parameters.
 *
 * @since 0.1.0
 * @category encoding
 */
export const withParameters = <P extends ParametersOf<P>>(
  query: string,
  parameters: P | undefined
): Effect.Effect<string, ParameterError> =>
  Effect.try({
    try: () => {
      const entries = parameters === undefined ? [] : Object.entries(parameters as object)
      if (entries.length === 0) return query
      let prefix = "CYPHER "
      for (const [name, value] of entries) {
        prefix += `${encodeName(name, name)}=${encodeValue(value as ParameterValue, name, new Set())} `
      }
      return prefix + query
    },
    catch: (e) => asParameterError(e, "parameters")
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
export const cypher = <const V extends ReadonlyArray<unknown>>(
  strings: TemplateStringsArray,
  ...values: V & { readonly [I in keyof V]: Parameter<V[I]> }
): Query => {
  let text = strings[0]!
  const parameters: Record<string, ParameterValue> = {}
  for (let i = 0; i < values.length; i++) {
    parameters[`p${i}`] = values[i] as ParameterValue
    // A point, vector or temporal value travels in plain form: rebuild it around the placeholder.
    const typed = typedForm(values[i])
    text += `${typed === undefined ? `$p${i}` : `${typed[0]}($p${i})`}${strings[i + 1]!}`
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
