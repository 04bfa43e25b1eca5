/**
 * The real FalkorDB the real-server tables run on: a server started with the module `Embedded`
 * finds (or `module`), or the sentence saying why there is none, for a table to print as skipped.
 *
 * @since 0.1.0
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as Effect from "effect/Effect"

/**
 * `{ server }`, or `{ skipped }` when no module is found; other start failures fail.
 *
 * @since 0.1.0
 * @category servers
 */
export const start = (module?: string) =>
  Embedded.make({ requireModule: true, ...(module === undefined ? {} : { module }) }).pipe(
    Effect.map((server) => ({ server })),
    Effect.catchReason("EmbeddedError", "ModuleNotFound", (reason) =>
      Effect.succeed({ skipped: `${reason.message} (${reason.hint})` })
    )
  )
