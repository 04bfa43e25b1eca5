// vitest 5 ignores workspace files: this file is the root config, passed with --config, listing the projects.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "scratchpad"]
  }
})
