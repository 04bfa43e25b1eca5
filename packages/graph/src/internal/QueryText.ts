/**
 * What of a Cypher query may reach a span: its fingerprint (`db.query.text`, opt-in) and its
 * summary (`db.query.summary`).
 *
 * The fingerprint keeps the query's shape and drops every literal value: string literals
 * (single or double quoted, backslash escapes honoured, an unterminated one runs to the end)
 * and number literals (integers, decimals, exponents, hex, octal) become `?`; comments are
 * removed (they may quote anything); runs of whitespace become one space. Identifiers stay,
 * digits inside them too (`n1`), backticked identifiers stay as written (an unterminated one
 * becomes `?`), and parameters stay as `$name` — their values live in the `CYPHER …` prefix,
 * which is never part of the text fingerprinted. `true`, `false` and `null` stay.
 *
 * The summary is the query's clause keywords in order (`MATCH`, `OPTIONAL MATCH`, `CREATE`,
 * `MERGE`, `SET`, `DELETE`, `DETACH DELETE`, `REMOVE`, `WITH`, `UNWIND`, `RETURN`, `CALL`
 * with the procedure name, `FOREACH`, `UNION`, `LOAD CSV`, `CREATE INDEX`, `DROP INDEX`, …),
 * consecutive repeats collapsed, at most `MAX_CLAUSES`: bounded by the application's query
 * shapes, never by its data.
 *
 * @internal
 */

/** Clauses kept in a summary; more are cut and marked with `…`. */
export const MAX_CLAUSES = 8

const CLAUSES = new Set([
  "MATCH",
  "CREATE",
  "MERGE",
  "DELETE",
  "SET",
  "REMOVE",
  "RETURN",
  "WITH",
  "UNWIND",
  "CALL",
  "FOREACH",
  "UNION",
  "LOAD",
  "DROP"
])

/** What `CREATE` / `DROP` introduce when they are schema commands. */
const SCHEMA_OBJECTS: Record<string, string> = {
  INDEX: "INDEX",
  FULLTEXT: "INDEX",
  VECTOR: "INDEX",
  RANGE: "INDEX",
  CONSTRAINT: "CONSTRAINT"
}

const isIdentifierStart = (c: string): boolean => /[\p{L}_]/u.test(c)
const isIdentifierPart = (c: string): boolean => /[\p{L}\p{N}_]/u.test(c)
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9"

type Token =
  | { readonly kind: "word"; readonly text: string }
  | { readonly kind: "literal" }
  | { readonly kind: "quoted"; readonly text: string }
  | { readonly kind: "parameter"; readonly text: string }
  | { readonly kind: "punctuation"; readonly text: string }
  | { readonly kind: "space" }

/** Splits a query into tokens; never throws, whatever the input. */
const tokenize = (query: string): Array<Token> => {
  const tokens: Array<Token> = []
  const n = query.length
  let i = 0
  while (i < n) {
    const c = query[i]!
    const next = query[i + 1]
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") {
      i++
      tokens.push({ kind: "space" })
    } else if (c === "/" && next === "/") {
      while (i < n && query[i] !== "\n") i++
      tokens.push({ kind: "space" })
    } else if (c === "/" && next === "*") {
      const end = query.indexOf("*/", i + 2)
      i = end === -1 ? n : end + 2
      tokens.push({ kind: "space" })
    } else if (c === "'" || c === '"') {
      i++
      while (i < n && query[i] !== c) i += query[i] === "\\" ? 2 : 1
      i++
      tokens.push({ kind: "literal" })
    } else if (c === "`") {
      let j = i + 1
      for (;;) {
        const end = query.indexOf("`", j)
        if (end === -1) {
          j = -1
          break
        }
        // A doubled backtick is one backtick inside the name.
        if (query[end + 1] === "`") j = end + 2
        else {
          j = end + 1
          break
        }
      }
      if (j === -1) {
        tokens.push({ kind: "literal" })
        i = n
      } else {
        tokens.push({ kind: "quoted", text: query.slice(i, j) })
        i = j
      }
    } else if (c === "$") {
      let j = i + 1
      if (query[j] === "`") {
        const end = query.indexOf("`", j + 1)
        if (end === -1) {
          // Unterminated: whatever follows may be anything.
          tokens.push({ kind: "literal" })
          break
        }
        j = end + 1
      } else {
        while (j < n && isIdentifierPart(query[j]!)) j++
      }
      tokens.push({ kind: "parameter", text: query.slice(i, j) })
      i = j
    } else if (isDigit(c)) {
      i = numberEnd(query, i)
      tokens.push({ kind: "literal" })
    } else if (isIdentifierStart(c)) {
      let j = i + 1
      while (j < n && isIdentifierPart(query[j]!)) j++
      tokens.push({ kind: "word", text: query.slice(i, j) })
      i = j
    } else {
      // One code point (a surrogate pair stays whole).
      const width = c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdbff && i + 1 < n ? 2 : 1
      tokens.push({ kind: "punctuation", text: query.slice(i, i + width) })
      i += width
    }
  }
  return tokens
}

/** The end of a number literal starting at `i` (a digit). */
const numberEnd = (query: string, start: number): number => {
  const n = query.length
  let i = start
  if (query[i] === "0" && (query[i + 1] === "x" || query[i + 1] === "X" || query[i + 1] === "o")) i += 2
  while (i < n && isDigit(query[i])) i++
  // A fraction needs a digit after the point: `1..3` is a range of two integers.
  if (query[i] === "." && isDigit(query[i + 1])) {
    i++
    while (i < n && isDigit(query[i])) i++
  }
  if (
    (query[i] === "e" || query[i] === "E") &&
    (isDigit(query[i + 1]) || ((query[i + 1] === "-" || query[i + 1] === "+") && isDigit(query[i + 2])))
  ) {
    i += 2
    while (i < n && isDigit(query[i])) i++
  }
  // Whatever letters or digits run on (hex digits, a malformed literal) belong to it.
  while (i < n && isIdentifierPart(query[i]!)) i++
  return i
}

/**
 * The query with every literal replaced by `?`, comments removed and whitespace collapsed.
 *
 * @internal
 */
export const fingerprint = (query: string): string => {
  let out = ""
  let space = false
  for (const token of tokenize(query)) {
    if (token.kind === "space") {
      space = out.length > 0
      continue
    }
    if (space) out += " "
    space = false
    switch (token.kind) {
      case "literal":
        out += "?"
        break
      default:
        out += token.text
    }
  }
  return out
}

/**
 * The clause keywords of a query, e.g. `MATCH SET RETURN`; `undefined` when it has none.
 *
 * @internal
 */
export const summary = (query: string): string | undefined => {
  const tokens = tokenize(query).filter((token) => token.kind !== "space")
  const clauses: Array<string> = []
  let cut = false
  const add = (clause: string) => {
    if (clauses[clauses.length - 1] === clause) return
    if (clauses.length === MAX_CLAUSES) cut = true
    else clauses.push(clause)
  }
  const wordAt = (k: number): string | undefined => {
    const token = tokens[k]
    return token?.kind === "word" ? token.text.toUpperCase() : undefined
  }
  const textAt = (k: number): string | undefined => {
    const token = tokens[k]
    return token !== undefined && "text" in token ? token.text : undefined
  }
  for (let k = 0; k < tokens.length && !cut; k++) {
    const word = wordAt(k)
    if (word === undefined) continue
    const before = textAt(k - 1)
    const previous = wordAt(k - 1)
    // A property (`n.set`), a label (`:Match`) or a map key (`{create: 1}`) is not a clause.
    if (before === "." || before === ":" || textAt(k + 1) === ":") continue
    if (word === "OPTIONAL" && wordAt(k + 1) === "MATCH") {
      add("OPTIONAL MATCH")
      k++
    } else if (word === "DETACH" && wordAt(k + 1) === "DELETE") {
      add("DETACH DELETE")
      k++
    } else if (word === "ON" && (wordAt(k + 1) === "CREATE" || wordAt(k + 1) === "MATCH")) {
      // MERGE … ON CREATE SET: part of the MERGE.
      k++
    } else if (!CLAUSES.has(word)) {
    } else if (word === "WITH" && (previous === "STARTS" || previous === "ENDS")) {
    } else if (
      (word === "CREATE" || word === "DROP") &&
      wordAt(k + 1) !== undefined &&
      SCHEMA_OBJECTS[wordAt(k + 1)!]
    ) {
      add(`${word} ${SCHEMA_OBJECTS[wordAt(k + 1)!]}`)
    } else if (word === "LOAD" && wordAt(k + 1) === "CSV") {
      add("LOAD CSV")
      k++
    } else if (word === "CALL" && tokens[k + 1]?.kind === "word") {
      // The procedure's dotted name: a server procedure or a UDF, never data.
      let name = textAt(k + 1)!
      let j = k + 2
      while (textAt(j) === "." && tokens[j + 1]?.kind === "word") {
        name += `.${textAt(j + 1)}`
        j += 2
      }
      add(`CALL ${name}`)
      k = j - 1
    } else if (word === "LOAD") {
    } else {
      add(word)
    }
  }
  if (clauses.length === 0) return undefined
  return cut ? `${clauses.join(" ")} …` : clauses.join(" ")
}

/** Summaries of the most recent query texts: most applications send a few shapes over and over. */
const summaries = new Map<string, string | undefined>()
const CACHED = 512

/**
 * `summary`, remembered for recent query texts.
 *
 * @internal
 */
export const cachedSummary = (query: string): string | undefined => {
  if (summaries.has(query)) return summaries.get(query)
  const found = summary(query)
  if (summaries.size >= CACHED) summaries.clear()
  summaries.set(query, found)
  return found
}
