/**
 * Bytes allocated per error construction (V8's sampling heap profiler, collected objects
 * included): this package's `RedisError` with a `Timeout` reason (`Data.TaggedError` classes,
 * the hint on the stack when it is first read) against the same reason and wrapper written as
 * `Schema.TaggedError` classes (like `effect/sql/SqlError`), which validate their fields when
 * constructed. Errors are made only when a call fails, so this is the cost of the error path;
 * a successful command constructs none.
 *
 * ```sh
 * ./node_modules/.bin/node --conditions=@effect-falkordb/source packages/bench/src/error-alloc.ts data
 * ./node_modules/.bin/node --conditions=@effect-falkordb/source packages/bench/src/error-alloc.ts schema
 * ```
 *
 * @since 0.1.0
 */
import { RedisError, Timeout } from "@effect-falkordb/redis/RedisError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Inspect from "./inspect.ts"

const ReasonTypeId = "~bench/SchemaReason" as const

class SchemaTimeout extends Schema.TaggedError<SchemaTimeout>("bench/SchemaTimeout")("Timeout", {
  written: Schema.Boolean,
  timeout: Schema.Number,
  message: Schema.String
}) {
  readonly [ReasonTypeId] = ReasonTypeId
  get isRetryable(): boolean {
    return !this.written
  }
  get hint(): string {
    return "raise the timeout"
  }
}

class SchemaRedisError extends Schema.TaggedError<SchemaRedisError>("bench/SchemaRedisError")("RedisError", {
  reason: Schema.Union([SchemaTimeout])
}) {
  override get message(): string {
    return this.reason.message
  }
}

const makers: Record<string, (i: number) => Error> = {
  data: (i) => new RedisError({ reason: new Timeout({ written: false, timeout: i, message: "t" }) }),
  schema: (i) => new SchemaRedisError({ reason: new SchemaTimeout({ written: false, timeout: i, message: "t" }) })
}

const mode = process.argv[2] ?? "data"
const make = makers[mode]
if (make === undefined) throw new Error(`mode must be data or schema (got ${mode})`)
const count = 200_000
// Kept alive a while, so the construction is not optimised away.
const sink: Array<Error | undefined> = new Array(1024)
const construct = (n: number) => {
  for (let i = 0; i < n; i++) sink[i & 1023] = make(i)
  return n
}
construct(20_000) // warm-up
Effect.runPromise(
  Inspect.allocations(
    Effect.sync(() => construct(count)),
    (n) => n,
    { unit: `${mode} error`, top: 5 }
  )
)
