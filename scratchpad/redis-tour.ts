// The redis README's "In one screen" program, verbatim (type-checked by `pnpm check`).
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as ReplySchema from "@effect-falkordb/redis/ReplySchema"
import { Config, Console, Effect } from "effect"

const Live = RedisConnection.layerConfig({
  url: Config.String("REDIS_URL").pipe(Config.withDefault("redis://127.0.0.1:6379")),
  strategy: Config.Literals(["single", "pooled", "multiplexed"], "REDIS_STRATEGY").pipe(
    Config.withDefault("multiplexed")
  ),
  // Multiplexed only: as Config defaults they are dropped for single and pooled (set in the environment, refused).
  connections: Config.Int("REDIS_CONNECTIONS").pipe(Config.withDefault(4)),
  routing: Config.Literals(["spread", "key"], "REDIS_ROUTING").pipe(Config.withDefault("key"))
})

const program = Effect.gen(function* () {
  const redis = yield* RedisConnection.RedisConnection
  const visits = yield* redis.executeAs(ReplySchema.Integer, ["INCR", "visits"]) // number
  const user = yield* redis.executeAs(ReplySchema.Hash, ["HGETALL", "user:1"]) // Record<string, string>
  yield* Console.log(visits, user)
}).pipe(
  // One error type, RedisError; its reason says what happened and whether the command may have run.
  Effect.catchReason("RedisError", "Reply", (reason) => Console.error(`${reason.code}: ${reason.serverMessage}`))
)

Effect.runPromise(program.pipe(Effect.provide(Live)))
