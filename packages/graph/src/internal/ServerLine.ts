/**
 * The classification of FalkorDB's server error lines: which reason of `FalkorError` a line
 * is (`classify`), and the parameter a parameter error names. Pure text rules, kept apart from
 * the reason classes so the rules can grow (each server release adds lines) without touching
 * the error model; `FalkorError.reasonFromServer` builds the reason.
 *
 * @internal
 */

/** The tag of a reason classified from a server error line. */
export type ServerReasonTag =
  | "Syntax"
  | "ReadOnlyQuery"
  | "Timeout"
  | "UnknownGraph"
  | "WrongType"
  | "UnknownFunction"
  | "UnknownProcedure"
  | "ModuleMissing"
  | "Unsupported"
  | "InvalidParameter"
  | "InvalidArgument"
  | "VersionMismatch"
  | "Backpressure"
  | "ConstraintViolation"
  | "Runtime"
  | "MissingIndex"
  | "IndexExists"
  | "IndexNotFound"
  | "ConstraintExists"
  | "ConstraintNotFound"
  | "ProcedureArguments"
  | "UnknownOutput"
  | "VectorDimension"
  | "UdfExists"
  | "UdfInvalid"
  | "UdfNotFound"
  | "UdfException"

const baseCommands = new Set(["query", "ro_query", "delete", "list", "explain", "profile", "copy", "slowlog", "config"])

/**
 * Classifies the text of a server error reply, C and Rust server forms alike. The checks
 * use `includes` on the whole line because many FalkorDB errors carry no `ERR` prefix and
 * one starts with `graph.RO_QUERY`.
 */
export const classify = (message: string): ServerReasonTag => {
  const lower = message.toLowerCase()
  const unknownGraphCommand = /^(?:err )?unknown command 'graph\.([a-z_]+)'/.exec(lower)
  if (unknownGraphCommand !== null) {
    // Commands every FalkorDB has: their absence means the module is not loaded. Newer ones
    // (GRAPH.MEMORY, GRAPH.UDF on 4.4) are missing because of the server version.
    return baseCommands.has(unknownGraphCommand[1]!) ? "ModuleMissing" : "Unsupported"
  }
  if (message.includes("is to be executed only on read-only queries")) return "ReadOnlyQuery"
  if (message.includes("Query timed out")) return "Timeout"
  if (message.includes("Invalid graph operation on empty key")) return "UnknownGraph"
  if (message.startsWith("WRONGTYPE") || message.includes("Existing key has wrong Redis type")) return "WrongType"
  if (message.includes("version mismatch") || message.includes("invalid graph version")) return "VersionMismatch"
  if (
    message.includes("Max pending queries exceeded") ||
    message.includes("Write queue is full") ||
    message.includes("another write is in progress") ||
    message.includes("write queue unavailable")
  ) {
    return "Backpressure"
  }
  if (message.startsWith("Unknown function '")) return "UnknownFunction"
  if (message.startsWith("Procedure `") && message.includes("is not registered")) return "UnknownProcedure"
  if (parameterOf(message) !== null) return "InvalidParameter"
  if (
    message.includes("Failed to parse query timeout value") ||
    message.includes("TIMEOUT parameter value cannot exceed") ||
    message.includes("Failed to parse graph version value") ||
    lower.startsWith("err wrong number of arguments") ||
    // GRAPH.CONFIG: a name the server does not know, one fixed at start-up or bounded by
    // another (TIMEOUT_DEFAULT above TIMEOUT_MAX), a value it cannot read.
    message === "Unknown configuration field" ||
    message.includes("configuration parameter cannot be set") ||
    message.startsWith("Failed to set config value")
  ) {
    return "InvalidArgument"
  }
  if (message.includes("constraint violation")) return "ConstraintViolation"
  if (message.includes("missing supporting exact-match index")) return "MissingIndex"
  if (/^Attribute '.*' is already indexed$/.test(message)) return "IndexExists"
  if (message.includes("Unable to drop index") && message.includes("no such index")) return "IndexNotFound"
  if (message === "Constraint already exists") return "ConstraintExists"
  if (message.startsWith("Procedure `") && /requires \d+ arguments?, got \d+/.test(message)) return "ProcedureArguments"
  if (message.startsWith("Invalid arguments for procedure")) return "ProcedureArguments"
  if (message.startsWith("Procedure `") && message.includes("does not yield output")) return "UnknownOutput"
  if (message.startsWith("Vector dimension mismatch")) return "VectorDimension"
  if (message.startsWith("Failed to register, UDF Library")) return "UdfExists"
  if (message.startsWith("Failed to evaluate UDF library")) return "UdfInvalid"
  if (/^Library .* does not exist$/.test(message)) return "UdfNotFound"
  if (message.startsWith("UDF Exception:")) return "UdfException"
  if (message.includes("Unable to drop constraint")) return "ConstraintNotFound"
  if (message.startsWith("errMsg:") || message.includes(", errCtx:") || message.includes(" errCtx: ")) return "Syntax"
  return "Runtime"
}

/**
 * The parameter a server's parameter error names: a string, `undefined` when it names none
 * (`Missing parameters`), `null` when the line is not a parameter error.
 */
export const parameterOf = (message: string): string | undefined | null => {
  const named =
    /Failed to parse query parameter '(.*)' value/.exec(message) ??
    /Failed to parse the value of parameter '(.*)'/.exec(message) ??
    /^Parameter (.*) not found/.exec(message)
  if (named !== null) return named[1]!
  return message === "Missing parameters" ? undefined : null
}
