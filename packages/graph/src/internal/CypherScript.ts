/**
 * Splits a Cypher script (a `.cypher` migration file) into its statements. FalkorDB runs one
 * statement per `GRAPH.QUERY`, so a file of several is sent statement by statement.
 *
 * A statement ends at a `;` that is outside a string (`'…'`, `"…"`, with backslash escapes),
 * a backticked name and a comment (`// …`, `/* … *\/`). Statements that hold nothing but
 * blanks and comments are dropped; the others are kept as written, trimmed.
 *
 * @internal
 */

/** Where an unterminated string, name or comment starts, for the error message. */
export class ScriptError extends Error {
  readonly what: string
  readonly line: number
  constructor(what: string, line: number) {
    super(`unterminated ${what} starting on line ${line}`)
    this.what = what
    this.line = line
  }
}

const lineOf = (text: string, index: number): number => {
  let line = 1
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** The statements of `text`, in order; throws a `ScriptError` on an unterminated token. */
export const splitStatements = (text: string): Array<string> => {
  const statements: Array<string> = []
  let start = 0
  // Whether the current statement holds anything but blanks and comments.
  let code = false
  let i = 0
  const end = (what: string, from: number, opening: number, closing: string, escapes: boolean): number => {
    let j = from + opening
    while (j < text.length) {
      const c = text[j]!
      if (escapes && c === "\\") j += 2
      else if (text.startsWith(closing, j)) return j + closing.length
      else j++
    }
    throw new ScriptError(what, lineOf(text, from))
  }
  const cut = (to: number) => {
    if (code) statements.push(text.slice(start, to).trim())
    code = false
  }
  while (i < text.length) {
    const c = text[i]!
    if (c === "'" || c === '"') {
      i = end("string", i, 1, c, true)
      code = true
    } else if (c === "`") {
      i = end("backticked name", i, 1, "`", false)
      code = true
    } else if (text.startsWith("//", i)) {
      const newline = text.indexOf("\n", i)
      i = newline === -1 ? text.length : newline + 1
    } else if (text.startsWith("/*", i)) {
      i = end("comment", i, 2, "*/", false)
    } else if (c === ";") {
      cut(i)
      i++
      start = i
    } else {
      if (c.trim() !== "") code = true
      i++
    }
  }
  cut(text.length)
  return statements
}
