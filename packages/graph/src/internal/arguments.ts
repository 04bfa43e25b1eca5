// Values written into a query as expressions over plain parameters. FalkorDB's `CYPHER`
// prefix takes literals only (`point(…)`, `vecf32(…)`, `date(…)` as parameter values fail
// with `Failed to parse query parameter`), so a typed value travels as its plain form and
// the query wraps the placeholder in the matching constructor: `vecf32($a0)`,
// `point($a1)`, `date($a2)`. Nodes travel as their id and are bound by a MATCH.
import type { ParameterValue } from "../Cypher.ts"
import { quoteOrThrow } from "../Identifier.ts"
import type * as Temporal from "../Temporal.ts"
import { Node, type Point } from "../Value.ts"
import { invalidArgument } from "./errors.ts"
import { typedForm } from "./TypedValue.ts"

/** A node given by id, for procedure arguments that take a node. */
export class NodeId {
  readonly _tag = "NodeId"
  readonly id: number | bigint
  constructor(id: number | bigint) {
    this.id = id
  }
}

/** A value usable as an argument: plain data, or a typed value the query constructs. */
export type Argument =
  | ParameterValue
  | Node
  | NodeId
  | Point
  | Float32Array
  | Temporal.Temporal
  | ReadonlyArray<Argument>
  | { readonly [key: string]: Argument }

/** What encoding produced: expression text, the parameters it refers to, nodes to bind. */
export interface Encoder {
  readonly parameters: Record<string, ParameterValue>
  /** `[variable, parameter]` of each node argument, in order. */
  readonly nodes: Array<readonly [string, string]>
  next: number
  readonly prefix: string
}

export const encoder = (prefix: string): Encoder => ({ parameters: {}, nodes: [], next: 0, prefix })

const isPlain = (value: Argument): value is ParameterValue => {
  if (value === null || value === undefined) return true
  if (typeof value !== "object") return true
  if (typedForm(value) !== undefined) return false
  if (Array.isArray(value)) return (value as ReadonlyArray<Argument>).every(isPlain)
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  return Object.values(value as { readonly [key: string]: Argument }).every(isPlain)
}

const bind = (enc: Encoder, value: ParameterValue): string => {
  const name = `${enc.prefix}${enc.next++}`
  enc.parameters[name] = value
  return `$${name}`
}

/** The expression for `value`, binding its plain parts as parameters. */
export const encode = (enc: Encoder, value: Argument, path: string): string => {
  if (isPlain(value)) return bind(enc, value)
  if (value instanceof Node || value instanceof NodeId) {
    const variable = `n${enc.nodes.length}`
    const parameter = `${variable}id`
    enc.parameters[parameter] = value.id
    enc.nodes.push([variable, parameter])
    return variable
  }
  const typed = typedForm(value)
  if (typed !== undefined) return `${typed[0]}(${bind(enc, typed[1] as ParameterValue)})`
  if (Array.isArray(value)) {
    return `[${(value as ReadonlyArray<Argument>).map((v, i) => encode(enc, v, `${path}[${i}]`)).join(", ")}]`
  }
  const proto = Object.getPrototypeOf(value)
  if (typeof value === "object" && value !== null && (proto === Object.prototype || proto === null)) {
    const parts = Object.entries(value as { readonly [key: string]: Argument }).map(
      ([k, v]) => `${quoteOrThrow(k, "map key")}: ${encode(enc, v, `${path}.${k}`)}`
    )
    return `{${parts.join(", ")}}`
  }
  throw invalidArgument(path, `not plain data or a supported value (${String(value)})`)
}

/** `MATCH (n0), (n1) WHERE id(n0) = $n0id AND id(n1) = $n1id ` for the node arguments, or "". */
export const matchNodes = (enc: Encoder): string =>
  enc.nodes.length === 0
    ? ""
    : `MATCH ${enc.nodes.map(([v]) => `(${v})`).join(", ")} WHERE ${enc.nodes
        .map(([v, p]) => `id(${v}) = $${p}`)
        .join(" AND ")} `
