// What a model's fields become on a node: checked once, when a repository is built. FalkorDB
// stores as a property only primitives (string, integer, double, boolean), lists of them,
// points, vectors and temporal values; a map, a list of maps, a function or another class
// cannot be stored, so such a field is refused with its name before anything is sent.
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Temporal from "../Temporal.ts"
import { Point } from "../Value.ts"
import { typedForm } from "./TypedValue.ts"

/** How one field is written and read back. */
export interface Field {
  readonly name: string
  /** The Cypher function that rebuilds the value from its plain form (`vecf32`, `date`, …), if any. */
  readonly rebuild: string | undefined
  /** The encoded type admits `null`: an absent property reads back as `null`. */
  readonly nullable: boolean
  /** The encoded type is a `bigint`: a safe integer reads back as `BigInt(n)`. */
  readonly bigint: boolean
  /** The property may be absent (an optional key). */
  readonly optional: boolean
}

/** Values of the typed kinds, to find which one a declaration (`Schema.instanceOf`) accepts. */
const samples: ReadonlyArray<unknown> = [
  new Float32Array(0),
  new Point(0, 0),
  new Temporal.Date(0),
  new Temporal.DateTime(0),
  new Temporal.Time(0),
  new Temporal.Duration(0)
]

interface Kind {
  readonly rebuild: string | undefined
  readonly nullable: boolean
  readonly bigint: boolean
}

/** A refusal: why the field cannot be stored. */
export class Unstorable {
  readonly detail: string
  constructor(detail: string) {
    this.detail = detail
  }
}

const primitive: Kind = { rebuild: undefined, nullable: false, bigint: false }

const kindOf = (ast: SchemaAST.AST, inList: boolean): Kind | Unstorable => {
  switch (ast._tag) {
    case "String":
    case "Number":
    case "Boolean":
    case "TemplateLiteral":
    case "Enum":
      return primitive
    case "BigInt":
      return { ...primitive, bigint: true }
    case "Literal":
      return typeof ast.literal === "bigint" ? { ...primitive, bigint: true } : primitive
    case "Null":
    case "Undefined":
    case "Void":
      return { ...primitive, nullable: ast._tag === "Null" }
    case "Suspend":
      return new Unstorable("a recursive schema (FalkorDB stores no nested values)")
    case "Arrays": {
      for (const element of [...ast.elements, ...ast.rest]) {
        const kind = kindOf(element, true)
        if (kind instanceof Unstorable) return new Unstorable(`a list of ${kind.detail.replace(/^an? /, "")}`)
      }
      return primitive
    }
    case "Objects":
      return new Unstorable(
        "a nested object (a property holds a primitive, a list of primitives, a point, a vector or a temporal value, never a map)"
      )
    case "Union": {
      let rebuild: string | undefined
      let nullable = false
      let bigint = false
      let plain = false
      for (const member of ast.types) {
        const kind = kindOf(member, inList)
        if (kind instanceof Unstorable) return kind
        nullable ||= kind.nullable
        bigint ||= kind.bigint
        if (kind.rebuild !== undefined) {
          if (rebuild !== undefined && rebuild !== kind.rebuild) {
            return new Unstorable(
              `a union of ${rebuild} and ${kind.rebuild} values (the query cannot tell which to rebuild)`
            )
          }
          rebuild = kind.rebuild
        } else if (member._tag !== "Null" && member._tag !== "Undefined" && member._tag !== "Void") plain = true
      }
      if (rebuild !== undefined && plain) {
        return new Unstorable(`a union of ${rebuild} values and plain values (the query cannot tell which to rebuild)`)
      }
      return { rebuild, nullable, bigint }
    }
    case "Declaration": {
      const is = Schema.is(Schema.make(ast))
      const sample = samples.find((value) => is(value))
      if (sample === undefined) {
        return new Unstorable(
          "a class instance FalkorDB cannot store (a JS Date, a Uint8Array, a function, …); use a Schema that encodes to a string or a number, or a Value schema (Value.DateTimeSchema, Value.VectorSchema, …)"
        )
      }
      if (inList)
        return new Unstorable(`a list of ${typedForm(sample)![0]} values (a list property holds primitives only)`)
      return { ...primitive, rebuild: typedForm(sample)![0] }
    }
    default:
      return new Unstorable(
        `a value of schema type ${ast._tag} (give the field a precise schema: a primitive, a list of primitives, a point, a vector or a temporal value)`
      )
  }
}

/**
 * The fields of a model whose encoded form is the `Objects` of `ast`, or the first field that
 * cannot be stored (its name and why).
 */
export const fieldsOf = (
  ast: SchemaAST.AST
): ReadonlyArray<Field> | { readonly field: string | undefined; readonly detail: string } => {
  const encoded = SchemaAST.toEncoded(ast)
  if (encoded._tag !== "Objects" || encoded.indexSignatures.length > 0) {
    return { field: undefined, detail: "the model must encode to a struct of named fields" }
  }
  const fields: Array<Field> = []
  for (const property of encoded.propertySignatures) {
    const name = String(property.name)
    if (typeof property.name !== "string") return { field: name, detail: "a symbol key cannot name a property" }
    const kind = kindOf(property.type, false)
    if (kind instanceof Unstorable) return { field: name, detail: kind.detail }
    fields.push({ name, ...kind, optional: SchemaAST.isOptional(property.type) })
  }
  return fields
}
