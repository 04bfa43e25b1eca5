// vitest 5 ignores workspace files: this file is the root config, passed with --config, listing the projects.
import { defineConfig } from "vitest/config"
import { serverMatrix } from "./vitest.matrix.ts"
import { sourceResolution } from "./vitest.shared.ts"

export default defineConfig({
  ...sourceResolution,
  test: {
    // The packages, the examples, and the server matrix (suites again on Redis 8.2 and Valkey 9.1: vitest.matrix.ts).
    projects: ["packages/*", "scratchpad", ...serverMatrix()],
    // One real FalkorDB for the whole run (FALKORDB_URL for the workers), unless one is given.
    globalSetup: ["scripts/falkordb-global-setup.ts"]
  }
})
