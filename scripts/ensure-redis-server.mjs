// Makes sure `redis-server` (with `redis-cli`, which Debian's package brings) and `openssl` (the
// security suites make their certificates with it) are on the PATH before the tests, the demo or
// the benchmarks start their own servers on loopback. They are what npm cannot bring: on a
// Debian/Ubuntu machine run as root it installs Debian's packages (saying so); anywhere else it
// stops with the command to run. Set EFFECT_FALKORDB_NO_INSTALL=1 to never install.
import { spawnSync } from "node:child_process"

const version = () => spawnSync("redis-server", ["--version"], { encoding: "utf8" })
const runs = (command, args) => spawnSync(command, args, { stdio: "ignore" }).status === 0
const missing = [
  ...(version().status === 0 && runs("redis-cli", ["--version"]) ? [] : ["redis-server"]),
  ...(runs("openssl", ["version"]) ? [] : ["openssl"])
]

if (missing.length === 0) process.exit(0)

const isRoot = typeof process.getuid === "function" && process.getuid() === 0
const hasApt = spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0
if (!isRoot || !hasApt || process.env.EFFECT_FALKORDB_NO_INSTALL === "1") {
  console.error(
    [
      `${missing.join(" and ")} not on the PATH.`,
      "The tests and the demo start their own redis-server on loopback (and make certificates with openssl); install it first, e.g.",
      `  Debian/Ubuntu: sudo apt-get install -y ${missing.join(" ")}`,
      "  macOS:         brew install redis openssl",
      isRoot && hasApt ? "(not installed automatically because EFFECT_FALKORDB_NO_INSTALL=1)" : ""
    ]
      .filter((line) => line !== "")
      .join("\n")
  )
  process.exit(1)
}

console.log(`::: ${missing.join(" and ")} not on the PATH: installing Debian's packages (apt-get, as root)`)
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
// Another apt-get or dpkg (often the system's unattended upgrades on a fresh machine) may hold the
// package manager's locks: wait for it, bounded, instead of failing. apt waits for the dpkg lock
// itself with DPkg::Lock::Timeout; the lists lock of `apt-get update` is retried here.
const lockWaitSeconds = Number(process.env.EFFECT_FALKORDB_APT_LOCK_WAIT ?? 600)
const lockBusy = /Could not get lock|Unable to lock|Unable to acquire the dpkg frontend lock|is held by process/i
const sleep = (seconds) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000)
for (const args of [
  ["update", "-qq"],
  ["install", "-y", "-qq", ...missing]
]) {
  const started = Date.now()
  for (;;) {
    const step = spawnSync("apt-get", ["-o", `DPkg::Lock::Timeout=${lockWaitSeconds}`, ...args], {
      stdio: ["ignore", "inherit", "pipe"],
      encoding: "utf8",
      env
    })
    const waited = (Date.now() - started) / 1000
    if (step.status === 0) {
      process.stderr.write(step.stderr)
      break
    }
    if (lockBusy.test(step.stderr) && waited < lockWaitSeconds) {
      console.log(
        `::: another apt-get/dpkg holds the package manager's lock; waiting for it (${waited.toFixed(0)} s of at most ${lockWaitSeconds} s)`
      )
      sleep(5)
      continue
    }
    process.stderr.write(step.stderr)
    console.error(
      lockBusy.test(step.stderr)
        ? `apt-get ${args.join(" ")}: the package manager stayed locked for ${lockWaitSeconds} s (EFFECT_FALKORDB_APT_LOCK_WAIT); finish the other install or install redis-server by hand and try again`
        : `apt-get ${args.join(" ")} failed (exit ${step.status}); install redis-server by hand and try again`
    )
    process.exit(1)
  }
}
// Debian's package may start a service on 6379; this project starts its own servers and needs none.
spawnSync("service", ["redis-server", "stop"], { stdio: "ignore" })
const installed = version()
if (installed.status !== 0) {
  console.error("redis-server was installed but does not run; install it by hand and try again")
  process.exit(1)
}
console.log(`::: ${installed.stdout.trim()}`)
