/**
 * The id→name cache of each graph's labels, relationship types and property keys.
 *
 * Semantics:
 * - one entry per graph name, shared by every `Graph` value of that name made by the same
 *   client (one client, one connection target);
 * - the cache owns its fetcher: a miss refreshes only the kind that missed, through
 *   `GRAPH.RO_QUERY <g> "CALL db.labels()"` (verbose; never `GRAPH.QUERY`, which would
 *   create a deleted graph), fetching only the names beyond those known
 *   (`… YIELD label RETURN label SKIP n`);
 * - one refresh in flight per graph and kind: concurrent decoders that miss wait for the
 *   same refresh; a decoder whose miss happened after that refresh started waits for a
 *   newer one, so a refresh always post-dates the reply it resolves;
 * - an id still unknown after a refresh fails with `UnknownSchemaId`, never a placeholder;
 * - re-validated (every cached kind re-read in full) when the connection's primary for the
 *   graph changed (`ConnectionInfo.primaryEpoch`: a Sentinel failover, a cluster slot moved),
 *   before the reply that revealed it is decoded;
 * - cleared by the client's own `delete()` and by `copy()` onto the name; with the
 *   `version` check on (see `Graph`), a mismatch re-reads the cached kinds in full, and
 *   names that disagree with the cache mark the graph as replaced and drop the cache, before
 *   any reply of the new graph is decoded;
 * - a refresh a stream waits for (`aside`) must not queue behind that stream's own reply:
 *   on a client with one shared socket or a pool of one it travels on a connection of its own
 *   (`withExclusive`), so the stream can stop reading meanwhile (see `RowStream`);
 * - refreshes belong to every decoder waiting on them, so they run on fibers of their own,
 *   forked into the client's scope: an interrupted initiator cancels nothing for the others,
 *   and nothing outlives the client.
 *
 * @internal
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { decodeError, FalkorError, fromRedis, UnknownSchemaId } from "../FalkorError.ts"
import { type Names, parseNameList, type SchemaKind } from "./CompactReply.ts"
import { HeaderCache } from "./HeaderCache.ts"

/**
 * Fetches names of `kind` with ids from `skip` on; `aside`: not behind a reply the caller is
 * still reading (a stream waits for it).
 */
export type Fetch = (
  kind: SchemaKind,
  skip: number,
  aside?: boolean
) => Effect.Effect<ReadonlyArray<string>, FalkorError>

/**
 * No second connection for a refresh while a stream reads: one shared socket (the refresh
 * would queue behind the streamed reply) or a pool of one (the stream holds it). Not a
 * cluster client: its `withExclusive` lends a connection to any node, not the graph's (there
 * the engine's `maxBuffered` bounds the wait, see `RowStream`).
 */
const noSecondConnection = (info: RedisConnection["Service"]["info"]): boolean =>
  (info.strategy === "single" || info.strategy === "multiplexed" || info.strategy === "pooled") &&
  info.connections < 2 &&
  !info.target.startsWith("cluster:")

const kinds: ReadonlyArray<SchemaKind> = ["labels", "relationshipTypes", "propertyKeys"]

const emptyNames = (): Record<SchemaKind, Array<string>> => ({ labels: [], relationshipTypes: [], propertyKeys: [] })

/**
 * The text of the schema procedure for `kind`, exactly as the recordings have it, with the
 * incremental `YIELD … SKIP n` form when names are already known.
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

/** The fetcher of `graph` over `connection`: a read-only procedure call, verbose, no client limit. */
export const fetcher =
  (connection: RedisConnection["Service"], graph: string): Fetch =>
  (kind, skip, aside) => {
    const command = ["GRAPH.RO_QUERY", graph, procedureText(kind, skip)]
    const options = { readOnly: true, timeout: "Infinity" } as const
    const sent =
      aside === true && noSecondConnection(connection.info)
        ? connection.withExclusive((exclusive) => exclusive.execute(command, options))
        : connection.execute(command, options)
    return sent.pipe(
      Effect.mapError((error) => fromRedis(error, { graph, command: "GRAPH.RO_QUERY" })),
      Effect.flatMap((reply) =>
        Effect.try({
          try: () => parseNameList(reply, graph, "GRAPH.RO_QUERY"),
          catch: (e) =>
            e instanceof FalkorError
              ? e
              : decodeError(`schema names: ${String(e)}`, { graph, command: "GRAPH.RO_QUERY", cause: e })
        })
      )
    )
  }

/** Runs `work` on a fiber in `scope` and settles `done` with its outcome, interruption included. */
const share = <A>(
  scope: Scope.Scope,
  work: Effect.Effect<A, FalkorError>,
  done: Deferred.Deferred<A, FalkorError>,
  settled: () => void
): Effect.Effect<A, FalkorError> =>
  Effect.flatMap(
    Effect.forkIn(
      Effect.onExit(work, (exit: Exit.Exit<A, FalkorError>) =>
        Effect.suspend(() => {
          settled()
          return Deferred.done(done, exit)
        })
      ),
      scope
    ),
    () => Deferred.await(done)
  )

/** The cached schema of one graph. */
export class GraphSchema {
  readonly graph: string
  private names = emptyNames()
  private inflight: Record<
    SchemaKind,
    { readonly seq: number; readonly done: Deferred.Deferred<void, FalkorError> } | undefined
  > = { labels: undefined, relationshipTypes: undefined, propertyKeys: undefined }
  private seq = 0
  /** Bumped by every clear or detected replacement: results of older refreshes are dropped. */
  generation = 0
  /** The server's schema version this cache is known to match, when the version check is on. */
  version: number | bigint | undefined = undefined
  /** Refreshes sent, per kind (observability and tests). */
  readonly refreshes: Record<SchemaKind, number> = { labels: 0, relationshipTypes: 0, propertyKeys: 0 }
  /** Times a replaced graph was detected. */
  replacements = 0
  /** The headers of this graph's recent replies (column names, not schema: never cleared). */
  readonly headers = new HeaderCache()
  private readonly fetch: Fetch
  private readonly scope: Scope.Scope

  constructor(graph: string, fetch: Fetch, scope: Scope.Scope) {
    this.graph = graph
    this.fetch = fetch
    this.scope = scope
  }

  /** The lookup the decoder uses. */
  readonly lookup: Names = (kind, id) => this.names[kind][id]

  /**
   * The names as they are now, kept by a reply sent under the version check: if the graph is
   * replaced before that reply is decoded, the reply's ids still mean these (a replacement
   * swaps in new lists; growth only appends).
   */
  snapshot(): { readonly generation: number; readonly lookup: Names } {
    const names = this.names
    return { generation: this.generation, lookup: (kind, id) => names[kind][id] }
  }

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
    this.names = emptyNames()
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
      this.names = emptyNames()
      this.generation++
    }
    this.names[kind] = [...fresh]
    return replaced
  }

  /**
   * Makes sure `id` of `kind` is known, refreshing at most once after `missSeq`. Fails with
   * `UnknownSchemaId` when the server does not know it either.
   */
  ensure(kind: SchemaKind, id: number, missSeq: number, aside = false): Effect.Effect<void, FalkorError> {
    return Effect.suspend(() => {
      if (this.names[kind][id] !== undefined) return Effect.void
      const current = this.inflight[kind]
      if (current === undefined) return Effect.flatMap(this.refresh(kind, aside), () => this.checkKnown(kind, id))
      // A refresh that started after the miss must contain the id; an older one may not.
      const wait = Deferred.await(current.done)
      return current.seq > missSeq
        ? Effect.flatMap(wait, () => this.checkKnown(kind, id))
        : Effect.flatMap(wait, () => this.ensure(kind, id, missSeq, aside))
    })
  }

  private checkKnown(kind: SchemaKind, id: number): Effect.Effect<void, FalkorError> {
    return this.names[kind][id] !== undefined
      ? Effect.void
      : Effect.fail(new FalkorError({ reason: new UnknownSchemaId({ graph: this.graph, kind, id }) }))
  }

  /** Fetches the names of `kind` beyond those known, shared by every decoder that waits for it. */
  private refresh(kind: SchemaKind, aside = false): Effect.Effect<void, FalkorError> {
    return Effect.suspend(() => {
      const flight = { seq: ++this.seq, done: Deferred.makeUnsafe<void, FalkorError>() }
      this.inflight[kind] = flight
      const generation = this.generation
      const skip = this.names[kind].length
      this.refreshes[kind]++
      const work = Effect.map(this.fetch(kind, skip, aside), (names) => {
        // A clear while this was on the wire makes its result stale.
        if (this.generation !== generation) return
        if (skip === 0) this.replaceAll(kind, names)
        else this.names[kind].push(...names)
      })
      return share(this.scope, work, flight.done, () => {
        if (this.inflight[kind] === flight) this.inflight[kind] = undefined
      })
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
  revalidate(version: number | bigint): Effect.Effect<boolean, FalkorError> {
    return Effect.suspend(() => {
      const current = this.revalidating
      if (current !== undefined) {
        return Effect.flatMap(Deferred.await(current.done), (replaced) =>
          current.version === version ? Effect.succeed(replaced) : this.revalidate(version)
        )
      }
      // Another revalidation already brought the cache to this version.
      if (this.version === version) return Effect.succeed(false)
      const flight = { version, done: Deferred.makeUnsafe<boolean, FalkorError>() }
      this.revalidating = flight
      return share(this.scope, this.rereadAll(version), flight.done, () => {
        if (this.revalidating === flight) this.revalidating = undefined
      })
    })
  }

  /** The primary epoch (`ConnectionInfo.primaryEpoch`) the cached names are known to match. */
  epoch: number | undefined = undefined
  /** The re-validation after a primary change in flight, if any. */
  private following: { readonly done: Deferred.Deferred<boolean, FalkorError> } | undefined = undefined

  /**
   * Re-validates the cache when the primary behind the connection changed (a failover, the
   * graph's slot moved): the new primary may lack writes the old one acknowledged (replication
   * is asynchronous), so an id may now name something else. Re-reads every cached kind in full
   * (names that disagree drop the cache, as for a replaced graph). Concurrent callers share one
   * re-read; nothing cached, nothing to read.
   */
  followPrimary(epoch: number): Effect.Effect<void, FalkorError> {
    return Effect.suspend(() => {
      if (this.epoch === epoch) return Effect.void
      const current = this.following
      if (current !== undefined) return Effect.flatMap(Deferred.await(current.done), () => this.followPrimary(epoch))
      if (kinds.every((kind) => this.names[kind].length === 0)) {
        this.epoch = epoch
        return Effect.void
      }
      const flight = { done: Deferred.makeUnsafe<boolean, FalkorError>() }
      this.following = flight
      const work = Effect.tap(this.rereadAll(undefined), () =>
        Effect.sync(() => {
          this.epoch = epoch
        })
      )
      return Effect.asVoid(
        share(this.scope, work, flight.done, () => {
          if (this.following === flight) this.following = undefined
        })
      )
    })
  }

  private rereadAll(version: number | bigint | undefined): Effect.Effect<boolean, FalkorError> {
    const self = this
    return Effect.gen(function* () {
      let replaced = false
      const generation = self.generation
      for (const kind of kinds) {
        if (self.names[kind].length === 0) continue
        self.refreshes[kind]++
        const fresh = yield* self.fetch(kind, 0)
        // Cleared meanwhile (own delete/copy): the version no longer describes the cache.
        if (self.generation !== generation && !replaced) return true
        if (self.replaceAll(kind, fresh)) replaced = true
      }
      if (version !== undefined) self.version = version
      return replaced
    })
  }
}

/** The schemas of one client's graphs, by name; refreshes run in the client's `scope`. */
export class SchemaCache {
  private readonly entries = new Map<string, GraphSchema>()
  private readonly connection: RedisConnection["Service"]
  private readonly scope: Scope.Scope
  private readonly onRefresh: ((kind: SchemaKind) => Effect.Effect<void>) | undefined
  /** `onRefresh` runs before every refresh is sent (the client's schema-refresh metric). */
  constructor(
    connection: RedisConnection["Service"],
    scope: Scope.Scope,
    onRefresh?: (kind: SchemaKind) => Effect.Effect<void>
  ) {
    this.connection = connection
    this.scope = scope
    this.onRefresh = onRefresh
  }
  /** The entry of `graph`, created empty on first use. */
  get(graph: string): GraphSchema {
    let entry = this.entries.get(graph)
    if (entry === undefined) {
      const fetch = fetcher(this.connection, graph)
      const onRefresh = this.onRefresh
      entry = new GraphSchema(
        graph,
        onRefresh === undefined ? fetch : (kind, skip) => Effect.andThen(onRefresh(kind), fetch(kind, skip)),
        this.scope
      )
      this.entries.set(graph, entry)
    }
    return entry
  }
  /** Clears the entry of `graph` if there is one. */
  clear(graph: string): void {
    this.entries.get(graph)?.clear()
  }
}
