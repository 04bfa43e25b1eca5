// Keeps ARCHITECTURE.md honest: every file path it names exists, and every "ARCHITECTURE.md §N"
// a source comment points at is a section of it. Move a file and its place in the map together.
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..", "..")
const architecture = Fs.readFileSync(Path.join(root, "ARCHITECTURE.md"), "utf8")

/** The backticked spans of `text` that name a file or folder of the repository. */
const namedPaths = (text: string): Array<string> =>
  Array.from(text.matchAll(/`([^`\s]+)`/g), (match) => match[1]!).filter(
    (span) => /^(packages|scripts|scratchpad)\//.test(span) || /^[\w.-]+\.(ts|mjs|md|json)$/.test(span)
  )

/** The sources of every package, the scratchpad and the scripts (no dependencies, no build output). */
const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) return []
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : []
  })

describe("ARCHITECTURE.md", () => {
  it("names only paths that exist", () => {
    const paths = namedPaths(architecture)
    // The map is made of paths: an empty list means the pattern above stopped finding them.
    assert.isAbove(paths.length, 40)
    const missing = paths.filter((path) => !Fs.existsSync(Path.join(root, path)))
    assert.deepStrictEqual(missing, [], "paths named in ARCHITECTURE.md that do not exist")
  })

  it("has every section a source comment points at", () => {
    const sections = new Set(Array.from(architecture.matchAll(/^## (\d+)\./gm), (match) => match[1]!))
    const dangling: Array<string> = []
    for (const file of ["packages", "scratchpad", "scripts"].flatMap((dir) => sourceFiles(Path.join(root, dir)))) {
      for (const match of Fs.readFileSync(file, "utf8").matchAll(/ARCHITECTURE(?:\.md)? §(\d+)/g)) {
        if (!sections.has(match[1]!)) dangling.push(`${Path.relative(root, file)}: ${match[0]}`)
      }
    }
    assert.deepStrictEqual(dangling, [], "references to sections ARCHITECTURE.md does not have")
  })
})
