#!/usr/bin/env node
/**
 * The `effect-falkordb` binary: the command line of `Cli` on this process's arguments; the
 * exit code says how it went (0 ok, 1 query or data error, 2 usage).
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.ts"

Effect.runPromise(Cli.run(process.argv.slice(2)).pipe(Effect.provide(NodeServices.layer))).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(`error: ${String(error)}`)
    process.exitCode = 1
  }
)
