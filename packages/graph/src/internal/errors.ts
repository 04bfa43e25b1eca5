// Constructors of the errors the index, constraint, procedure and batch helpers raise.
import {
  ConstraintFailed,
  Decode,
  FalkorError,
  InvalidArgument,
  InvalidIdentifier,
  WaitTimeout
} from "../FalkorError.ts"

/** A label, type or property name that cannot be one Cypher identifier. */
export const invalidIdentifier = (name: string, what: string, detail: string, graph?: string): FalkorError =>
  new FalkorError({ reason: new InvalidIdentifier({ name, what, detail, graph }) })

/** A helper's argument is out of its domain (before anything was sent). */
export const invalidArgument = (argument: string, detail: string, graph?: string, command?: string): FalkorError =>
  new FalkorError({
    reason: new InvalidArgument({ argument, detail, graph, command, serverMessage: undefined })
  })

/** Polling for an index or constraint gave up; `lastStatus` is what the server said last. */
export const waitTimeout = (what: string, lastStatus: string, graph: string): FalkorError =>
  new FalkorError({ reason: new WaitTimeout({ what, lastStatus, graph, command: "GRAPH.RO_QUERY" }) })

/** A constraint the server reports as FAILED (the existing data violates it). */
export const constraintFailed = (constraint: string, graph: string): FalkorError =>
  new FalkorError({ reason: new ConstraintFailed({ constraint, graph, command: "GRAPH.CONSTRAINT" }) })

/** A reply that does not have the shape the helper expects. */
export const malformed = (detail: string, graph: string | undefined, command: string): FalkorError =>
  new FalkorError({ reason: new Decode({ detail, graph, command, row: undefined, column: undefined }) })
