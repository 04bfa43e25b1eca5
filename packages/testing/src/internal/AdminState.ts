// What FalkorDBMock remembers of the schema commands: indexes made by the `CREATE … INDEX`
// texts the graph client's `Indexes` helper sends, constraints (`GRAPH.CONSTRAINT`), UDF
// libraries (`GRAPH.UDF`), and the answers of `CALL db.indexes()`, `CALL db.constraints()` and
// `GRAPH.INFO` built from them. Everything becomes OPERATIONAL at once; error lines are the
// ones FalkorDB 4.18 sends.
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"

type EntityType = "NODE" | "RELATIONSHIP"
type IndexType = "RANGE" | "FULLTEXT" | "VECTOR"
type Scalar = string | number

interface IndexEntry {
  readonly label: string
  readonly entityType: EntityType
  readonly property: string
  readonly type: IndexType
  readonly options: { readonly [key: string]: Scalar }
}

interface ConstraintEntry {
  readonly kind: string
  readonly entityType: EntityType
  readonly label: string
  readonly properties: ReadonlyArray<string>
}

/** A scripted-style answer: rows (plain values) or statistics, or a raw reply. */
export interface AdminAnswer {
  readonly columns?: ReadonlyArray<string>
  readonly rows?: ReadonlyArray<{ readonly [column: string]: unknown }>
  readonly statistics?: { readonly indicesCreated?: number; readonly indicesDeleted?: number }
  readonly error?: string
}

const IDENT = "(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)"
const DDL = new RegExp(
  `^(CREATE|DROP) (?:(FULLTEXT|VECTOR) )?INDEX FOR (?:\\((\\w+):${IDENT}\\)|\\(\\)-\\[(\\w+):${IDENT}\\]-\\(\\)) ON \\((.+?)\\)(?: OPTIONS \\{(.*)\\})?$`
)
const unquote = (ident: string): string => (ident.startsWith("`") ? ident.slice(1, -1) : ident)

const parseOptions = (text: string | undefined): { [key: string]: Scalar } => {
  const out: { [key: string]: Scalar } = {}
  if (text === undefined) return out
  for (const part of text.split(/,\s*/)) {
    const match = /^(\w+):\s*(?:'([^']*)'|(-?[\d.]+))$/.exec(part.trim())
    if (match !== null) out[match[1]!] = match[2] !== undefined ? match[2] : Number(match[3])
  }
  return out
}

const INDEX_COLUMNS = [
  "label",
  "properties",
  "types",
  "options",
  "language",
  "stopwords",
  "entitytype",
  "status",
  "info"
]
const CONSTRAINT_COLUMNS = ["type", "label", "properties", "entitytype", "status"]

/** The admin state of one mock. */
export class AdminState {
  private readonly indexes = new Map<string, Array<IndexEntry>>()
  private readonly constraints = new Map<string, Array<ConstraintEntry>>()
  private readonly libraries = new Map<string, { readonly code: string; readonly functions: ReadonlyArray<string> }>()

  private indexesOf(graph: string): Array<IndexEntry> {
    let list = this.indexes.get(graph)
    if (list === undefined) this.indexes.set(graph, (list = []))
    return list
  }

  private constraintsOf(graph: string): Array<ConstraintEntry> {
    let list = this.constraints.get(graph)
    if (list === undefined) this.constraints.set(graph, (list = []))
    return list
  }

  /** Forgets a graph (deleted). */
  forget(graph: string): void {
    this.indexes.delete(graph)
    this.constraints.delete(graph)
  }

  /** Answers an index DDL text or a `db.indexes()` / `db.constraints()` call; `undefined` for other queries. */
  query(graph: string, text: string): AdminAnswer | undefined {
    if (text === "CALL db.indexes()") return { columns: INDEX_COLUMNS, rows: this.indexRows(graph) }
    if (text === "CALL db.constraints()") return { columns: CONSTRAINT_COLUMNS, rows: this.constraintRows(graph) }
    const ddl = DDL.exec(text)
    if (ddl === null) return undefined
    const [, action, kind, nodeVar, nodeLabel, relVar, relType, on, options] = ddl
    const variable = nodeVar ?? relVar!
    const label = unquote(nodeLabel ?? relType!)
    const entityType: EntityType = nodeLabel !== undefined ? "NODE" : "RELATIONSHIP"
    const type = (kind ?? "RANGE") as IndexType
    const properties = on!.split(/,\s*/).map((p) => {
      const match = new RegExp(`^${variable}\\.${IDENT}$`).exec(p.trim())
      return match === null ? undefined : unquote(match[1]!)
    })
    if (properties.some((p) => p === undefined))
      return { error: `FalkorDBMock cannot read the index properties of ${text}` }
    const list = this.indexesOf(graph)
    const find = (p: string) =>
      list.findIndex((i) => i.label === label && i.entityType === entityType && i.property === p && i.type === type)
    if (action === "CREATE") {
      const taken = (properties as Array<string>).find((p) => find(p) !== -1)
      if (taken !== undefined) return { error: `Attribute '${taken}' is already indexed` }
      for (const p of properties as Array<string>)
        list.push({ label, entityType, property: p, type, options: parseOptions(options) })
      return { statistics: { indicesCreated: properties.length } }
    }
    const missing = (properties as Array<string>).find((p) => find(p) === -1)
    if (missing !== undefined) return { error: `ERR Unable to drop index on :${label}(${missing}): no such index.` }
    for (const p of properties as Array<string>) list.splice(find(p), 1)
    return { statistics: { indicesDeleted: properties.length } }
  }

  private indexRows(graph: string) {
    const groups = new Map<string, Array<IndexEntry>>()
    for (const entry of this.indexesOf(graph)) {
      const key = `${entry.entityType}:${entry.label}`
      groups.set(key, [...(groups.get(key) ?? []), entry])
    }
    return [...groups.values()].map((entries) => {
      const properties = [...new Set(entries.map((e) => e.property))]
      const types: Record<string, Array<string>> = {}
      const options: Record<string, Record<string, Scalar>> = {}
      for (const e of entries) {
        types[e.property] = [...(types[e.property] ?? []), e.type]
        options[e.property] = { ...(options[e.property] ?? {}), ...e.options }
      }
      return {
        label: entries[0]!.label,
        properties,
        types,
        options,
        language: "english",
        stopwords: [],
        entitytype: entries[0]!.entityType,
        status: "OPERATIONAL",
        info: {}
      }
    })
  }

  private constraintRows(graph: string) {
    return this.constraintsOf(graph).map((c) => ({
      type: c.kind,
      label: c.label,
      properties: c.properties,
      entitytype: c.entityType,
      status: "OPERATIONAL"
    }))
  }

  /** `GRAPH.CONSTRAINT CREATE|DROP g kind entity label PROPERTIES n p…`. */
  constraint(args: ReadonlyArray<string>): Reply {
    const [, action, graph, kind, entity, label, keyword, count, ...properties] = args
    if (
      graph === undefined ||
      label === undefined ||
      keyword !== "PROPERTIES" ||
      count === undefined ||
      properties.length === 0
    ) {
      return new ErrorReply("ERR wrong number of arguments for 'graph.CONSTRAINT' command")
    }
    if (kind !== "UNIQUE" && kind !== "MANDATORY") return new ErrorReply("Invalid constraint type")
    if (Number(count) !== properties.length) return new ErrorReply("Number of properties doesn't match property count")
    const entityType: EntityType = entity === "RELATIONSHIP" ? "RELATIONSHIP" : "NODE"
    const list = this.constraintsOf(graph)
    const at = list.findIndex(
      (c) =>
        c.kind === kind &&
        c.entityType === entityType &&
        c.label === label &&
        c.properties.length === properties.length &&
        c.properties.every((p, i) => p === properties[i])
    )
    if (action === "DROP") {
      if (at === -1) return new ErrorReply("Unable to drop constraint, no such constraint.")
      list.splice(at, 1)
      return "OK"
    }
    if (action !== "CREATE") return new ErrorReply(`Unknown GRAPH.CONSTRAINT sub command ${action}`)
    if (at !== -1) return new ErrorReply("Constraint already exists")
    if (kind === "UNIQUE") {
      // A unique constraint needs a range index on the same label and properties, as on the server.
      const indexed = properties.every((p) =>
        this.indexesOf(graph).some(
          (i) => i.label === label && i.entityType === entityType && i.property === p && i.type === "RANGE"
        )
      )
      if (!indexed) return new ErrorReply("missing supporting exact-match index")
    }
    list.push({ kind, entityType, label, properties })
    return "PENDING"
  }

  /** `GRAPH.UDF LOAD [REPLACE] lib code | LIST [lib] [WITHCODE] | DELETE lib | FLUSH`. */
  udf(args: ReadonlyArray<string>): Reply {
    const sub = (args[1] ?? "").toUpperCase()
    const rest = args.slice(2)
    switch (sub) {
      case "LOAD": {
        const replace = rest[0]?.toUpperCase() === "REPLACE"
        const [name, code] = replace ? rest.slice(1) : rest
        if (name === undefined || code === undefined)
          return new ErrorReply("ERR wrong number of arguments for 'graph.UDF' command")
        if (this.libraries.has(name) && !replace) {
          return new ErrorReply(`Failed to register, UDF Library '${name}' already registered`)
        }
        const functions = [...code.matchAll(/falkor\.register\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!)
        this.libraries.set(name, { code, functions })
        return "OK"
      }
      case "LIST": {
        const withCode = rest.some((a) => a.toUpperCase() === "WITHCODE")
        const only = rest.find((a) => a.toUpperCase() !== "WITHCODE")
        return [...this.libraries]
          .filter(([name]) => only === undefined || name === only)
          .map(([name, lib]) => [
            "library_name",
            name,
            "functions",
            [...lib.functions],
            ...(withCode ? ["library_code", new TextEncoder().encode(lib.code)] : [])
          ])
      }
      case "DELETE": {
        const name = rest[0] ?? ""
        if (!this.libraries.delete(name)) return new ErrorReply(`Library ${name} does not exist`)
        return "OK"
      }
      case "FLUSH":
        this.libraries.clear()
        return "OK"
      default:
        return args.length < 2
          ? new ErrorReply("ERR wrong number of arguments for 'graph.UDF' command")
          : new ErrorReply(`Unknown GRAPH.UDF sub command ${args[1]}`)
    }
  }

  /** `GRAPH.INFO [section …]`: nothing running, nothing waiting, an empty object pool. */
  info(args: ReadonlyArray<string>): Reply {
    const bulk = (s: string) => new TextEncoder().encode(s)
    const sections: Record<string, ReadonlyArray<Reply>> = {
      RUNNINGQUERIES: [bulk("# Running queries"), []],
      WAITINGQUERIES: [bulk("# Waiting queries"), []],
      OBJECTPOOL: [
        bulk("Object Pool"),
        [
          [bulk("Unique Objects in Pool"), 0],
          [bulk("Average References per Object"), bulk("0")]
        ]
      ]
    }
    const asked = args.length > 1 ? args.slice(1).map((s) => s.toUpperCase()) : Object.keys(sections)
    if (asked.some((s) => sections[s] === undefined)) return bulk("no section found")
    return asked.flatMap((s) => sections[s]!)
  }
}
