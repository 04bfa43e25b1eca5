/**
 * Redis Cluster: a slot map from `CLUSTER SLOTS`, one client of the chosen strategy per
 * primary, commands routed by the hash slot of their first key, `MOVED` / `ASK` followed once,
 * pipelines split per node and reassembled in order, cross-slot commands refused before sending.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as CommandKeys from "../CommandKeys.ts"
import type { ConnectionInfo, RedisConnection } from "../RedisConnection.ts"
import { CrossSlot, fromErrorReply, Offline, RedisError } from "../RedisError.ts"
import { hashSlot } from "./HashSlot.ts"

type Service = RedisConnection["Service"]

export interface HostPort {
  readonly host: string
  readonly port: number
}

const label = (a: HostPort) => `${a.host}:${a.port}`

/** Slot → primary address, from a `CLUSTER SLOTS` reply. */
export const parseSlots = (reply: Reply): Array<HostPort | undefined> | string => {
  if (!Array.isArray(reply)) return "CLUSTER SLOTS did not answer an array"
  const map: Array<HostPort | undefined> = new Array(16384).fill(undefined)
  for (const range of reply as ReadonlyArray<ReadonlyArray<Reply>>) {
    const from = Number(range[0])
    const to = Number(range[1])
    const node = range[2] as ReadonlyArray<Reply> | undefined
    if (node === undefined) continue
    const host = replyToString(node[0]!) ?? ""
    const port = Number(node[1])
    for (let slot = from; slot <= to; slot++) map[slot] = { host, port }
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

const redirection = (reply: Reply): { readonly kind: "MOVED" | "ASK"; readonly to: HostPort } | undefined => {
  if (!(reply instanceof ErrorReply) || (reply.code !== "MOVED" && reply.code !== "ASK")) return undefined
  // "MOVED 3999 127.0.0.1:6381"
  const target = reply.message.split(" ")[2] ?? ""
  const colon = target.lastIndexOf(":")
  return { kind: reply.code, to: { host: target.slice(0, colon), port: Number(target.slice(colon + 1)) } }
}

/**
 * The cluster client. `connect(address)` builds the chosen strategy on one node (in the client
 * scope); `seeds` are asked for the slot map in turn.
 */
export const makeCluster = Effect.fnUntraced(function* (
  seeds: ReadonlyArray<HostPort>,
  connect: (address: HostPort) => Effect.Effect<Service, RedisError, Scope.Scope>
) {
  const scope = yield* Effect.scope
  const nodes = new Map<string, Service>()
  let slots: Array<HostPort | undefined> = []
  const node = (address: HostPort): Effect.Effect<Service, RedisError> =>
    Effect.suspend(() => {
      const known = nodes.get(label(address))
      if (known !== undefined) return Effect.succeed(known)
      return Effect.tap(Scope.provide(connect(address), scope), (service) =>
        Effect.sync(() => nodes.set(label(address), service))
      )
    })
  const refresh: Effect.Effect<void, RedisError> = Effect.gen(function* () {
    const tried: Array<string> = []
    const candidates = [...nodes.keys()].map((key) => {
      const colon = key.lastIndexOf(":")
      return { host: key.slice(0, colon), port: Number(key.slice(colon + 1)) }
    })
    for (const address of [...seeds, ...candidates]) {
      const exit = yield* Effect.exit(
        Effect.flatMap(node(address), (service) => service.execute(["CLUSTER", "SLOTS"], { timeout: 2_000 }))
      )
      if (exit._tag === "Failure") {
        tried.push(`${label(address)}: failed`)
        continue
      }
      const parsed = parseSlots(exit.value)
      if (typeof parsed === "string") {
        tried.push(`${label(address)}: ${parsed}`)
        continue
      }
      slots = parsed
      return
    }
    return yield* new RedisError({
      reason: new Offline({ message: `no cluster node answered CLUSTER SLOTS; tried ${tried.join("; ")}` })
    })
  })
  yield* refresh
  const info: ConnectionInfo = {
    ...[...nodes.values()][0]!.info,
    target: `cluster:${seeds.map(label).join(",")}`
  }

  const forSlot = (slot: number): Effect.Effect<Service, RedisError> => {
    const address = slots[slot]
    if (address === undefined) {
      return Effect.fail(
        new RedisError({ reason: new Offline({ message: `no cluster node serves slot ${slot} (CLUSTERDOWN?)` }) })
      )
    }
    return node(address)
  }
  const anyNode = (): Effect.Effect<Service, RedisError> => {
    const first = slots.find((a) => a !== undefined)
    return first === undefined ? refreshThen(() => anyNode()) : node(first)
  }
  const refreshThen = <A>(next: () => Effect.Effect<A, RedisError>) => Effect.andThen(refresh, Effect.suspend(next))

  /** Runs a command on its node; follows one MOVED (after refreshing the map) and one ASK. */
  const run = (command: Command, slot: number | undefined, options: Parameters<Service["execute"]>[1]) =>
    Effect.gen(function* () {
      const service = slot === undefined ? yield* anyNode() : yield* forSlot(slot)
      const first = yield* Effect.exit(service.execute(command, options))
      if (Exit.isSuccess(first)) return first.value
      const error = Cause.findErrorOption(first.cause)
      if (Option.isNone(error)) return yield* first
      const failure = error.value
      if (failure.reason._tag === "Timeout" && !failure.written) {
        // Not sent in time: the node may be down; re-read the map for the next call.
        yield* Effect.ignore(refresh)
        return yield* first
      }
      if (failure.reason._tag === "Offline" || failure.reason._tag === "ConnectionLost") {
        // The node may be gone (a failover): re-read the map; a command never sent goes to the
        // slot's owner now, a written one is never re-sent.
        yield* Effect.ignore(refresh)
        if (failure.written || slot === undefined) return yield* first
        return yield* Effect.flatMap(forSlot(slot), (target) => target.execute(command, options))
      }
      if (failure.reason._tag !== "Reply") return yield* first
      const code = failure.reason.code
      if (code !== "MOVED" && code !== "ASK") return yield* first
      const moved = redirection(new ErrorReply(failure.reason.serverMessage))
      if (moved === undefined) return yield* first
      if (moved.kind === "MOVED") {
        // The slot moved for good: the node did not run the command; refresh and retry once.
        yield* Effect.ignore(refresh)
        return yield* Effect.flatMap(node(moved.to), (target) => target.execute(command, options))
      }
      // ASK: this one command on the importing node, after ASKING on the same connection.
      const target = yield* node(moved.to)
      // ASKING holds for the next command of its connection only; a connection of its own keeps
      // it away from the shared pipe (ASK happens only while a slot migrates).
      const replies = yield* target.withExclusive((connection) => connection.pipeline([["ASKING"], command], options))
      const reply = replies[1]!
      if (reply instanceof ErrorReply) return yield* fromErrorReply(reply, String(command[0]).toUpperCase())
      return reply
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
    for (const address of slots) if (address !== undefined) seen.set(label(address), address)
    return [...seen.values()]
  }

  /** GRAPH.LIST on every primary, the names merged (each graph lives on one node). */
  const fanOut = (command: Command, options: Parameters<Service["execute"]>[1]) =>
    Effect.map(
      Effect.forEach(primaries(), (address) => Effect.flatMap(node(address), (s) => s.execute(command, options)), {
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
      for (const command of commands) {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return yield* slot
        slotOfIndex.push(slot)
        if (String(command[0]).toUpperCase() === "MULTI") transaction = true
      }
      const firstKeyed = slotOfIndex.find((slot) => slot !== undefined)
      if (transaction && slotOfIndex.some((slot) => slot !== undefined && slot !== firstKeyed)) {
        return yield* new RedisError({
          reason: new CrossSlot({
            message: "a batch with MULTI must keep every key in one slot (a transaction runs on one node)"
          })
        })
      }
      const groups = new Map<string, { address: HostPort | undefined; indices: Array<number> }>()
      let previous = firstKeyed
      for (let i = 0; i < commands.length; i++) {
        const slot = slotOfIndex[i] ?? previous
        if (slotOfIndex[i] !== undefined) previous = slotOfIndex[i]
        const address = slot === undefined ? primaries()[0] : slots[slot]
        const key = address === undefined ? "?" : label(address)
        const group = groups.get(key) ?? { address, indices: [] }
        group.indices.push(i)
        groups.set(key, group)
      }
      const out: Array<Reply> = new Array(commands.length)
      yield* Effect.forEach(
        [...groups.values()],
        (group) =>
          Effect.gen(function* () {
            if (group.address === undefined) {
              return yield* new RedisError({ reason: new Offline({ message: "no cluster node serves these slots" }) })
            }
            const service = yield* node(group.address)
            const replies = yield* service.pipeline(
              group.indices.map((i) => commands[i]!),
              options
            )
            for (let j = 0; j < replies.length; j++) {
              const reply = replies[j]!
              const index = group.indices[j]!
              // A redirected command did not run: follow it on its own (not inside a transaction).
              out[index] =
                redirection(reply) === undefined || transaction
                  ? reply
                  : yield* Effect.orElseSucceed(execute(commands[index]!, options), () => reply)
            }
          }),
        { concurrency: "unbounded" }
      )
      return out
    })

  const service: Service = {
    info,
    execute,
    submit: (command, options) =>
      Effect.suspend(() => {
        const slot = commandSlot(command)
        if (slot instanceof RedisError) return Effect.fail(slot)
        return Effect.flatMap(slot === undefined ? anyNode() : forSlot(slot), (s) => s.submit(command, options))
      }),
    pipeline,
    withExclusive: (use) => Effect.flatMap(anyNode(), (s) => s.withExclusive(use))
  }
  return service
})
