// What both loaders of files (BulkLoader through GRAPH.BULK, IngestFiles through Cypher) read
// from an input's header the same way: labels and types from file names, and which columns are
// the key or the endpoints and which are properties. Shared so the two build the same graph.
import type { Input, NodeInput, RelationshipInput } from "../BulkLoader.ts"
import { InvalidSource, type LoadErrorReason } from "../LoadError.ts"
import type { ColumnType } from "./BulkValues.ts"

/** A property column: its name, its position in the row, its type. */
export interface Column {
  readonly name: string
  readonly index: number
  readonly type: ColumnType
}

/** The file's name up to its first dot: the default label or relationship type. */
export const baseName = (path: string): string => {
  const file = path.split(/[\\/]/).pop() ?? path
  const dot = file.indexOf(".")
  return dot > 0 ? file.slice(0, dot) : file
}

/** The name an input goes by in errors. */
export const inputName = (input: Input): string => (input._tag === "Records" ? input.name : input.path)

/** Columns and their types, with the key/endpoint columns picked out. */
export const columnsOf = (
  names: ReadonlyArray<string>,
  source: string,
  roles: ReadonlyArray<{ readonly option: string; readonly name: string | undefined; readonly fallback: number }>,
  types: NodeInput["types"],
  keepRole: (name: string) => boolean
): { readonly roles: ReadonlyArray<number>; readonly properties: ReadonlyArray<Column> } | LoadErrorReason => {
  const roleIndexes: Array<number> = []
  for (const role of roles) {
    const index = role.name === undefined ? role.fallback : names.indexOf(role.name)
    if (index < 0 || index >= names.length) {
      return new InvalidSource({
        source,
        detail:
          role.name === undefined
            ? `the header has ${names.length} columns; the ${role.option} column is column ${role.fallback + 1}`
            : `no column ${JSON.stringify(role.name)} for ${role.option} (columns: ${names.join(", ")})`
      })
    }
    roleIndexes.push(index)
  }
  const properties: Array<Column> = []
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!
    const type = types?.[name] ?? "infer"
    if (type === "ignore") continue
    if (roleIndexes.includes(index) && !keepRole(name)) continue
    if (name.length === 0) return new InvalidSource({ source, detail: `column ${index + 1} has no name` })
    if (name.includes("\u0000")) return new InvalidSource({ source, detail: `column ${index + 1}'s name contains NUL` })
    properties.push({ name, index, type })
  }
  for (const name of Object.keys(types ?? {})) {
    if (!names.includes(name)) {
      return new InvalidSource({
        source,
        detail: `a type is given for column ${JSON.stringify(name)}, which the header lacks`
      })
    }
  }
  return { roles: roleIndexes, properties }
}

/** A node input's label (given, or the file's base name; `A:B` is two labels), or why it is not one. */
export const nodeLabel = (node: NodeInput, source: string): string | InvalidSource => {
  const label = node.label ?? baseName(source)
  return label.length === 0 || label.includes("\u0000") || label.split(":").some((l) => l.length === 0)
    ? new InvalidSource({ source, detail: `invalid label ${JSON.stringify(label)}` })
    : label
}

/** A relationship input's type (given, or the file's base name), or why it is not one. */
export const relationshipType = (relationship: RelationshipInput, source: string): string | InvalidSource => {
  const type = relationship.type ?? baseName(source)
  return type.length === 0 || type.includes("\u0000") || type.includes(":")
    ? new InvalidSource({ source, detail: `invalid relationship type ${JSON.stringify(type)} (no ":" or NUL)` })
    : type
}

/** A node header: the key column (kept as a property unless its name starts with `_`) and the properties. */
export const nodeColumns = (
  names: ReadonlyArray<string>,
  source: string,
  node: NodeInput
): { readonly key: number; readonly properties: ReadonlyArray<Column> } | LoadErrorReason => {
  const found = columnsOf(
    names,
    source,
    [{ option: "key", name: node.key, fallback: 0 }],
    node.types,
    (name) => !name.startsWith("_")
  )
  return "_tag" in found ? found : { key: found.roles[0]!, properties: found.properties }
}

/** A relationship header: the two endpoint columns (never properties) and the properties. */
export const relationshipColumns = (
  names: ReadonlyArray<string>,
  source: string,
  relationship: RelationshipInput
): { readonly from: number; readonly to: number; readonly properties: ReadonlyArray<Column> } | LoadErrorReason => {
  const found = columnsOf(
    names,
    source,
    [
      { option: "from", name: relationship.from, fallback: 0 },
      { option: "to", name: relationship.to, fallback: 1 }
    ],
    relationship.types,
    () => false
  )
  return "_tag" in found ? found : { from: found.roles[0]!, to: found.roles[1]!, properties: found.properties }
}
