import { defineProject } from "vitest/config"
import { sourceResolution } from "../vitest.shared.ts"

export default defineProject({
  ...sourceResolution,
  test: { name: "scratchpad", include: ["test/**/*.test.ts"], testTimeout: 60_000 }
})
