// The `$name` parameters a Cypher query refers to, as the server's parser sees them: names
// inside string literals, `backtick` identifiers and comments are not references.

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y

/** The parameter names `query` refers to, each once, in order of first use. */
export const referencedParameters = (query: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  const n = query.length
  let i = 0
  while (i < n) {
    const c = query[i]!
    if (c === "'" || c === '"') {
      i++
      while (i < n && query[i] !== c) i += query[i] === "\\" ? 2 : 1
      i++
    } else if (c === "`") {
      const end = query.indexOf("`", i + 1)
      i = end === -1 ? n : end + 1
    } else if (c === "/" && query[i + 1] === "/") {
      const end = query.indexOf("\n", i + 2)
      i = end === -1 ? n : end + 1
    } else if (c === "/" && query[i + 1] === "*") {
      const end = query.indexOf("*/", i + 2)
      i = end === -1 ? n : end + 2
    } else if (c === "$") {
      if (query[i + 1] === "`") {
        const end = query.indexOf("`", i + 2)
        if (end === -1) return [...names]
        names.add(query.slice(i + 2, end))
        i = end + 1
      } else {
        NAME.lastIndex = i + 1
        const match = NAME.exec(query)
        if (match !== null) names.add(match[0])
        i = match === null ? i + 1 : i + 1 + match[0].length
      }
    } else {
      i++
    }
  }
  return [...names]
}
