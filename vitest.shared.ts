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
