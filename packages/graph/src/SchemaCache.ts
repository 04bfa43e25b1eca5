/**
 * The id→name cache of each graph's labels, relationship types and property keys.
 *
 * Semantics:
 * - one entry per connection target and graph name, shared by every `Graph` value of that
 *   name made by the same client;
 * - a miss refreshes only the kind that missed, through
 *   `GRAPH.RO_QUERY <g> "CALL db.labels()"` (verbose; never `GRAPH.QUERY`, which would
 *   create a deleted graph), fetching only the names beyond those known
 *   (`… YIELD label RETURN label SKIP n`);
 * - one refresh in flight per graph and kind: concurrent decoders that miss wait for the
 *   same refresh; a decoder whose miss happened after that refresh started waits for a
 *   newer one, so a refresh always post-dates the reply it resolves;
 * - an id still unknown after a refresh fails with `UnknownSchemaId`, never a placeholder;
 * - cleared by the client's own `delete()` and by `copy()` onto the name; with the
 *   `version` check on (see `Graph`), a mismatch re-reads the cached kinds in full, and
 *   names that disagree with the cache mark the graph as replaced and drop the cache, before
 *   any reply of the new graph is decoded.
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Names, SchemaKind } from "./CompactReply.ts"
import { FalkorError, UnknownSchemaId } from "./FalkorError.ts"

/**
 * Fetches names of `kind` with ids from `skip` on.
 *
 * @since 0.1.0
 * @category models
 */
export type Fetch = (kind: SchemaKind, skip: number) => Effect.Effect<ReadonlyArray<string>, FalkorError>

interface InFlight {
  readonly seq: number
  readonly done: Deferred.Deferred<void, FalkorError>
}

const kinds: ReadonlyArray<SchemaKind> = ["labels", "relationshipTypes", "propertyKeys"]

/**
 * The cached schema of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export class GraphSchema {
  readonly graph: string
  private names: Record<SchemaKind, Array<string>> = { labels: [], relationshipTypes: [], propertyKeys: [] }
  private inflight: Record<SchemaKind, InFlight | undefined> = {
    labels: undefined,
    relationshipTypes: undefined,
    propertyKeys: undefined
  }
  private seq = 0
  /** Bumped by every clear or detected replacement: results of older refreshes are dropped. */
  generation = 0
  /** The server's schema version this cache is known to match, when the version check is on. */
  version: number | bigint | undefined = undefined
  /** Refreshes sent, per kind (observability and tests). */
  readonly refreshes: Record<SchemaKind, number> = { labels: 0, relationshipTypes: 0, propertyKeys: 0 }
  /** Times a replaced graph was detected. */
  replacements = 0

  constructor(graph: string) {
    this.graph = graph
  }

  /** The lookup the decoder uses. */
  readonly lookup: Names = (kind, id) => this.names[kind][id]

  /** The known names of `kind`, in id order. */
  get(kind: SchemaKind): ReadonlyArray<string> {
    return this.names[kind]
  }

  /** A sequence number to pass to `ensure` for a miss that happens now. */
  get now(): number {
    return this.seq
  }

  /** Forgets everything (own delete, copy onto this name). */
  clear(): void {
    this.names = { labels: [], relationshipTypes: [], propertyKeys: [] }
    this.inflight = { labels: undefined, relationshipTypes: undefined, propertyKeys: undefined }
    this.version = undefined
    this.generation++
  }

  /**
   * Replaces `kind` with a full list fetched from the server; when the cached names are not
   * a prefix of it, the graph was replaced and every kind is dropped.
   */
  replaceAll(kind: SchemaKind, fresh: ReadonlyArray<string>): boolean {
    const cached = this.names[kind]
    const replaced = cached.length > fresh.length || cached.some((name, i) => fresh[i] !== name)
    if (replaced) {
      this.replacements++
      const next = {
        labels: [] as Array<string>,
        relationshipTypes: [] as Array<string>,
        propertyKeys: [] as Array<string>
      }
      next[kind] = [...fresh]
      this.names = next
      this.generation++
    } else this.names[kind] = [...fresh]
    return replaced
  }

  /**
   * Makes sure `id` of `kind` is known, refreshing at most once after `missSeq`. Fails with
   * `UnknownSchemaId` when the server does not know it either.
   */
  ensure(kind: SchemaKind, id: number, missSeq: number, fetch: Fetch): Effect.Effect<void, FalkorError> {
    return Effect.suspend(() => {
      if (this.names[kind][id] !== undefined) return Effect.void
      const current = this.inflight[kind]
      if (current !== undefined) {
        const wait = Deferred.await(current.done)
        // A refresh that started after the miss must contain the id; an older one may not.
        return current.seq > missSeq
          ? Effect.flatMap(wait, () => this.checkKnown(kind, id))
          : Effect.flatMap(wait, () => this.ensure(kind, id, missSeq, fetch))
      }
      return Effect.flatMap(this.startRefresh(kind, fetch), () => this.checkKnown(kind, id))
    })
  }

  private checkKnown(kind: SchemaKind, id: number): Effect.Effect<void, FalkorError> {
    return this.names[kind][id] !== undefined
      ? Effect.void
      : Effect.fail(new FalkorError({ reason: new UnknownSchemaId({ graph: this.graph, kind, id }) }))
  }

  private startRefresh(kind: SchemaKind, fetch: Fetch): Effect.Effect<void, FalkorError> {
    return Effect.suspend(() => {
      const done = Deferred.makeUnsafe<void, FalkorError>()
      const flight: InFlight = { seq: ++this.seq, done }
      this.inflight[kind] = flight
      const generation = this.generation
      const skip = this.names[kind].length
      this.refreshes[kind]++
      const work = fetch(kind, skip).pipe(
        Effect.tap((names) =>
          Effect.sync(() => {
            // A clear while this was on the wire makes its result stale.
            if (this.generation !== generation) return
            if (skip === 0) this.replaceAll(kind, names)
            else this.names[kind].push(...names)
          })
        ),
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.suspend(() => {
            if (this.inflight[kind] === flight) this.inflight[kind] = undefined
            return Deferred.done(done, Exit.asVoid(exit))
          })
        )
      )
      // The refresh belongs to every decoder waiting on it, so it runs on its own fiber: an
      // interrupted initiator neither cancels it for the others nor waits for it.
      return Effect.flatMap(Effect.forkDetach(work), () => Deferred.await(done))
    })
  }

  /** The revalidation in flight, if any, and the server version it answers. */
  private revalidating:
    | { readonly version: number | bigint; readonly done: Deferred.Deferred<boolean, FalkorError> }
    | undefined = undefined

  /**
   * Brings the cache up to the server's schema `version` after a mismatch: re-reads every
   * cached kind in full and records the version; true when the graph turned out to be
   * replaced. One revalidation runs at a time: concurrent mismatches that report the same
   * version share it (so N queries in flight after a schema change cost one re-read), and
   * one that reports another version waits for it, then runs its own if still needed.
   */
  revalidate(version: number | bigint, fetch: Fetch): Effect.Effect<boolean, FalkorError> {
    return Effect.suspend(() => {
      const current = this.revalidating
      if (current !== undefined) {
        return Effect.flatMap(Deferred.await(current.done), (replaced) =>
          current.version === version ? Effect.succeed(replaced) : this.revalidate(version, fetch)
        )
      }
      // Another revalidation already brought the cache to this version.
      if (this.version === version) return Effect.succeed(false)
      const done = Deferred.makeUnsafe<boolean, FalkorError>()
      const flight = { version, done }
      this.revalidating = flight
      const work = this.revalidateNow(version, fetch).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.suspend(() => {
            if (this.revalidating === flight) this.revalidating = undefined
            return Deferred.done(done, exit)
          })
        )
      )
      // Like a refresh, it belongs to every query waiting on it: an interrupted initiator does not cancel it.
      return Effect.flatMap(Effect.forkDetach(work), () => Deferred.await(done))
    })
  }

  private revalidateNow(version: number | bigint, fetch: Fetch): Effect.Effect<boolean, FalkorError> {
    const self = this
    return Effect.gen(function* () {
      let replaced = false
      const generation = self.generation
      for (const kind of kinds) {
        if (self.names[kind].length === 0) continue
        self.refreshes[kind]++
        const fresh = yield* fetch(kind, 0)
        // Cleared meanwhile (own delete/copy): the version no longer describes the cache.
        if (self.generation !== generation && !replaced) return true
        if (self.replaceAll(kind, fresh)) replaced = true
      }
      self.version = version
      return replaced
    })
  }
}

/**
 * The registry of graph schemas, keyed by connection target and graph name.
 *
 * @since 0.1.0
 * @category models
 */
export class SchemaCache {
  private readonly entries = new Map<string, GraphSchema>()
  /** The entry of `graph` on `target`, created empty on first use. */
  get(target: string, graph: string): GraphSchema {
    const key = `${target}\u0000${graph}`
    let entry = this.entries.get(key)
    if (entry === undefined) {
      entry = new GraphSchema(graph)
      this.entries.set(key, entry)
    }
    return entry
  }
  /** Clears the entry of `graph` on `target` if there is one. */
  clear(target: string, graph: string): void {
    this.entries.get(`${target}\u0000${graph}`)?.clear()
  }
}

/**
 * An empty registry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): SchemaCache => new SchemaCache()

/**
 * The text of the schema procedure for `kind`, exactly as the recordings have it, with the
 * incremental `YIELD … SKIP n` form when names are already known.
 *
 * @since 0.1.0
 * @category models
 */
export const procedureText = (kind: SchemaKind, skip: number): string => {
  const [procedure, column] =
    kind === "labels"
      ? ["db.labels", "label"]
      : kind === "relationshipTypes"
        ? ["db.relationshipTypes", "relationshipType"]
        : ["db.propertyKeys", "propertyKey"]
  return skip === 0 ? `CALL ${procedure}()` : `CALL ${procedure}() YIELD ${column} RETURN ${column} SKIP ${skip}`
}
