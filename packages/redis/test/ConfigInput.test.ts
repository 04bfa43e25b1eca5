import { assert, describe, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ConfigInput from "../src/ConfigInput.ts"

interface Shape {
  readonly url?: string | undefined
  readonly size?: number | undefined
  readonly window?: number | undefined
  readonly metrics?: boolean | undefined
  readonly timeout?: Duration.Input | undefined
  readonly reconnect?: { readonly baseDelay?: Duration.Input | undefined; readonly tries?: number | undefined }
}

const readWith = (env: Record<string, unknown>, input: ConfigInput.ConfigInput<Shape>) =>
  ConfigInput.read(input).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)))

describe("ConfigInput", () => {
  it.effect("a Config that found no key took its default; found values, plain values and constants are set", () =>
    Effect.gen(function* () {
      const input: ConfigInput.ConfigInput<Shape> = {
        url: Config.String("URL"),
        size: Config.Int("SIZE").pipe(Config.withDefault(4)),
        window: Config.succeed(16),
        metrics: true,
        timeout: Config.Duration("TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
        reconnect: { baseDelay: Config.Duration("BASE").pipe(Config.withDefault("1 second")), tries: 3 }
      }
      const unset = yield* readWith({ URL: "redis://h" }, input)
      assert.deepStrictEqual(unset.options, { url: "redis://h", window: 16, metrics: true })
      // A record of fields is one field: it looked a key up and found none, so it is a default.
      assert.deepStrictEqual(Object.keys(unset.defaults).sort(), ["reconnect", "size", "timeout"])
      assert.strictEqual(unset.defaults.size, 4)
      assert.strictEqual(unset.defaults.reconnect?.tries, 3)

      // The same key set in the source, even to the default's value, is a choice.
      const set = yield* readWith({ URL: "redis://h", SIZE: "4", TIMEOUT: "2 seconds", BASE: "1 second" }, input)
      assert.strictEqual(set.options.size, 4)
      assert.isTrue(Duration.equals(Duration.fromInputUnsafe(set.options.timeout!), Duration.seconds(2)))
      assert.isTrue(Duration.equals(Duration.fromInputUnsafe(set.options.reconnect!.baseDelay!), Duration.seconds(1)))
      assert.deepStrictEqual(set.defaults, {})
    })
  )

  it.effect("one Config of the whole record counts as set; a missing key without default fails", () =>
    Effect.gen(function* () {
      const whole = yield* readWith({}, Config.all({ size: Config.Int("SIZE").pipe(Config.withDefault(2)) }))
      assert.deepStrictEqual(whole, { options: { size: 2 }, defaults: {} })
      const missing = yield* Effect.flip(readWith({}, { url: Config.String("URL") }))
      assert.include(String(missing), "URL")
    })
  )
})
