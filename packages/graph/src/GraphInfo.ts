/**
 * `GRAPH.INFO [section …]`: the server's running and waiting queries and its object pool,
 * typed. Sections are `RunningQueries`, `WaitingQueries` and `ObjectPool` (FalkorDB ≥ 4.16;
 * case-insensitive on the server); an unknown one fails with `InvalidArgument` carrying the
 * server's `no section found`.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphInfo from "@effect-falkordb/graph/GraphInfo"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const info = yield* GraphInfo.info(db.connection, ["RunningQueries"])
 *   return info.runningQueries?.length
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { MapReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import { FalkorError, fromRedis, InvalidArgument } from "./FalkorError.ts"
import { malformed } from "./internal/errors.ts"
import * as QueryText from "./internal/QueryText.ts"
import { text } from "./internal/Text.ts"

/**
 * A section of `GRAPH.INFO`.
 *
 * @since 0.1.0
 * @category models
 */
export type Section = "RunningQueries" | "WaitingQueries" | "ObjectPool"

/**
 * A plain value of an info entry: strings, numbers, lists and records.
 *
 * @since 0.1.0
 * @category models
 */
export type InfoValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | ReadonlyArray<InfoValue>
  | { readonly [key: string]: InfoValue }

/**
 * The object pool's figures.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectPool {
  readonly uniqueObjects: number
  readonly averageReferences: number
}

/**
 * What `GRAPH.INFO` replied; a section that was not asked for (or that the server lacks) is
 * `undefined`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  /**
   * One entry per running query, as the server describes it, except that its `Query` text is a
   * fingerprint: parameter values and literals replaced by `?`.
   */
  readonly runningQueries: ReadonlyArray<InfoValue> | undefined
  readonly waitingQueries: ReadonlyArray<InfoValue> | undefined
  readonly objectPool: ObjectPool | undefined
  /** Sections this client does not know, by title, as sent. */
  readonly other: { readonly [title: string]: InfoValue }
}

const textOf = (reply: Reply | undefined): string | undefined => (reply === undefined ? undefined : text(reply))

/** A reply as plain data: lists of `[name, value]` pairs become records. */
const plain = (reply: Reply): InfoValue => {
  const text = textOf(reply)
  if (text !== undefined) return text
  if (typeof reply === "number" || typeof reply === "bigint" || typeof reply === "boolean" || reply === null) {
    return reply
  }
  if (reply instanceof MapReply) {
    const out: Record<string, InfoValue> = {}
    for (let i = 0; i + 1 < reply.flat.length; i += 2) out[String(plain(reply.flat[i]!))] = plain(reply.flat[i + 1]!)
    return out
  }
  if (Array.isArray(reply)) {
    const items = reply as ReadonlyArray<Reply>
    const pairs = items.every(
      (i) => Array.isArray(i) && i.length === 2 && textOf((i as ReadonlyArray<Reply>)[0]) !== undefined
    )
    if (pairs && items.length > 0) {
      const out: Record<string, InfoValue> = {}
      for (const pair of items as ReadonlyArray<ReadonlyArray<Reply>>) out[textOf(pair[0])!] = plain(pair[1]!)
      return out
    }
    return items.map(plain)
  }
  return String(reply)
}

/**
 * A running or waiting query's entry with its `Query` text as a fingerprint: the server sends
 * the text as received, with the `CYPHER name=value …` prefix, so parameter values (and
 * literals) are replaced by `?` before they reach the caller, a log or a dashboard.
 */
const withoutValues = (entry: InfoValue): InfoValue => {
  if (Array.isArray(entry)) {
    const at = entry.indexOf("Query")
    if (at === -1 || typeof entry[at + 1] !== "string") return entry
    const copy = [...entry]
    copy[at + 1] = QueryText.fingerprint(entry[at + 1] as string)
    return copy
  }
  if (typeof entry === "object" && entry !== null && typeof (entry as Record<string, InfoValue>).Query === "string") {
    const record = entry as Record<string, InfoValue>
    return { ...record, Query: QueryText.fingerprint(record.Query as string) }
  }
  return entry
}

const number = (value: InfoValue | undefined): number | undefined =>
  typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : undefined

/**
 * Parses a `GRAPH.INFO` reply: `[title, body, title, body, …]`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseInfo = (reply: Reply): Info => {
  const bad = (detail: string) => malformed(`GRAPH.INFO: ${detail}`, undefined, "GRAPH.INFO")
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw bad("not title/section pairs")
  let runningQueries: ReadonlyArray<InfoValue> | undefined
  let waitingQueries: ReadonlyArray<InfoValue> | undefined
  let objectPool: ObjectPool | undefined
  const other: Record<string, InfoValue> = {}
  for (let i = 0; i < reply.length; i += 2) {
    const title = textOf(reply[i])
    const body = reply[i + 1]!
    if (title === undefined) throw bad("a section title is not a string")
    if (title === "# Running queries" || title === "# Waiting queries") {
      if (!Array.isArray(body)) throw bad(`${title} is not a list`)
      const entries = (body as ReadonlyArray<Reply>).map((entry) => withoutValues(plain(entry)))
      if (title === "# Running queries") runningQueries = entries
      else waitingQueries = entries
    } else if (title === "Object Pool") {
      const figures = plain(body)
      const record = typeof figures === "object" && figures !== null && !Array.isArray(figures) ? figures : {}
      const f = record as { readonly [key: string]: InfoValue }
      const uniqueObjects = number(f["Unique Objects in Pool"])
      const averageReferences = number(f["Average References per Object"])
      if (uniqueObjects === undefined || averageReferences === undefined) throw bad("Object Pool lacks its figures")
      objectPool = { uniqueObjects, averageReferences }
    } else {
      other[title] = plain(body)
    }
  }
  return { runningQueries, waitingQueries, objectPool, other }
}

/**
 * `GRAPH.INFO` with the given sections (all when none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const info = (
  connection: RedisConnection["Service"],
  sections: ReadonlyArray<Section | (string & {})> = []
): Effect.Effect<Info, FalkorError> =>
  connection.execute(["GRAPH.INFO", ...sections], { readOnly: true }).pipe(
    Effect.mapError((error) => fromRedis(error, { command: "GRAPH.INFO" })),
    Effect.flatMap((reply) => {
      const text = textOf(reply)
      if (text !== undefined) {
        // An unknown section is answered with this bulk, not with an error reply.
        return Effect.fail(
          new FalkorError({
            reason: new InvalidArgument({
              command: "GRAPH.INFO",
              argument: "sections",
              detail: `${text}: ${sections.join(", ")} (known: RunningQueries, WaitingQueries, ObjectPool)`,
              serverMessage: text
            })
          })
        )
      }
      return Effect.try({ try: () => parseInfo(reply), catch: (e) => e as FalkorError })
    }),
    Effect.withSpan("GraphInfo.info", { attributes: { "db.system.name": "falkordb" } })
  )
