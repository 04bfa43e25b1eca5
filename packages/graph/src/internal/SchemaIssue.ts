// Where a Schema failure points: the first property key of its issue tree (a row's column alias).
import type * as Schema from "effect/Schema"

/** The first path segment of the first `Pointer` in `error`'s issue tree, if any. */
export const firstPathKey = (error: Schema.SchemaError): string | undefined => {
  const visit = (issue: unknown): string | undefined => {
    if (typeof issue !== "object" || issue === null) return undefined
    const node = issue as {
      _tag?: string
      path?: ReadonlyArray<PropertyKey>
      issue?: unknown
      issues?: ReadonlyArray<unknown>
    }
    if (node._tag === "Pointer" && node.path !== undefined && node.path.length > 0) return String(node.path[0])
    if (node.issue !== undefined) return visit(node.issue)
    if (node.issues !== undefined) {
      for (const inner of node.issues) {
        const found = visit(inner)
        if (found !== undefined) return found
      }
    }
    return undefined
  }
  return visit(error.issue)
}
