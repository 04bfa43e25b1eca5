import { defineProject } from "vitest/config"
import { sourceResolution } from "../../vitest.shared.ts"

export default defineProject({
  ...sourceResolution,
  test: { name: "embedded", include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 }
})
