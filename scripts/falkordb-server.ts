// Starts a real FalkorDB with @effect-falkordb/embedded and keeps it until stdin closes or a
// SIGTERM/SIGINT arrives: prints one JSON line (`{ url, server, falkordb }`, or `{ error }`) on
// stdout once it is up. The vitest global setup runs it as a child process (the test runner's
// own module loader does not see the workspace's TypeScript sources); it is also a handy way
// to get a throw-away FalkorDB by hand:
//   ./node_modules/.bin/node --conditions=@effect-falkordb/source scripts/falkordb-server.ts
import { Embedded } from "@effect-falkordb/embedded"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"

const scope = Effect.runSync(Scope.make())
const started = await Effect.runPromiseExit(
  Embedded.make({ requireModule: true, startTimeout: "30 seconds" }).pipe(Scope.provide(scope))
)
if (Exit.isFailure(started)) {
  process.stdout.write(`${JSON.stringify({ error: Cause.pretty(started.cause) })}\n`)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  process.exit(1)
}
const { url, server, falkordb } = started.value
process.stdout.write(`${JSON.stringify({ url, server, falkordb })}\n`)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  void Effect.runPromise(Scope.close(scope, Exit.void)).then(() => process.exit(0))
}
process.stdin.on("end", stop)
process.stdin.on("error", stop)
process.stdin.resume()
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
