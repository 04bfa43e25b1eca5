/**
 * Catching engine errors by reason: the examples of the redis README's "Errors" section,
 * here so that CI type-checks them (`pnpm check` covers every scratchpad file).
 */
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"

// README: catchReason
/** Counts a visit; a timeout says whether the INCR may still have counted. */
export const countVisit = Effect.gen(function* () {
  const redis = yield* RedisConnection.RedisConnection
  const visits = yield* redis.execute(["INCR", "visits"], { timeout: "1 second" })
  return `visit ${String(visits)}`
}).pipe(
  Effect.catchReason("RedisError", "Timeout", (reason) =>
    Effect.succeed(reason.written ? "sent; it may have counted" : "never sent; safe to retry")
  )
)

// README: catchReasons
/** Reads a key, treating an outage as a miss and a wrong type as a defect. */
export const readGreeting = Effect.gen(function* () {
  const redis = yield* RedisConnection.RedisConnection
  return yield* redis.execute(["GET", "greeting"])
}).pipe(
  Effect.catchReasons("RedisError", {
    Offline: () => Effect.succeed(null),
    Reply: (reason) => Effect.die(`${reason.command} was refused: ${reason.code ?? "ERR"} ${reason.serverMessage}`)
  })
)
