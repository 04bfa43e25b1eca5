// vitest 5 ignores workspace files: this file is the root config, passed with --config, listing the projects.
import { defineConfig } from "vitest/config"
import { sourceResolution } from "./vitest.shared.ts"

export default defineConfig({
  ...sourceResolution,
  test: {
    projects: ["packages/*", "scratchpad"],
    // One real FalkorDB for the whole run (FALKORDB_URL for the workers), unless one is given.
    globalSetup: ["scripts/falkordb-global-setup.ts"]
  }
})
