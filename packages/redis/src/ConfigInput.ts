/**
 * What the `layerConfig` layers take: a record whose fields are each a `Config` or a plain
 * value (`metrics: true` next to `url: Config.String("REDIS_URL")`), nested records alike, or
 * one `Config` of the whole record.
 *
 * Reading it tells the values the configuration source set apart from those that came from a
 * `Config.withDefault`: a field whose `Config` looked keys up and found none of them took its
 * default. The layers treat such a value as a default, not as a choice: an option of another
 * strategy (`connections` with `strategy: "single"`) is dropped when it is a default and refused
 * only when it was set (by the source, or as a plain value or `Config.succeed`).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"

type IsPlainRecord<A> = [A] extends [Record<string, any>]
  ? [A] extends [ReadonlyArray<any> | ((...args: ReadonlyArray<any>) => any)]
    ? false
    : [keyof A] extends [never]
      ? false
      : [keyof A] extends [string]
        ? true
        : false
  : false

/**
 * One field of a `ConfigInput`: a plain value, a `Config` of it, or (for a plain record) a
 * record of such fields.
 *
 * @since 0.1.0
 * @category models
 */
export type Field<A> =
  | A
  | Config.Config<A>
  | ([IsPlainRecord<NonNullable<A>>] extends [true]
      ? { readonly [K in keyof NonNullable<A>]?: Field<NonNullable<A>[K]> }
      : never)

/**
 * A record of options whose fields are each a `Config` or a plain value, or one `Config` of
 * the whole record.
 *
 * @example
 * ```ts
 * import type * as ConfigInput from "@effect-falkordb/redis/ConfigInput"
 * import type * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
 * import { Config } from "effect"
 *
 * const input: ConfigInput.ConfigInput<RedisConnection.LayerOptions> = {
 *   url: Config.String("REDIS_URL"),
 *   connections: Config.Int("REDIS_CONNECTIONS").pipe(Config.withDefault(4)),
 *   routing: "spread",
 *   metrics: true
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ConfigInput<A> = Config.Config<A> | { readonly [K in keyof A]?: Field<A[K]> }

/**
 * A `ConfigInput` read: the values set (by the source, or given as plain values) and the
 * values of `Config`s that found no key and took their `Config.withDefault`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Read<A> {
  readonly options: Partial<A>
  readonly defaults: Partial<A>
}

const isPlainRecord = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A field's value; `Config`s inside plain records are read too. */
const readValue = (
  value: unknown,
  provider: ConfigProvider.ConfigProvider
): Effect.Effect<unknown, Config.ConfigError> => {
  if (Config.isConfig(value)) return value.parse(provider)
  if (!isPlainRecord(value)) return Effect.succeed(value)
  return Effect.map(
    Effect.forEach(Object.entries(value), ([key, inner]) =>
      Effect.map(readValue(inner, provider), (read) => [key, read] as const)
    ),
    (entries) => Object.fromEntries(entries)
  )
}

/**
 * A top-level field read through a provider that notes its look-ups: it took its default when
 * it looked keys up and found none (a `Config.succeed` or a plain value looks nothing up).
 */
const readField = Effect.fnUntraced(function* (value: unknown, provider: ConfigProvider.ConfigProvider) {
  let lookedUp = false
  let found = false
  const noting = ConfigProvider.make((path) =>
    Effect.map(provider.load(path), (node) => {
      lookedUp = true
      if (node !== undefined) found = true
      return node
    })
  )
  const read = yield* readValue(value, noting)
  return { read, defaulted: lookedUp && !found }
})

/**
 * Reads a `ConfigInput` with the current `ConfigProvider`, telling the values set from those
 * that came from a `Config.withDefault` (see the module's description). One `Config` of the
 * whole record counts as set.
 *
 * @example
 * ```ts
 * import * as ConfigInput from "@effect-falkordb/redis/ConfigInput"
 * import { Config, ConfigProvider, Effect } from "effect"
 *
 * const program = ConfigInput.read<{ size?: number; window?: number }>({
 *   size: Config.Int("SIZE").pipe(Config.withDefault(4)),
 *   window: 128
 * }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({})))
 * // Effect.runSync(program) => { options: { window: 128 }, defaults: { size: 4 } }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = <A>(input: ConfigInput<A>): Effect.Effect<Read<A>, Config.ConfigError> =>
  Effect.gen(function* () {
    const provider = yield* ConfigProvider.ConfigProvider
    if (Config.isConfig(input)) return { options: yield* input.parse(provider), defaults: {} }
    const options: Record<string, unknown> = {}
    const defaults: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(input)) {
      const { read, defaulted } = yield* readField(value, provider)
      if (defaulted) defaults[key] = read
      else options[key] = read
    }
    return { options: options as Partial<A>, defaults: defaults as Partial<A> }
  })
