/**
 * Parsers of the replies of the graph's admin commands: EXPLAIN/PROFILE plans, SLOWLOG,
 * MEMORY USAGE, CONFIG GET and LIST. Each throws a `FalkorError` (reason `Decode`) for a reply
 * of the wrong shape; every string goes through the one reply-to-text helper.
 *
 * @internal
 */
import { MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import { malformed } from "./errors.ts"
import type { MemoryUsage, Plan, SlowlogEntry } from "../Graph.ts"
import { text } from "./Text.ts"

/** True for an `OK` status, simple or bulk (the C server answers GRAPH.COPY with a bulk "OK"). */
export const isOk = (reply: Reply): boolean => text(reply) === "OK"

/**
 * Parses an EXPLAIN/PROFILE reply: lines indented 4 spaces per level, `Name | details`,
 * PROFILE lines suffixed `| Records produced: N, Execution time: X ms`.
 */
export const parsePlan = (reply: Reply, graph: string, command: string): Plan => {
  if (!Array.isArray(reply)) throw malformed(`${command} did not reply an array of lines`, graph, command)
  const lines = (reply as ReadonlyArray<Reply>).map((line) => {
    const s = text(line)
    if (s === undefined) throw malformed(`${command} replied a non-string line`, graph, command)
    return s
  })
  interface Mutable {
    name: string
    details: string | undefined
    recordsProduced: number | undefined
    executionTimeMs: number | undefined
    children: Array<Mutable>
  }
  const roots: Array<Mutable> = []
  const stack: Array<{ depth: number; op: Mutable }> = []
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    const depth = Math.floor(indent / 4)
    const segments = line
      .trim()
      .split("|")
      .map((s) => s.trim())
    let recordsProduced: number | undefined
    let executionTimeMs: number | undefined
    const lastSegment = segments[segments.length - 1]!
    if (segments.length > 1 && lastSegment.includes("Records produced")) {
      segments.pop()
      recordsProduced = Number(/Records produced: (\d+)/.exec(lastSegment)?.[1])
      executionTimeMs = Number(/Execution time: ([0-9.]+) ms/.exec(lastSegment)?.[1])
    }
    const op: Mutable = {
      name: segments[0]!,
      details: segments.length > 1 ? segments.slice(1).join(" | ") : undefined,
      recordsProduced,
      executionTimeMs,
      children: []
    }
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) stack.pop()
    if (stack.length === 0) roots.push(op)
    else stack[stack.length - 1]!.op.children.push(op)
    stack.push({ depth, op })
  }
  return { lines, roots }
}

/**
 * Parses a `GRAPH.SLOWLOG` reply (4- or 5-field entries; RESP2 bulk or RESP3 double
 * timestamps).
 */
export const parseSlowlog = (reply: Reply, graph: string): ReadonlyArray<SlowlogEntry> => {
  if (!Array.isArray(reply)) throw malformed("GRAPH.SLOWLOG did not reply an array", graph, "GRAPH.SLOWLOG")
  return (reply as ReadonlyArray<Reply>).map((entry, i) => {
    if (!Array.isArray(entry) || (entry.length !== 4 && entry.length !== 5)) {
      throw malformed(`slowlog entry ${i} does not have 4 or 5 fields`, graph, "GRAPH.SLOWLOG")
    }
    const fields = entry as ReadonlyArray<Reply>
    const num = (r: Reply) => (typeof r === "number" ? r : Number(text(r)))
    const command = text(fields[1]!)
    const query = text(fields[2]!)
    const timestamp = num(fields[0]!)
    const latencyMs = num(fields[3]!)
    const parameters = fields.length === 5 && fields[4] !== null ? text(fields[4]!) : undefined
    if (command === undefined || query === undefined || Number.isNaN(timestamp) || Number.isNaN(latencyMs)) {
      throw malformed(`slowlog entry ${i} is malformed`, graph, "GRAPH.SLOWLOG")
    }
    return { timestamp, command, query, latencyMs, parameters }
  })
}

/** A RESP3 map or a flat RESP2 `[key, value, …]` array as pairs. */
const flatPairs = (reply: Reply): ReadonlyArray<Reply> | undefined =>
  reply instanceof MapReply ? reply.flat : Array.isArray(reply) ? (reply as ReadonlyArray<Reply>) : undefined

/**
 * Parses a `GRAPH.MEMORY USAGE` reply (flat array in RESP2, map in RESP3 on the C server).
 */
export const parseMemoryUsage = (reply: Reply, graph: string): MemoryUsage => {
  const flat = flatPairs(reply)
  if (flat === undefined || flat.length % 2 !== 0) {
    throw malformed("GRAPH.MEMORY did not reply name/value pairs", graph, "GRAPH.MEMORY")
  }
  const out: Record<string, number | Record<string, number>> = {}
  for (let i = 0; i < flat.length; i += 2) {
    const key = text(flat[i]!)
    const value = flat[i + 1]!
    if (key === undefined) throw malformed("GRAPH.MEMORY replied a non-string name", graph, "GRAPH.MEMORY")
    if (typeof value === "number") {
      out[key] = value
      continue
    }
    const inner = flatPairs(value)
    if (inner === undefined || inner.length % 2 !== 0) {
      throw malformed(`GRAPH.MEMORY ${key} is neither a number nor pairs`, graph, "GRAPH.MEMORY")
    }
    const breakdown: Record<string, number> = {}
    for (let j = 0; j < inner.length; j += 2) {
      const k = text(inner[j]!)
      const v = inner[j + 1]
      if (k === undefined || typeof v !== "number") {
        throw malformed(`GRAPH.MEMORY ${key} has a malformed entry`, graph, "GRAPH.MEMORY")
      }
      Object.defineProperty(breakdown, k, { value: v, enumerable: true, writable: true, configurable: true })
    }
    out[key] = breakdown
  }
  return out
}

/** Parses a `GRAPH.CONFIG GET` reply: one `[name, value]`, or (for `*`) an array of them. */
export const parseConfig = (reply: Reply): ReadonlyArray<readonly [string, number | bigint | string | boolean]> => {
  const fail = () => malformed("GRAPH.CONFIG GET did not reply name/value pairs", undefined, "GRAPH.CONFIG")
  if (!Array.isArray(reply)) throw fail()
  const items = reply as ReadonlyArray<Reply>
  const pairs = items.length === 2 && !Array.isArray(items[0]) ? [items] : items
  return pairs.map((pair) => {
    if (!Array.isArray(pair) || pair.length !== 2) throw fail()
    const [key, value] = pair as ReadonlyArray<Reply>
    const k = text(key!)
    const v =
      typeof value === "number" || typeof value === "bigint" || typeof value === "boolean" ? value : text(value!)
    if (k === undefined || v === undefined) throw fail()
    return [k, v] as const
  })
}

/** Parses a `GRAPH.LIST` reply: the graph names. */
export const parseList = (reply: Reply): ReadonlyArray<string> => {
  if (!Array.isArray(reply)) throw malformed("GRAPH.LIST did not reply an array", undefined, "GRAPH.LIST")
  return (reply as ReadonlyArray<Reply>).map((item) => {
    const name = text(item)
    if (name === undefined) throw malformed("GRAPH.LIST replied a non-string name", undefined, "GRAPH.LIST")
    return name
  })
}
