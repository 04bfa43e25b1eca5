/**
 * Reactive graph queries on `effect/reactivity`'s `Reactivity`, the way `SqlClient.reactive`
 * uses it: a write run through {@link mutation} invalidates keys, and a {@link reactive} query
 * is a `Stream` that runs once, then runs again and emits each time one of its keys is
 * invalidated.
 *
 * Keys are an array (`["people"]`, `["person:1"]`) or a record of ids (`{ people: [1] }`,
 * which stands for both `people` and `people:1`, so it reaches every query on `people`; for
 * queries on one id alone, use array keys such as `person:1`).
 *
 * Two layers provide the `Reactivity` service:
 * - {@link layer}: in this process (effect's own `Reactivity.layer`). Works with `FalkorDBMock`.
 * - {@link layerPubSub}: across processes. Invalidations are also published on a Redis Pub/Sub
 *   channel (default {@link defaultChannel}), and those published by other instances are applied
 *   here, so two instances of an app see each other's writes. Redis Pub/Sub is at-most-once: an
 *   invalidation published while an instance is disconnected is lost to it. Keys cross as the
 *   hashes `Reactivity` computes: strings, numbers, bigints and booleans, and plain objects or
 *   arrays (hashed by structure), cross intact; class instances without their own `Hash` are
 *   hashed by identity and cannot match anything in another process.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   // Emits the count now, and again after every mutation of "people".
 *   const counts = GraphReactivity.reactive(
 *     ["people"],
 *     Effect.map(graph.roQuery("MATCH (p:Person) RETURN count(p) AS n"), (r) => r.rows[0]?.get("n"))
 *   )
 *   yield* Effect.forkScoped(Stream.runForEach(counts, (n) => Effect.log(`people: ${n}`)))
 *   yield* GraphReactivity.mutation(["people"], graph.query("CREATE (:Person {name: 'Ada'})"))
 * }).pipe(Effect.scoped, Effect.provide(GraphReactivity.layer))
 * ```
 *
 * @since 0.1.0
 */
import type { RedisError } from "@effect-falkordb/redis/RedisError"
import { RedisPubSub } from "@effect-falkordb/redis/RedisPubSub"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Hash from "effect/Hash"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Reactivity from "effect/reactivity/Reactivity"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * The in-process `Reactivity` layer (effect's `Reactivity.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Reactivity.Reactivity> = Reactivity.layer

/**
 * `f(effect, keys)` as `(keys, effect)` and, pipeable, `(keys)(effect)`: keys first, like
 * `SqlClient.reactive`, where `Reactivity`'s own functions take the effect first.
 */
const keysFirst =
  <F extends (effect: Effect.Effect<any, any, any>, keys: Reactivity.KeysInput) => unknown>(f: F) =>
  (keys: Reactivity.KeysInput, ...effect: [] | [Effect.Effect<any, any, any>]): any =>
    effect.length === 0 ? (self: Effect.Effect<any, any, any>) => f(self, keys) : f(effect[0], keys)

/**
 * Runs `effect` and, when it succeeds, invalidates `keys` (re-running the reactive queries on
 * them). A failed mutation invalidates nothing.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
 * import { Effect } from "effect"
 *
 * const addPerson = (id: number, name: string) =>
 *   FalkorDB.FalkorDB.use((db) =>
 *     db.graph("social").query("CREATE (:Person {id: $id, name: $name})", { id, name })
 *   ).pipe(GraphReactivity.mutation({ people: [id] }))
 * ```
 *
 * @since 0.1.0
 * @category reactivity
 */
export const mutation: {
  (
    keys: Reactivity.KeysInput
  ): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | Reactivity.Reactivity>
  <A, E, R>(keys: Reactivity.KeysInput, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Reactivity.Reactivity>
} = keysFirst(Reactivity.mutation)

/**
 * A query that runs now and again each time one of `keys` is invalidated, as a `Stream` of its
 * results (like `SqlClient.reactive`). Invalidations that arrive while it runs are coalesced
 * into one more run. The stream fails when the query fails.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
 * import { Effect } from "effect"
 *
 * const person = (id: number) =>
 *   FalkorDB.FalkorDB.use((db) =>
 *     db.graph("social").roQuery("MATCH (p:Person {id: $id}) RETURN p.name AS name", { id })
 *   ).pipe(GraphReactivity.reactive({ people: [id] }))
 * ```
 *
 * @since 0.1.0
 * @category reactivity
 */
export const reactive: {
  (
    keys: Reactivity.KeysInput
  ): <A, E, R>(effect: Effect.Effect<A, E, R>) => Stream.Stream<A, E, Exclude<R, Scope.Scope> | Reactivity.Reactivity>
  <A, E, R>(
    keys: Reactivity.KeysInput,
    effect: Effect.Effect<A, E, R>
  ): Stream.Stream<A, E, Exclude<R, Scope.Scope> | Reactivity.Reactivity>
} = keysFirst(Reactivity.stream)

/**
 * The channel {@link layerPubSub} uses unless told otherwise.
 *
 * @since 0.1.0
 * @category pubsub
 */
export const defaultChannel = "effect-falkordb:reactivity"

/**
 * Options of {@link layerPubSub}.
 *
 * @since 0.1.0
 * @category pubsub
 */
export interface PubSubOptions {
  /** The Pub/Sub channel shared by the instances. Default {@link defaultChannel}. */
  readonly channel?: string | undefined
  /**
   * Invalidations from other instances buffered while this one applies earlier ones. Default
   * 1024; past that the oldest are dropped (`RedisPubSub`'s `dropped` counts them), and the
   * queries they would have re-run stay as they are until their next invalidation.
   */
  readonly bufferSize?: number | undefined
}

type Keys = ReadonlyArray<unknown> | { readonly [key: string]: ReadonlyArray<unknown> }

/** The key `Reactivity` files a value under: its text for primitives, else its `Hash`. */
const hashOf = (u: unknown): string | number => {
  switch (typeof u) {
    case "string":
    case "number":
    case "bigint":
    case "boolean":
      return String(u)
    default:
      return Hash.hash(u)
  }
}

/** The handler keys `Reactivity` registers and invalidates for `keys` (its own rule, mirrored). */
const hashesOf = (keys: Keys): Array<string | number> => {
  if (Array.isArray(keys)) return keys.map(hashOf)
  const out: Array<string | number> = []
  for (const [name, ids] of Object.entries(keys as { readonly [key: string]: ReadonlyArray<unknown> })) {
    out.push(name)
    for (const id of ids) out.push(`${name}:${hashOf(id)}`)
  }
  return out
}

/** A key that hashes to a given number: how a hashed object key from another process is replayed. */
class HashedKey implements Hash.Hash {
  readonly hash: number
  constructor(hash: number) {
    this.hash = hash
  }
  [Hash.symbol](): number {
    return this.hash
  }
}

interface Message {
  readonly origin: string
  readonly keys: ReadonlyArray<string | number>
}

const decodeMessage = (text: string): Message | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== "object" || parsed === null) return undefined
  const { origin, keys } = parsed as { origin?: unknown; keys?: unknown }
  if (typeof origin !== "string" || !Array.isArray(keys)) return undefined
  const valid = keys.every((k) => typeof k === "string" || (typeof k === "number" && Number.isInteger(k)))
  return valid ? { origin, keys } : undefined
}

class PendingPublish extends Context.Service<PendingPublish, Set<string | number>>()(
  "@effect-falkordb/graph/GraphReactivity/PendingPublish"
) {}

/**
 * Builds a `Reactivity` that also publishes its invalidations on `channel` and applies the ones
 * other instances publish there. The subscription is acknowledged before this returns, so an
 * invalidation published after that reaches it; it lasts for the scope.
 *
 * @since 0.1.0
 * @category pubsub
 */
export const makePubSub = Effect.fnUntraced(function* (options: PubSubOptions = {}) {
  const pubsub = yield* RedisPubSub
  const local = yield* Reactivity.make
  const channel = options.channel ?? defaultChannel
  // Messages of this instance come back on the channel: they are recognised and skipped.
  const origin = crypto.randomUUID()

  const received = yield* pubsub.subscribe(channel, { bufferSize: options.bufferSize })
  yield* Effect.forkScoped(
    Stream.runForEach(received, (message) => {
      const decoded = decodeMessage(message.message)
      if (decoded === undefined) {
        return Effect.logWarning(`GraphReactivity: ignored a message on ${channel} that is not an invalidation`)
      }
      if (decoded.origin !== origin) {
        local.invalidateUnsafe(decoded.keys.map((k) => (typeof k === "number" ? new HashedKey(k) : k)))
      }
      return Effect.void
    }).pipe(Effect.catch((error) => Effect.logWarning(`GraphReactivity: the subscription ended: ${error.message}`)))
  )

  const publish = (hashes: ReadonlyArray<string | number>): Effect.Effect<void> =>
    hashes.length === 0
      ? Effect.void
      : pubsub.publish(channel, JSON.stringify({ origin, keys: hashes })).pipe(
          Effect.asVoid,
          // An invalidation that cannot be published is lost to the other instances, as any
          // Pub/Sub message can be; the write it follows has succeeded, so it is not failed.
          Effect.catch((error: RedisError) =>
            Effect.logWarning(`GraphReactivity: could not publish an invalidation on ${channel}: ${error.message}`)
          )
        )

  // invalidateUnsafe is synchronous: its publications go out through a queue, in order.
  const outbox = yield* Queue.unbounded<ReadonlyArray<string | number>>()
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(outbox), publish)))

  const invalidate = (keys: Keys): Effect.Effect<void> =>
    Effect.contextWith((services: Context.Context<never>) => {
      const hashes = hashesOf(keys)
      const pending = Context.getOrUndefined(services, PendingPublish)
      if (pending === undefined) return Effect.andThen(local.invalidate(keys), publish(hashes))
      for (const hash of hashes) pending.add(hash)
      return local.invalidate(keys)
    })

  return Reactivity.Reactivity.of({
    [Reactivity.TypeId]: Reactivity.TypeId,
    registerUnsafe: local.registerUnsafe,
    query: local.query,
    stream: local.stream,
    invalidateUnsafe: (keys) => {
      local.invalidateUnsafe(keys)
      Queue.offerUnsafe(outbox, hashesOf(keys))
    },
    invalidate,
    mutation: (keys, effect) => Effect.tap(effect, invalidate(keys)),
    // The batch's invalidations run here when it ends, and go out as one message.
    withBatch: (effect) =>
      Effect.suspend(() => {
        const pending = new Set<string | number>()
        return local
          .withBatch(Effect.provideService(effect, PendingPublish, pending))
          .pipe(Effect.onExit(() => publish([...pending])))
      })
  })
})

/**
 * `Reactivity` across processes through Redis Pub/Sub (see {@link makePubSub}); needs a
 * `RedisPubSub` (`RedisPubSub.layer(options)` on the same server as the graph).
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphReactivity from "@effect-falkordb/graph/GraphReactivity"
 * import * as RedisPubSub from "@effect-falkordb/redis/RedisPubSub"
 * import { Layer } from "effect"
 *
 * const options = { url: "redis://127.0.0.1:6379" }
 * const Live = GraphReactivity.layerPubSub().pipe(
 *   Layer.provideMerge(RedisPubSub.layer(options)),
 *   Layer.provideMerge(FalkorDB.layer(options))
 * )
 * ```
 *
 * @since 0.1.0
 * @category pubsub
 */
export const layerPubSub = (options: PubSubOptions = {}): Layer.Layer<Reactivity.Reactivity, RedisError, RedisPubSub> =>
  Layer.effect(Reactivity.Reactivity, makePubSub(options))
