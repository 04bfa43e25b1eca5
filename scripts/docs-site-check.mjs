// Checks the built API site (docs-site/, from `pnpm docgen`) the way a reader meets it: headless
// Chromium opens index.html, and every module docgen documented must be linked from it and open
// to a page whose heading names the module and whose table of contents links to its exports.
// Installs Debian's chromium when missing (as root with apt-get; says so); elsewhere it needs
// CHROMIUM=/path/to/chromium. Run: node scripts/docs-site-check.mjs
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { collect, out } from "./docs-site.mjs"

const packages = fs
  .readdirSync(out, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
if (packages.length === 0) {
  console.error("::: docs site: docs-site/ is empty; run npx -y pnpm@12.4.2 docgen first")
  process.exit(1)
}

const findChromium = () =>
  [process.env.CHROMIUM, "chromium", "chromium-browser", "google-chrome"].find(
    (name) => name && spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0
  )
let chromium = findChromium()
if (chromium === undefined) {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0
  if (!isRoot || spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status !== 0) {
    console.error("::: docs site: no Chromium; install one (apt-get install chromium) or set CHROMIUM")
    process.exit(1)
  }
  console.log("::: docs site: installing Debian's chromium (apt-get, as root) to open the pages")
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env })
  spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: ["ignore", "ignore", "inherit"], env })
  chromium = findChromium()
  if (chromium === undefined) {
    console.error("::: docs site: chromium did not install")
    process.exit(1)
  }
}

/** The DOM Chromium builds for a page. */
const dom = (file) => {
  const result = spawnSync(
    chromium,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--allow-file-access-from-files",
      "--dump-dom",
      pathToFileURL(file).href
    ],
    { encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }
  )
  if (result.status !== 0) throw new Error(`chromium could not open ${file}: ${result.stderr}`)
  return result.stdout
}

const problems = []
const index = dom(path.join(out, "index.html"))
const linked = new Set([...index.matchAll(/<a href="([^"]+\.html)"/g)].map((m) => m[1]))
let pages = 0
for (const { pkg, modules } of collect(packages)) {
  for (const module of modules) {
    const name = module.title.replace(/\.ts$/, "")
    const href = `${pkg}/${name}.html`
    if (!linked.has(href)) problems.push(`index.html does not link ${href}`)
    const page = dom(path.join(out, href))
    pages++
    if (!page.includes(`<h1>@effect-falkordb/${pkg}/${name}</h1>`))
      problems.push(`${href}: no heading naming the module`)
    // docgen's table of contents links each export to its heading: every link must land.
    const anchors = new Set([...page.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]))
    for (const [, target] of page.matchAll(/<a href="#([^"]+)"/g)) {
      if (!anchors.has(target)) problems.push(`${href}: the link #${target} leads nowhere`)
    }
  }
}
if (problems.length > 0) {
  console.error(`::: docs site: ${problems.length} problem(s):\n${problems.join("\n")}`)
  process.exit(1)
}
console.log(
  `::: docs site: ${pages} module pages open in ${chromium} from index.html, every table of contents resolves`
)
