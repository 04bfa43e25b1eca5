// The API reference as a browsable static site: renders the markdown that docgen wrote to
// `packages/<name>/docs/modules/*.md` into `docs-site/` (git-ignored): an index of the packages and
// their modules, and one HTML page per module with its table of contents linked to the exports.
// Run by scripts/docs.mjs after docgen; open docs-site/index.html. Self-contained: no script, one
// stylesheet inline, relative links only, so it can be served from any folder.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
// marked lives in docgen's own npm project (scripts/docgen), installed by scripts/docs.mjs.
const require = createRequire(path.join(root, "scripts", "docgen", "package.json"))
const { Marked } = require("marked")
const { gfmHeadingId } = require("marked-gfm-heading-id")

export const out = path.join(root, "docs-site")

const escapeHtml = (text) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

const style = `body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1b1b1b}
nav{width:17rem;min-height:100vh;padding:1rem;background:#f4f4f6;box-sizing:border-box;flex:none}
nav h2{font-size:.95rem;margin:1rem 0 .25rem}nav ul{list-style:none;margin:0;padding:0}
nav a{display:block;padding:.1rem .4rem;border-radius:4px;color:#333;text-decoration:none;font-size:.9rem}
nav a.current{background:#dcdcf4}main{padding:1rem 2rem;max-width:60rem;min-width:0}
pre{background:#f6f8fa;padding:.75rem;overflow:auto;border-radius:6px}code{font-size:.9em}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem}`

/** The front matter docgen puts on each page (`title: Graph.ts`) and the markdown after it. */
const split = (text) => {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text)
  if (!match) return { meta: {}, body: text }
  const meta = Object.fromEntries(
    match[1]
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf(":")).trim(), line.slice(line.indexOf(":") + 1).trim()])
  )
  return { meta, body: text.slice(match[0].length) }
}

const pageName = (pkg, module) => `${pkg}/${module.replace(/\.ts$/, "")}.html`

/** Every package's modules, in the order docgen numbered them. */
export const collect = (packages) =>
  packages.map((pkg) => {
    const dir = path.join(root, "packages", pkg, "docs", "modules")
    const modules = fs
      .readdirSync(dir)
      .filter((file) => file.endsWith(".ts.md"))
      .map((file) => {
        const { meta, body } = split(fs.readFileSync(path.join(dir, file), "utf8"))
        return { file, title: meta.title ?? file.replace(/\.md$/, ""), order: Number(meta.nav_order ?? 0), body }
      })
      .sort((a, b) => a.order - b.order || a.title.localeCompare(b.title))
    return { pkg, modules }
  })

const layout = (title, nav, content, depth) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${style}</style></head>
<body><nav><a href="${"../".repeat(depth)}index.html"><strong>effect-falkordb</strong></a>${nav}</nav>
<main>${content}</main></body></html>
`

export const build = (packages) => {
  const site = collect(packages)
  fs.rmSync(out, { recursive: true, force: true })
  const navFor = (current, depth) =>
    site
      .map(
        ({ pkg, modules }) =>
          `<h2>@effect-falkordb/${pkg}</h2><ul>${modules
            .map((m) => {
              const href = `${"../".repeat(depth)}${pageName(pkg, m.title)}`
              const cls = current === `${pkg}/${m.title}` ? ' class="current"' : ""
              return `<li><a${cls} href="${href}">${escapeHtml(m.title.replace(/\.ts$/, ""))}</a></li>`
            })
            .join("")}</ul>`
      )
      .join("")
  for (const { pkg, modules } of site) {
    fs.mkdirSync(path.join(out, pkg), { recursive: true })
    for (const module of modules) {
      // JSDoc prose may hold angle brackets (`<query>`) that are text, not markup: escape raw HTML.
      const marked = new Marked().use(gfmHeadingId(), { renderer: { html: ({ text }) => escapeHtml(text) } })
      // Source links point into the package's sources, which the site does not carry.
      const body = module.body.replace(/\[([^\]]*)\]\(\.\.\/\.\.\/src\/[^)]*\)/g, "$1")
      const html = marked.parse(body)
      const title = `@effect-falkordb/${pkg}/${module.title.replace(/\.ts$/, "")}`
      fs.writeFileSync(
        path.join(out, pageName(pkg, module.title)),
        layout(title, navFor(`${pkg}/${module.title}`, 1), `<h1>${escapeHtml(title)}</h1>${html}`, 1)
      )
    }
  }
  const index = site
    .map(({ pkg, modules }) => {
      const readme = path.join(root, "packages", pkg, "package.json")
      const description = JSON.parse(fs.readFileSync(readme, "utf8")).description ?? ""
      return `<h2>@effect-falkordb/${pkg}</h2><p>${escapeHtml(description)}</p><ul>${modules
        .map((m) => `<li><a href="${pageName(pkg, m.title)}">${escapeHtml(m.title.replace(/\.ts$/, ""))}</a></li>`)
        .join("")}</ul>`
    })
    .join("")
  fs.writeFileSync(
    path.join(out, "index.html"),
    layout("effect-falkordb API reference", navFor("", 0), `<h1>effect-falkordb API reference</h1>${index}`, 0)
  )
  return site
}
