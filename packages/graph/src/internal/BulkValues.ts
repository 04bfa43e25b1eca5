// Cells as GRAPH.BULK values: text cells (CSV) are inferred like falkordb-bulk-loader does
// (empty → null, then integer, double, boolean, `[…]` array, else string) or parsed as the
// column's declared type; object cells (JSONL, records) are encoded by their JavaScript type or
// coerced to the declared type. Problems throw `ValueProblem`; the loader adds the place.
import { ValueProblem, type Writer } from "./BulkEncoder.ts"

/** A column's type: inferred per value (`infer`, the default) or declared. */
export type ColumnType = "infer" | "integer" | "double" | "boolean" | "string" | "array"

const integerText = /^[+-]?\d+$/
const doubleText = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/
const MIN_LONG = -(2n ** 63n)
const MAX_LONG = 2n ** 63n - 1n

const parseArray = (text: string): Array<unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** A text cell, trimmed, written as `type`. */
export const writeText = (writer: Writer, raw: string, type: ColumnType): void => {
  const text = raw.trim()
  if (text.length === 0) {
    writer.null()
    return
  }
  switch (type) {
    case "string":
      writer.string(text)
      return
    case "integer": {
      if (!integerText.test(text)) throw new ValueProblem(`${JSON.stringify(text)} is not an integer`)
      writer.long(BigInt(text))
      return
    }
    case "double": {
      if (!doubleText.test(text)) throw new ValueProblem(`${JSON.stringify(text)} is not a double`)
      writer.double(Number(text))
      return
    }
    case "boolean": {
      const lower = text.toLowerCase()
      if (lower !== "true" && lower !== "false") throw new ValueProblem(`${JSON.stringify(text)} is not a boolean`)
      writer.boolean(lower === "true")
      return
    }
    case "array": {
      const array = text.startsWith("[") ? parseArray(text) : undefined
      if (array === undefined) throw new ValueProblem(`${JSON.stringify(text)} is not a JSON array`)
      writer.value(array)
      return
    }
    case "infer": {
      if (integerText.test(text)) {
        const n = BigInt(text)
        if (n >= MIN_LONG && n <= MAX_LONG) {
          writer.long(n)
          return
        }
      }
      if (doubleText.test(text)) {
        const n = Number(text)
        if (Number.isFinite(n)) {
          writer.double(n)
          return
        }
      }
      const lower = text.toLowerCase()
      if (lower === "true" || lower === "false") {
        writer.boolean(lower === "true")
        return
      }
      if (text.startsWith("[") && text.endsWith("]")) {
        const array = parseArray(text)
        if (array !== undefined) {
          writer.value(array)
          return
        }
      }
      writer.string(text)
      return
    }
  }
}

/** A JavaScript value (JSONL, records) written as `type`. */
export const writeValue = (writer: Writer, value: unknown, type: ColumnType): void => {
  if (value === null || value === undefined) {
    writer.null()
    return
  }
  if (typeof value === "string" && type !== "string" && type !== "infer") {
    writeText(writer, value, type)
    return
  }
  switch (type) {
    case "infer":
      writer.value(value)
      return
    case "string":
      if (typeof value === "object") throw new ValueProblem("an array or object is not a string")
      writer.string(String(value))
      return
    case "integer":
      if (typeof value === "bigint") {
        writer.long(value)
        return
      }
      if (typeof value === "number" && Number.isSafeInteger(value)) {
        writer.long(BigInt(value))
        return
      }
      throw new ValueProblem(`${String(value)} is not an integer`)
    case "double":
      if (typeof value === "number") {
        writer.double(value)
        return
      }
      throw new ValueProblem(`${String(value)} is not a double`)
    case "boolean":
      if (typeof value === "boolean") {
        writer.boolean(value)
        return
      }
      throw new ValueProblem(`${String(value)} is not a boolean`)
    case "array":
      if (Array.isArray(value)) {
        writer.value(value)
        return
      }
      throw new ValueProblem(`${String(value)} is not an array`)
  }
}

/** The key of a node or endpoint cell, as the id map holds it. */
export const keyOf = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  const text =
    typeof value === "string" ? value.trim() : typeof value === "object" ? JSON.stringify(value) : String(value)
  return text.length === 0 ? undefined : text
}
