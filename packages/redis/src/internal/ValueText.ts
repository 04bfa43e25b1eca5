/**
 * How an option's value is named in an error message: its type as well as its text, so that
 * `port: "38949"` (a string read from somewhere untyped) is told apart from a wrong number.
 *
 * @internal
 */

const MAX_SHOWN = 60

const shown = (text: string): string => (text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text)

/** `the string "38949"`, `the number 1.5`, `true`, `null`, `an array`, `an object` … */
export const describeValue = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return `the string ${shown(JSON.stringify(value))}`
    case "number":
      return Number.isNaN(value) ? "NaN" : `the number ${value}`
    case "bigint":
      return `the bigint ${value}n`
    case "boolean":
      return `the boolean ${value}`
    case "undefined":
      return "undefined"
    case "symbol":
      return "a symbol"
    case "function":
      return "a function"
  }
  if (value === null) return "null"
  if (Array.isArray(value)) return `an array of ${value.length}`
  const name = Object.getPrototypeOf(value)?.constructor?.name
  return typeof name === "string" && name !== "Object" ? `a ${name}` : "an object"
}

/** `field: expected <expected>, got <the value described>`. */
export const expected = (field: string, what: string, value: unknown): string =>
  `${field}: expected ${what}, got ${describeValue(value)}`
