import { defineProject } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.ts"

export default defineProject({
  ...sourceResolution,
  test: { name: "cli", include: ["test/**/*.test.ts"], testTimeout: 120_000, hookTimeout: 120_000 }
})
