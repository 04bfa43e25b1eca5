// The API reference: @effect/docgen over every published package. It reads the JSDoc of each public
// module (`src/**`, not `src/internal/**`), fails on an export without `@since`, type-checks every
// `@example` block with the workspace's TypeScript 7 (`tsc` from node_modules/.bin, examples resolve
// the packages' sources through the `@effect-falkordb/source` condition), and writes markdown to
// `packages/<name>/docs/modules/` (git-ignored), then the same as a static site in `docs-site/`
// (scripts/docs-site.mjs; checked in CI by scripts/docs-site-check.mjs in headless Chromium).
//
// docgen lives in its own npm project (scripts/docgen, installed here with `npm ci` on first use or
// when its lockfile changed): its release candidate needs the effect release candidate it was built
// with, which must not meet the workspace's effect.
//
// Run: npx -y pnpm@12.4.2 docgen
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const tool = path.join(root, "scripts", "docgen")
const packages = ["resp", "redis", "graph", "testing", "embedded", "cli"]

const run = (file, args, cwd, env = process.env) => {
  const result = spawnSync(file, args, { cwd, stdio: "inherit", env })
  if (result.status !== 0) {
    console.error(`::: docs: ${path.basename(file)} ${args.join(" ")} failed in ${path.relative(root, cwd) || "."}`)
    process.exit(1)
  }
}

// npm ci when node_modules is missing or older than the lockfile.
const lock = path.join(tool, "package-lock.json")
const installed = path.join(tool, "node_modules", ".package-lock.json")
if (!fs.existsSync(installed) || fs.statSync(installed).mtimeMs < fs.statSync(lock).mtimeMs) {
  console.log("::: docs: installing @effect/docgen (scripts/docgen, npm ci)")
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error", "--legacy-peer-deps"], tool)
}

const docgen = path.join(tool, "node_modules", "@effect", "docgen", "dist", "bin.js")
// docgen type-checks the examples with the `tsc` it finds on the PATH: make it the workspace's.
const env = { ...process.env, PATH: `${path.join(root, "node_modules", ".bin")}${path.delimiter}${process.env.PATH}` }
for (const name of packages) {
  const dir = path.join(root, "packages", name)
  console.log(`::: docs: ${name}`)
  run(
    process.execPath,
    [
      docgen,
      "--srcLink",
      "../../src/",
      "--exclude",
      "src/internal/**/*.ts",
      "--parse-tsconfig-file",
      path.join(root, "tsconfig.base.json"),
      "--examples-tsconfig-file",
      path.join(tool, "tsconfig.examples.json")
    ],
    dir,
    env
  )
  // The examples docgen wrote to type-check them are not part of the reference.
  fs.rmSync(path.join(dir, "docs", "examples"), { recursive: true, force: true })
}
console.log(`::: docs: written to ${packages.map((name) => `packages/${name}/docs/modules/`).join(", ")}`)
// The same reference as browsable pages: docs-site/index.html.
const { build, out } = await import("./docs-site.mjs")
const site = build(packages)
console.log(
  `::: docs: site with ${site.reduce((n, { modules }) => n + modules.length, 0)} module pages in ${path.relative(root, out)}/ (open index.html)`
)
