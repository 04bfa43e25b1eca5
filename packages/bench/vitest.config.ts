import { defineProject } from "vitest/config"
import { plainRedisServers, sourceResolution } from "../../vitest.shared.ts"

export default defineProject({
  ...sourceResolution,
  test: {
    ...plainRedisServers,
    name: "bench",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
