// The graph README's Configuration example (scratchpad/config.ts), run as written against the
// run's real FalkorDB with each strategy chosen from the configuration: every other field takes
// its Config default, including `connections`, which applies to the multiplexed client only.
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as Example from "../config.ts"

const url = process.env.FALKORDB_URL

describe.runIf(url !== undefined)("the README's Config example", () => {
  for (const [strategy, connections] of [
    ["single", 1],
    ["pooled", 8],
    ["multiplexed", 8]
  ] as const) {
    it.live(`runs with FALKORDB_STRATEGY=${strategy}`, () =>
      Effect.gen(function* () {
        // The example reads a "movies" graph; make sure there is one.
        yield* FalkorDB.use((db) => db.graph("movies").query("MERGE (:Movie {title: 'Config'})")).pipe(
          Effect.provide(Example.Live)
        )
        const { result, info } = yield* Effect.all({
          result: Example.program,
          info: RedisConnection.use((redis) => Effect.succeed(redis.info)).pipe(Effect.provide(Example.Live))
        })
        assert.deepInclude(info, { strategy, connections })
        assert.deepStrictEqual(result.columns, ["movies"])
      }).pipe(
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromUnknown({ FALKORDB_URL: url, FALKORDB_STRATEGY: strategy })
        )
      )
    )
  }
})
