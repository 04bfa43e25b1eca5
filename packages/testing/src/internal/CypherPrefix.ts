// Reads the `CYPHER name=value …` parameter prefix back into values, so a mock can match
// and record queries by their text and parameters the way the caller wrote them. The
// literal grammar is the server's (openCypher literals as FalkorDB reads them): quoted
// strings with the escapes \\ \' \" \n \t \r \b \f decoded and any other backslash kept
// verbatim, integers (bigint outside the safe range), doubles, booleans, null, lists, maps.
/** A parameter value as read back: `undefined` was sent as `null`. */
export type Parameter =
  | null
  | boolean
  | number
  | bigint
  | string
  | ReadonlyArray<Parameter>
  | { readonly [key: string]: Parameter }

export interface Split {
  readonly query: string
  readonly parameters: { readonly [name: string]: Parameter }
}

export class PrefixError extends Error {
  readonly offset: number
  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`)
    this.offset = offset
  }
}

const ESCAPES: Record<string, string> = { "\\": "\\", "'": "'", '"': '"', n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" }

class Reader {
  at = 0
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  skipSpace(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at]!)) this.at++
  }
  fail(message: string): never {
    throw new PrefixError(message, this.at)
  }
  name(): string {
    const text = this.text
    if (text[this.at] === "`") {
      const end = text.indexOf("`", this.at + 1)
      if (end === -1) this.fail("unterminated `name`")
      const name = text.slice(this.at + 1, end)
      this.at = end + 1
      return name
    }
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(this.at))
    if (match === null) this.fail("expected a parameter name")
    this.at += match[0].length
    return match[0]
  }
  string(): string {
    const quote = this.text[this.at]!
    let out = ""
    this.at++
    while (this.at < this.text.length) {
      const c = this.text[this.at]!
      if (c === quote) {
        this.at++
        return out
      }
      if (c === "\\" && this.at + 1 < this.text.length) {
        const next = this.text[this.at + 1]!
        const decoded = ESCAPES[next]
        out += decoded ?? `\\${next}`
        this.at += 2
        continue
      }
      out += c
      this.at++
    }
    return this.fail("unterminated string literal")
  }
  value(): Parameter {
    this.skipSpace()
    const text = this.text
    const c = text[this.at]
    if (c === undefined) this.fail("expected a value")
    if (c === "'" || c === '"') return this.string()
    if (c === "[") {
      this.at++
      const out: Array<Parameter> = []
      this.skipSpace()
      if (text[this.at] === "]") {
        this.at++
        return out
      }
      while (true) {
        out.push(this.value())
        this.skipSpace()
        if (text[this.at] === ",") {
          this.at++
          continue
        }
        if (text[this.at] === "]") {
          this.at++
          return out
        }
        this.fail("expected , or ] in a list")
      }
    }
    if (c === "{") {
      this.at++
      const out: Record<string, Parameter> = {}
      this.skipSpace()
      if (text[this.at] === "}") {
        this.at++
        return out
      }
      while (true) {
        this.skipSpace()
        const key = this.name()
        this.skipSpace()
        if (text[this.at] !== ":") this.fail("expected : after a map key")
        this.at++
        const item = this.value()
        if (key === "__proto__") {
          Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true })
        } else out[key] = item
        this.skipSpace()
        if (text[this.at] === ",") {
          this.at++
          continue
        }
        if (text[this.at] === "}") {
          this.at++
          return out
        }
        this.fail("expected , or } in a map")
      }
    }
    const word = /^[A-Za-z]+/.exec(text.slice(this.at))?.[0]?.toLowerCase()
    if (word === "null" || word === "true" || word === "false") {
      this.at += word.length
      return word === "null" ? null : word === "true"
    }
    const hex = /^-?0x[0-9a-fA-F]+/.exec(text.slice(this.at))
    if (hex !== null) {
      this.at += hex[0].length
      const n = hex[0].startsWith("-") ? -BigInt(hex[0].slice(1)) : BigInt(hex[0])
      return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
    }
    const number = /^-?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)/.exec(text.slice(this.at))
    if (number === null) return this.fail("expected a literal")
    this.at += number[0].length
    const literal = number[0]
    if (/[.eE]/.test(literal)) return Number(literal)
    const n = BigInt(literal)
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
  }
}

/** Splits `CYPHER a=1 b='x' MATCH …` into the query and its parameters. */
export const split = (text: string): Split => {
  const reader = new Reader(text)
  const parameters: Record<string, Parameter> = {}
  let found = false
  while (true) {
    reader.skipSpace()
    const keyword = /^cypher\s/i.exec(text.slice(reader.at))
    if (keyword === null) break
    found = true
    reader.at += keyword[0].length
    while (true) {
      reader.skipSpace()
      // A parameter is `name=`; anything else starts the query.
      const save = reader.at
      const looksLikeName = text[reader.at] === "`" || /^[A-Za-z_][A-Za-z0-9_]*\s*=/.test(text.slice(reader.at))
      if (!looksLikeName) break
      const name = reader.name()
      reader.skipSpace()
      if (text[reader.at] !== "=") {
        reader.at = save
        break
      }
      reader.at++
      const value = reader.value()
      if (name === "__proto__") {
        Object.defineProperty(parameters, name, { value, enumerable: true, writable: true, configurable: true })
      } else parameters[name] = value
    }
  }
  return { query: found ? text.slice(reader.at) : text, parameters }
}
