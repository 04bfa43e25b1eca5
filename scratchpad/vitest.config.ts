import { defineProject } from "vitest/config"

export default defineProject({ test: { name: "scratchpad", include: ["test/**/*.test.ts"], testTimeout: 60_000 } })
