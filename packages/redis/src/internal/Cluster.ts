/**
 * Redis Cluster: a slot map from `CLUSTER SHARDS` (`CLUSTER SLOTS` before Redis 7), one client
 * of the chosen strategy per node, commands routed by the hash slot of their first key (reads
 * to the slot's replicas when the read preference asks), `MOVED` / `ASK` followed once with
 * one shared map refresh (by `execute`, by streamed replies before their first part), pipelines
 * split per node and reassembled in order, cross-slot commands refused before sending.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, MapReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as CommandKeys from "../CommandKeys.ts"
import type {
  CommandOptions,
  ConnectionInfo,
  ExclusiveConnection,
  Future,
  ReadPreference,
  RedisConnection,
  ReplyFold,
  ReplyPart,
  StreamOptions
} from "../RedisConnection.ts"
import { makeService } from "./MakeService.ts"
import { CrossSlot, fromErrorReply, Offline, RedisError } from "../RedisError.ts"
import type * as RedisOptions from "../RedisOptions.ts"
import { FutureRequest, Request } from "./Request.ts"
import { hashSlot } from "./HashSlot.ts"
import { refuseAll } from "./Strategies.ts"
import * as ExecuteAll from "./ExecuteAll.ts"
import * as Sentinel from "./Sentinel.ts"
import { launch } from "./SingleFlight.ts"
import * as Folded from "./Folded.ts"
import * as Streamed from "./Streamed.ts"

type Service = RedisConnection["Service"]

export interface HostPort {
  readonly host: string
  readonly port: number
}

const label = (a: HostPort) => `${a.host}:${a.port}`

/** The nodes serving a slot range: its primary and the replicas that answer reads. */
export interface Shard {
  readonly primary: HostPort
  readonly replicas: ReadonlyArray<HostPort>
}

/** Slot → shard; `undefined` for a slot no node serves. */
export type SlotMap = Array<Shard | undefined>

/** An empty host in a map means "the node that answered" (a node that never met another). */
const hostOf = (reply: Reply | undefined, asked: HostPort): string => {
  const host = reply === undefined ? undefined : replyToString(reply)
  return host === undefined || host === "" || host === "?" ? asked.host : host
}

/** Slot → shard, from a `CLUSTER SLOTS` reply (the form before Redis 7). */
export const parseSlots = (reply: Reply, asked: HostPort): SlotMap | string => {
  if (!Array.isArray(reply)) return "CLUSTER SLOTS did not answer an array"
  const map: SlotMap = new Array(16384).fill(undefined)
  for (const range of reply as ReadonlyArray<ReadonlyArray<Reply>>) {
    if (!Array.isArray(range) || range.length < 3) return "CLUSTER SLOTS answered a range without a node"
    const from = Number(range[0])
    const to = Number(range[1])
    const nodes: Array<HostPort> = []
    for (let i = 2; i < range.length; i++) {
      const node = range[i] as ReadonlyArray<Reply>
      if (!Array.isArray(node)) continue
      nodes.push({ host: hostOf(node[0], asked), port: Number(node[1]) })
    }
    if (!(from >= 0 && to < 16384 && from <= to) || nodes.length === 0) {
      return `CLUSTER SLOTS answered a range that cannot be read (${from}-${to})`
    }
    const shard: Shard = { primary: nodes[0]!, replicas: nodes.slice(1) }
    for (let slot = from; slot <= to; slot++) map[slot] = shard
  }
  return map
}

/** A field of a RESP2 flat pair list or a RESP3 map. */
const field = (entry: Reply, name: string): Reply | undefined => {
  if (entry instanceof MapReply) return entry.get(name)
  if (!Array.isArray(entry)) return undefined
  const flat = entry as ReadonlyArray<Reply>
  for (let i = 0; i + 1 < flat.length; i += 2) if (replyToString(flat[i]!) === name) return flat[i + 1]
  return undefined
}

/**
 * Slot → shard, from a `CLUSTER SHARDS` reply (Redis 7+): per shard its slot ranges and its
 * nodes with role and health. The primary is the online `master` (a failed one is listed
 * until it is forgotten); replicas count only while `online` (not loading or failed). A node
 * serving both a plain and a TLS port lists both: `tls` picks its `tls-port`.
 */
export const parseShards = (reply: Reply, asked: HostPort, tls = false): SlotMap | string => {
  if (!Array.isArray(reply)) return "CLUSTER SHARDS did not answer an array"
  const map: SlotMap = new Array(16384).fill(undefined)
  for (const entry of reply as ReadonlyArray<Reply>) {
    const ranges = field(entry, "slots")
    const nodes = field(entry, "nodes")
    if (!Array.isArray(ranges) || !Array.isArray(nodes)) return "CLUSTER SHARDS answered a shard without slots or nodes"
    if (ranges.length === 0) continue
    let primary: HostPort | undefined
    let failedPrimary: HostPort | undefined
    const replicas: Array<HostPort> = []
    for (const node of nodes as ReadonlyArray<Reply>) {
      const port = Number(
        tls ? (field(node, "tls-port") ?? field(node, "port")) : (field(node, "port") ?? field(node, "tls-port"))
      )
      if (!Number.isInteger(port) || port < 1) continue
      const address = { host: hostOf(field(node, "endpoint") ?? field(node, "ip"), asked), port }
      const online = replyToString(field(node, "health") ?? "") === "online"
      if (replyToString(field(node, "role") ?? "") === "master") {
        if (online) primary = address
        else failedPrimary ??= address
      } else if (online) replicas.push(address)
    }
    const owner = primary ?? failedPrimary
    if (owner === undefined) return "CLUSTER SHARDS answered a shard with slots but no primary"
    const shard: Shard = { primary: owner, replicas }
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const from = Number(ranges[i])
      const to = Number(ranges[i + 1])
      if (!(from >= 0 && to < 16384 && from <= to)) return `CLUSTER SHARDS answered a range that cannot be read`
      for (let slot = from; slot <= to; slot++) map[slot] = shard
    }
  }
  return map
}

const slotOf = (key: unknown): number =>
  hashSlot(typeof key === "string" || key instanceof Uint8Array ? key : String(key))

/** The one slot of a command's keys, `undefined` when keyless, or the cross-slot error. */
export const commandSlot = (command: Command): number | undefined | RedisError => {
  const keys = CommandKeys.keys(command)
  if (keys.length === 0) return undefined
  const first = slotOf(keys[0])
  for (let i = 1; i < keys.length; i++) {
    if (slotOf(keys[i]) !== first) {
      return new RedisError({
        reason: new CrossSlot({
          message: `the keys of ${String(command[0]).toUpperCase()} hash to different slots (${keys
            .map((k) => `"${String(k)}" -> ${slotOf(k)}`)
            .join(", ")}); a cluster runs a command on one slot only: use hash tags such as {user1}:a and {user1}:b`
        })
      })
    }
  }
  return first
}

const redirection = (
  reply: Reply,
  asked: HostPort
): { readonly kind: "MOVED" | "ASK"; readonly slot: number; readonly to: HostPort } | undefined => {
  if (!(reply instanceof ErrorReply) || (reply.code !== "MOVED" && reply.code !== "ASK")) return undefined
  // "MOVED 3999 127.0.0.1:6381" (the host is empty when the node does not know its own address)
  const [, slot, target = ""] = reply.message.split(" ")
  const colon = target.lastIndexOf(":")
  const host = target.slice(0, colon)
  return {
    kind: reply.code,
    slot: Number(slot),
    to: { host: host === "" || host === "?" ? asked.host : host, port: Number(target.slice(colon + 1)) }
  }
}

/** The redirection a `MOVED` / `ASK` failure (reason `Reply`) names. */
const redirectionOf = (failure: RedisError, asked: HostPort) =>
  failure.reason._tag === "Reply" && (failure.reason.code === "MOVED" || failure.reason.code === "ASK")
    ? redirection(new ErrorReply(failure.reason.serverMessage), asked)
    : undefined

/**
 * The future of a command submitted on a cluster. It settles with the node's own outcome,
 * unless `execute` would follow that (a `MOVED` / `ASK`, a command never sent): then with the
 * outcome of the command sent again where it belongs (see `makeCluster`'s `following`). A
 * request of its own that is never admitted anywhere: it only carries the outcome and the
 * waiting faces of a `Future`.
 */
class ClusterFuture extends FutureRequest<Reply> {
  /** The node's outcome is being followed: the command may be sent again. */
  followed = false
  private readonly first: Future<Reply>
  constructor(command: Command, first: Future<Reply>) {
    super([command], false, 0, Number.POSITIVE_INFINITY)
    this.first = first
  }
  override get written(): boolean {
    return this.followed || !(this.first instanceof Request) || this.first.written
  }
}

/** A `Locator` of one fixed replica: its engines check `ROLE` and report whether they are online. */
export type ReplicaLocator = RedisOptions.Locator & { readonly anyOnline: () => boolean }

/** What a cluster client needs from the layer above: how to connect to one node. */
export interface ClusterSettings {
  readonly seeds: ReadonlyArray<HostPort>
  /**
   * Builds the chosen strategy on one node, in the scope given. With a locator it is a replica
   * read connection: `READONLY` in its handshake, `ROLE` checked on every connect.
   */
  readonly connect: (
    address: HostPort,
    replica: ReplicaLocator | undefined
  ) => Effect.Effect<Service, RedisError, Scope.Scope>
  readonly readPreference: ReadPreference
  /** The nodes are reached over TLS: their `tls-port` (CLUSTER SHARDS) rather than their plain port. */
  readonly tls?: boolean | undefined
}

/** Single-flight builds by address: concurrent first uses of a node share one connect. */
const memo = <A>(scope: Scope.Scope, build: (address: HostPort) => Effect.Effect<A, RedisError>) => {
  const built = new Map<string, A>()
  const building = new Map<string, Deferred.Deferred<A, RedisError>>()
  const get = (address: HostPort): Effect.Effect<A, RedisError> =>
    Effect.suspend(() => {
      const key = label(address)
      const known = built.get(key)
      if (known !== undefined) return Effect.succeed(known)
      const pending = building.get(key)
      if (pending !== undefined) return Deferred.await(pending)
      const deferred = Deferred.makeUnsafe<A, RedisError>()
      building.set(key, deferred)
      return launch(scope, build(address), deferred, (exit) => {
        building.delete(key)
        if (Exit.isSuccess(exit)) built.set(key, exit.value)
      })
    })
  return { get, known: (address: HostPort) => built.get(label(address)) }
}

/**
 * The cluster client: the slot map from `CLUSTER SHARDS` (`CLUSTER SLOTS` on servers before
 * Redis 7), one client of the chosen strategy per node it talks to.
 */
export const makeCluster = Effect.fnUntraced(function* (settings: ClusterSettings) {
  const scope = yield* Effect.scope
  const context = yield* Effect.context<never>()
  /** Runs `work` on a fiber of the client's scope (from a reply callback, outside any fiber). */
  const fork = (work: Effect.Effect<void>): void => {
    Fiber.runIn(Effect.runForkWith(context)(work), scope)
  }
  const { seeds, connect, readPreference } = settings
  const nodes = memo(scope, (address) => Scope.provide(connect(address, undefined), scope))
  // Replica read clients; a replica that failed to connect is not tried again for a second.
  const failedReplicas = new Map<string, number>()
  const replicas = memo(scope, (address) => {
    const locator: ReplicaLocator = Sentinel.staticReplicas([address])
    return Scope.provide(connect(address, locator), scope).pipe(
      Effect.map((service) => ({ service, online: locator.anyOnline })),
      Effect.tapError(() => Effect.sync(() => failedReplicas.set(label(address), performance.now())))
    )
  })
  let slots: SlotMap = []
  // Per slot, bumped when its primary changes (failover, resharding): caches of server state
  // (the graph schema cache) re-validate when it moves.
  const slotEpochs = new Uint32Array(16384)
  let epoch = 0
  let shardsSupported = true
  let refreshing: Deferred.Deferred<void, RedisError> | undefined

  const install = (next: SlotMap) => {
    let changed = false
    for (let slot = 0; slot < 16384; slot++) {
      const before = slots[slot]?.primary
      const after = next[slot]?.primary
      if (before !== undefined && (after === undefined || label(before) !== label(after))) {
        slotEpochs[slot]!++
        changed = true
      }
    }
    if (changed) epoch++
    slots = next
  }

  /** Asks one node for the map: `CLUSTER SHARDS`, or `CLUSTER SLOTS` where SHARDS is unknown. */
  const ask = (address: HostPort): Effect.Effect<SlotMap | string, RedisError> =>
    Effect.gen(function* () {
      const service = yield* nodes.get(address)
      if (shardsSupported) {
        const exit = yield* Effect.exit(service.execute(["CLUSTER", "SHARDS"], { timeout: 2_000 }))
        if (Exit.isSuccess(exit)) return parseShards(exit.value, address, settings.tls === true)
        const error = Cause.findErrorOption(exit.cause)
        // An error reply (not a lost connection): a server before 7.0; ask the older way from now on.
        if (Option.isNone(error) || error.value.reason._tag !== "Reply") return yield* Effect.failCause(exit.cause)
        shardsSupported = false
      }
      return parseSlots(yield* service.execute(["CLUSTER", "SLOTS"], { timeout: 2_000 }), address)
    })

  // The node that answered last is asked first: a dead seed does not slow every refresh down.
  let lastAnswered: HostPort | undefined
  /** Reads the map from the seeds, then from every node of the last map (the seeds may be gone). */
  const readMap: Effect.Effect<void, RedisError> = Effect.gen(function* () {
    const tried: Array<string> = []
    const candidates = new Map<string, HostPort>()
    if (lastAnswered !== undefined) candidates.set(label(lastAnswered), lastAnswered)
    for (const address of seeds) candidates.set(label(address), address)
    for (const shard of new Set(slots)) {
      if (shard === undefined) continue
      for (const address of [shard.primary, ...shard.replicas]) candidates.set(label(address), address)
    }
    // A node that answered with an error (its handshake refused: a wrong password, a database
    // the cluster does not serve) is a better account of the failure than "unreachable".
    let refusal: RedisError | undefined
    for (const address of candidates.values()) {
      const exit = yield* Effect.exit(ask(address))
      if (exit._tag === "Failure") {
        const error = Cause.findErrorOption(exit.cause)
        tried.push(`${label(address)}: ${Option.isSome(error) ? error.value.reason.message : "interrupted"}`)
        if (refusal === undefined && Option.isSome(error) && error.value.reason._tag === "Reply") refusal = error.value
        continue
      }
      if (typeof exit.value === "string") {
        tried.push(`${label(address)}: ${exit.value}`)
        continue
      }
      install(exit.value)
      lastAnswered = address
      return
    }
    if (refusal !== undefined) return yield* refusal
    return yield* new RedisError({
      reason: new Offline({ message: `no cluster node answered the slot map; tried ${tried.join("; ")}` })
    })
  })

  /** One map refresh at a time: callers that need one while it runs wait for it. */
  const refresh: Effect.Effect<void, RedisError> = Effect.suspend(() => {
    if (refreshing !== undefined) return Deferred.await(refreshing)
    const deferred = Deferred.makeUnsafe<void, RedisError>()
    refreshing = deferred
    return launch(scope, readMap, deferred, () => {
      refreshing = undefined
    })
  })

  /**
   * A `MOVED` names the slot's new owner: the map says so at once (the commands that follow go
   * there), then one refresh, shared with every other redirection meanwhile, reads the rest.
   * A redirection the map already knows asks for nothing.
   */
  const moved = (slot: number, to: HostPort): Effect.Effect<void> =>
    Effect.suspend(() => {
      const current = slots[slot]?.primary
      if (current !== undefined && label(current) === label(to)) return Effect.void
      if (slot >= 0 && slot < 16384) {
        slots[slot] = { primary: to, replicas: [] }
        slotEpochs[slot]!++
        epoch++
      }
      return Effect.ignore(refresh)
    })

  yield* refresh
  const first = yield* anyNode()
  const info: ConnectionInfo = {
    ...first.info,
    target: `cluster:${seeds.map(label).join(",")}`,
    primaryEpoch: (key) => (key === undefined ? epoch : slotEpochs[slotOf(key)]!)
  }

  const forSlot = (slot: number): Effect.Effect<Service, RedisError> => {
    const shard = slots[slot]
    if (shard === undefined) {
      return Effect.fail(
        new RedisError({ reason: new Offline({ message: `no cluster node serves slot ${slot} (CLUSTERDOWN?)` }) })
      )
    }
    return nodes.get(shard.primary)
  }
  function anyNode(): Effect.Effect<Service, RedisError> {
    const shard = slots.find((a) => a !== undefined)
    return shard === undefined ? Effect.andThen(refresh, Effect.suspend(anyNode)) : nodes.get(shard.primary)
  }

  /** The preference that applies to a read-only command, `undefined` for the primary. */
  const replicaPreference = (reads: boolean, asked: ReadPreference | undefined) => {
    const wanted = asked ?? readPreference
    return reads && wanted !== "primary" ? wanted : undefined
  }
  const isRead = (command: Command, readOnly: boolean | undefined) =>
    readOnly === true || CommandKeys.isReadOnly(command)

  let turn = 0
  /**
   * A replica of `slot` that is connected: `undefined` (use the primary) when none is and the
   * preference allows it; with `"replica"` a failure naming the slot.
   */
  const replicaFor = (
    slot: number,
    wanted: "replica" | "preferReplica"
  ): Effect.Effect<Service | undefined, RedisError> =>
    Effect.gen(function* () {
      const candidates = slots[slot]?.replicas ?? []
      const start = turn++
      for (let i = 0; i < candidates.length; i++) {
        const known = replicas.known(candidates[(start + i) % candidates.length]!)
        if (known?.online() === true) return known.service
      }
      let last: RedisError | undefined
      for (let i = 0; i < candidates.length; i++) {
        const address = candidates[(start + i) % candidates.length]!
        if (replicas.known(address) !== undefined) continue
        const failedAt = failedReplicas.get(label(address))
        if (failedAt !== undefined && performance.now() - failedAt < 1_000) continue
        const exit = yield* Effect.exit(replicas.get(address))
        if (Exit.isSuccess(exit)) return exit.value.service
        const error = Cause.findErrorOption(exit.cause)
        if (Option.isSome(error)) last = error.value
      }
      if (wanted === "preferReplica") return undefined
      return yield* new RedisError({
        reason: new Offline({
          message: `no replica of slot ${slot} is connected (readPreference "replica")${candidates.length === 0 ? ": the map lists none" : last === undefined ? "" : `: ${last.reason.message}`}`
        })
      })
    })

  /** Where a command goes: the slot's replica for a read when asked, else its primary. */
  const route = (slot: number | undefined, wanted: ReadPreference | undefined): Effect.Effect<Service, RedisError> => {
    if (slot === undefined) return anyNode()
    if (wanted === undefined || wanted === "primary") return forSlot(slot)
    return Effect.flatMap(replicaFor(slot, wanted), (replica) =>
      replica === undefined ? forSlot(slot) : Effect.succeed(replica)
    )
  }

  /**
   * Runs a command on its node; follows one MOVED (after refreshing the map) and one ASK. The
   * common case (the slot's primary already connected) is one call with a failure handler.
   */
  const run = (command: Command, slot: number | undefined, options: CommandOptions | undefined) => {
    const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
    const shard = slot === undefined || wanted !== undefined ? undefined : slots[slot]
    const known = shard === undefined ? undefined : nodes.known(shard.primary)
    // Reaching the node is part of the attempt: a node that cannot be reached re-reads the map too.
    const attempt =
      known !== undefined
        ? known.execute(command, options)
        : Effect.flatMap(route(slot, wanted), (s) => s.execute(command, options))
    return Effect.catch(attempt, (failure) => recover(command, slot, options, wanted, failure))
  }

  /**
   * After a failed attempt: the map re-read, and the node to try once more (a redirection
   * followed, an unsent command re-routed), with `asking` for an ASK; else the failure itself.
   * Shared by `execute` and `executeStreamed` so both follow the same rules.
   */
  const retryTarget = (
    slot: number | undefined,
    wanted: ReadPreference | undefined,
    failure: RedisError
  ): Effect.Effect<{ readonly target: Service; readonly asking: boolean }, RedisError> =>
    Effect.gen(function* () {
      if (failure.reason._tag === "Timeout" && !failure.written) {
        // Not sent in time: the node may be down; re-read the map for the next call.
        yield* Effect.ignore(refresh)
        return yield* failure
      }
      if (failure.reason._tag === "Offline" || failure.reason._tag === "ConnectionLost") {
        // The node may be gone (a failover): re-read the map; a command never sent goes to the
        // slot's owner now (a read asking for a replica only does not), a written one is never re-sent.
        yield* Effect.ignore(refresh)
        if (failure.written || slot === undefined || wanted === "replica") return yield* failure
        return { target: yield* forSlot(slot), asking: false }
      }
      const redirect = redirectionOf(failure, seeds[0]!)
      if (redirect === undefined) return yield* failure
      // MOVED: the slot moved for good, the node did not run the command; once on the new owner.
      if (redirect.kind === "MOVED") yield* moved(redirect.slot, redirect.to)
      // ASK: this one command on the importing node, after ASKING on the same connection.
      return { target: yield* nodes.get(redirect.to), asking: redirect.kind === "ASK" }
    })

  /** After a failed attempt of `execute`: once more where `retryTarget` says. */
  const recover = (
    command: Command,
    slot: number | undefined,
    options: CommandOptions | undefined,
    wanted: ReadPreference | undefined,
    failure: RedisError
  ): Effect.Effect<Reply, RedisError> =>
    Effect.flatMap(retryTarget(slot, wanted, failure), ({ asking, target }) => {
      if (!asking) return target.execute(command, options)
      // ASKING holds for the next command of its connection only; a connection of its own keeps
      // it away from the shared pipe (ASK happens only while a slot migrates).
      return Effect.flatMap(
        target.withExclusive((connection) => connection.pipeline([["ASKING"], command], options)),
        (replies) => {
          const reply = replies[1]!
          return reply instanceof ErrorReply
            ? Effect.fail(fromErrorReply(reply, String(command[0]).toUpperCase()))
            : Effect.succeed(reply)
        }
      )
    })

  /**
   * A connection of `target`'s own, held for the scope: `withExclusive` lends one for the
   * scope of a function, a stream needs it for as long as it is read.
   */
  const lendExclusive = (target: Service): Effect.Effect<ExclusiveConnection, RedisError, Scope.Scope> =>
    Effect.gen(function* () {
      const lent = Deferred.makeUnsafe<ExclusiveConnection, RedisError>()
      yield* Effect.forkScoped(
        target
          .withExclusive((connection) => Effect.andThen(Deferred.succeed(lent, connection), Effect.never))
          .pipe(Effect.onExit((exit) => (Exit.isFailure(exit) ? Deferred.failCause(lent, exit.cause) : Effect.void)))
      )
      return yield* Deferred.await(lent)
    })

  /**
   * A streamed command on its node. A failure before any part was handed over (a `MOVED` or
   * `ASK` is an error reply, so nothing was) is followed like `execute`'s; after that, the
   * stream fails as it is (a written command is never re-sent).
   */
  const stream = (
    command: Command,
    slot: number | undefined,
    options: StreamOptions | undefined
  ): Stream.Stream<ReplyPart, RedisError> =>
    Stream.suspend(() => {
      const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
      let handedOver = false
      return Stream.unwrap(
        Effect.map(route(slot, wanted), (node) => Streamed.executeStreamed(node, command, options))
      ).pipe(
        Stream.mapArray((parts) => {
          handedOver = true
          return parts
        }),
        Stream.catch((failure) =>
          handedOver
            ? Stream.fail(failure)
            : Stream.unwrap(
                Effect.map(retryTarget(slot, wanted, failure), ({ asking, target }) =>
                  !asking
                    ? Streamed.executeStreamed(target, command, options)
                    : Stream.unwrap(
                        Effect.gen(function* () {
                          const connection = yield* lendExclusive(target)
                          yield* connection.execute(["ASKING"], options)
                          return Streamed.executeStreamed(connection, command, options)
                        })
                      )
                )
              )
        )
      )
    })

  const execute: Service["execute"] = (command, options) =>
    Effect.suspend(() => {
      const slot = commandSlot(command)
      if (slot instanceof RedisError) return Effect.fail(slot)
      if (slot === undefined && String(command[0]).toUpperCase() === "GRAPH.LIST") return fanOut(command, options)
      return run(command, slot, options)
    })

  /** The primaries of the map, each once. */
  const primaries = (): Array<HostPort> => {
    const seen = new Map<string, HostPort>()
    for (const shard of slots) if (shard !== undefined) seen.set(label(shard.primary), shard.primary)
    return [...seen.values()]
  }

  /** GRAPH.LIST on every primary, the names merged (each graph lives on one node). */
  const fanOut = (command: Command, options: CommandOptions | undefined) =>
    Effect.map(
      Effect.forEach(primaries(), (address) => Effect.flatMap(nodes.get(address), (s) => s.execute(command, options)), {
        concurrency: "unbounded"
      }),
      (replies): Reply => replies.flatMap((reply) => (Array.isArray(reply) ? (reply as ReadonlyArray<Reply>) : []))
    )

  const pipeline: Service["pipeline"] = (commands, options) =>
    Effect.gen(function* () {
      // Each command's slot; a keyless one (MULTI, EXEC, PING) goes with the keyed command
      // before it (or the first keyed one), so a transaction stays on its node.
      const slotOfIndex: Array<number | undefined> = []
      let transaction = false
      let reads = commands.length > 0
      for (const command of commands) {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return yield* slot
        slotOfIndex.push(slot)
        if (String(command[0]).toUpperCase() === "MULTI") transaction = true
        if (reads && !isRead(command, options?.readOnly)) reads = false
      }
      const firstKeyed = slotOfIndex.find((slot) => slot !== undefined)
      if (transaction && slotOfIndex.some((slot) => slot !== undefined && slot !== firstKeyed)) {
        return yield* new RedisError({
          reason: new CrossSlot({
            message: "a batch with MULTI must keep every key in one slot (a transaction runs on one node)"
          })
        })
      }
      // A batch of reads only goes to replicas when asked, a group per shard.
      const wanted = replicaPreference(reads, options?.readPreference)
      const groups = new Map<string, { slot: number | undefined; indices: Array<number> }>()
      let previous = firstKeyed
      for (let i = 0; i < commands.length; i++) {
        const slot = slotOfIndex[i] ?? previous
        if (slotOfIndex[i] !== undefined) previous = slotOfIndex[i]
        const shard = slot === undefined ? undefined : slots[slot]
        const key = slot === undefined ? "" : shard === undefined ? `?${slot}` : label(shard.primary)
        const group = groups.get(key) ?? { slot, indices: [] }
        group.indices.push(i)
        groups.set(key, group)
      }
      const out: Array<Reply> = new Array(commands.length)
      yield* Effect.forEach(
        [...groups.values()],
        (group) =>
          Effect.gen(function* () {
            const service = yield* route(group.slot, wanted)
            const replies = yield* service.pipeline(
              group.indices.map((i) => commands[i]!),
              options
            )
            for (let j = 0; j < replies.length; j++) {
              const reply = replies[j]!
              const index = group.indices[j]!
              const redirect = redirection(reply, seeds[0]!)
              if (redirect === undefined) out[index] = reply
              else if (transaction) {
                // The transaction did not run (EXECABORT) and is not re-sent; the map learns the move.
                if (redirect.kind === "MOVED") yield* moved(redirect.slot, redirect.to)
                out[index] = reply
              } else {
                // A redirected command did not run: follow it on its own.
                out[index] = yield* Effect.orElseSucceed(execute(commands[index]!, options), () => reply)
              }
            }
          }),
        { concurrency: "unbounded" }
      )
      return out
    })

  /**
   * Each command to its slot's node (the commands of one node in one `executeAll` there, the
   * nodes concurrently); a redirected or unsent command is then followed like `execute` does.
   */
  const executeAll = ExecuteAll.fromResults((commands, options) =>
    Effect.suspend(() => {
      const refused = refuseAll(commands, options)
      if (refused !== undefined) return Effect.fail(refused)
      const slotOfIndex: Array<number | undefined> = new Array(commands.length)
      for (let i = 0; i < commands.length; i++) {
        const slot = commandSlot(commands[i]!)
        if (slot instanceof RedisError) return Effect.fail(slot)
        slotOfIndex[i] = slot
      }
      const groups = new Map<
        string,
        { readonly slot: number | undefined; readonly wanted: ReadPreference | undefined }
      >()
      const inResults = { ...options, mode: "result" as const }
      const alone = (group: ReadonlyArray<Command>) =>
        Effect.forEach(group, (command) => Effect.result(execute(command, options)), { concurrency: "unbounded" })
      return ExecuteAll.scatter(
        commands,
        (command, i) => {
          const slot = slotOfIndex[i]
          // GRAPH.LIST asks every primary: through execute, on its own.
          if (slot === undefined && String(command[0]).toUpperCase() === "GRAPH.LIST") return "fanOut"
          const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
          const shard = slot === undefined ? undefined : slots[slot]
          const key = `${wanted ?? "primary"} ${slot === undefined ? "any" : shard === undefined ? `?${slot}` : label(shard.primary)}`
          if (!groups.has(key)) groups.set(key, { slot, wanted })
          return key
        },
        (key, group) => {
          const place = groups.get(key)
          if (place === undefined) return alone(group)
          return Effect.matchEffect(route(place.slot, place.wanted), {
            // The node cannot be reached now: each command recovers on its own, as execute does.
            onFailure: () => alone(group),
            onSuccess: (node) =>
              Effect.flatMap(node.executeAll(group, inResults), (results) =>
                Effect.forEach(
                  results,
                  (result, j) => {
                    if (result._tag === "Success") return Effect.succeed(result)
                    const command = group[j]!
                    const slot = commandSlot(command) as number | undefined
                    const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
                    return Effect.result(recover(command, slot, options, wanted, result.failure))
                  },
                  { concurrency: "unbounded" }
                )
              )
          })
        }
      )
    })
  )

  /** Calls `settled` once with `future`'s outcome. */
  const whenSettled = (future: Future<Reply>, settled: (exit: Exit.Exit<Reply, RedisError>) => void): void => {
    if (future instanceof Request) {
      if (future.exit !== undefined) {
        settled(future.exit)
        return
      }
      if (future.resume === undefined) {
        // Nobody waits for it yet (it was just submitted): the engine settles this directly, no fiber.
        future.resume = (exit) => settled(exit as Exit.Exit<Reply, RedisError>)
        return
      }
    }
    fork(Effect.flatMap(Effect.exit(future.await), (exit) => Effect.sync(() => settled(exit))))
  }

  /** What `execute` follows after a failure (`recover`): a redirection, or a command never sent. */
  const followed = (failure: RedisError): boolean =>
    redirectionOf(failure, seeds[0]!) !== undefined ||
    (!failure.written &&
      (failure.reason._tag === "Offline" ||
        failure.reason._tag === "ConnectionLost" ||
        failure.reason._tag === "Timeout"))

  /**
   * The future of a command submitted on `first`'s node: settled with the node's outcome, or,
   * when `execute` would follow it (a `MOVED` / `ASK`, a command never sent), at once followed
   * the same way (on a fiber of the client: the command goes out again whether or not the
   * future is awaited).
   */
  const following = (
    first: Future<Reply>,
    command: Command,
    slot: number | undefined,
    options: CommandOptions | undefined,
    wanted: ReadPreference | undefined
  ): Future<Reply> => {
    const future = new ClusterFuture(command, first)
    whenSettled(first, (exit) => {
      const failure = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
      if (Option.isNone(failure) || !followed(failure.value)) {
        future.complete(exit)
        return
      }
      future.followed = true
      fork(
        Effect.flatMap(Effect.exit(recover(command, slot, options, wanted, failure.value)), (retried) =>
          Effect.sync(() => future.complete(retried))
        )
      )
    })
    return future
  }

  /**
   * A folded command on its node. A failure is followed like `execute`'s: a `MOVED` or `ASK`
   * is an error reply, never folded, and every attempt folds into a fold of its own.
   */
  const fold = <A>(
    command: Command,
    slot: number | undefined,
    makeFold: () => ReplyFold<A>,
    options: CommandOptions | undefined
  ): Effect.Effect<A, RedisError> => {
    const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
    const attempt = Effect.flatMap(route(slot, wanted), (node) =>
      Folded.executeFolded(node, command, makeFold, options)
    )
    return Effect.catch(attempt, (failure) =>
      Effect.flatMap(retryTarget(slot, wanted, failure), ({ asking, target }) =>
        !asking
          ? Folded.executeFolded(target, command, makeFold, options)
          : // ASKING holds for the next command of its connection: both on a connection of its own.
            target.withExclusive((connection) =>
              Effect.andThen(
                connection.execute(["ASKING"], options),
                Folded.executeFolded({ execute: connection.execute }, command, makeFold, options)
              )
            )
      )
    )
  }

  const service: Service = makeService({
    info,
    execute,
    executeFolded: (command, makeFold, options) =>
      Effect.suspend(() => {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return Effect.fail(slot)
        if (slot === undefined && String(command[0]).toUpperCase() === "GRAPH.LIST") {
          return Effect.flatMap(fanOut(command, options), (reply) =>
            Effect.sync(() => Folded.foldWhole(reply, makeFold()))
          )
        }
        return fold(command, slot, makeFold, options)
      }),
    executeStreamed: (command, options) =>
      Stream.suspend(() => {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return Stream.fail(slot)
        if (slot === undefined && String(command[0]).toUpperCase() === "GRAPH.LIST") {
          return Streamed.fromWhole(fanOut(command, options), options)
        }
        return stream(command, slot, options)
      }),
    executeAll,
    submit: (command, options) =>
      Effect.suspend(() => {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return Effect.fail(slot)
        const wanted = replicaPreference(isRead(command, options?.readOnly), options?.readPreference)
        // Straight to the node's own submit: per-key order is the node's while the slot stays put.
        return Effect.flatMap(route(slot, wanted), (node) =>
          Effect.map(node.submit(command, options), (first) => following(first, command, slot, options, wanted))
        )
      }),
    pipeline,
    withExclusive: (use) => Effect.flatMap(anyNode(), (s) => s.withExclusive(use))
  })
  return service
})
