/**
 * A multiplexed client whose number of active engines changes at run time
 * (`connections: { min, max }`): the engine set, its routing, and the moves of keys between
 * engines. `EngineSizer` decides how many engines; this module adds and retires them.
 *
 * - **Spread routing**: an added engine takes new commands at once; a retired one takes no
 *   new command, answers what it owes, then closes.
 * - **Key routing** assigns hash slots to engines by jump consistent hashing, so adding the
 *   (n+1)-th engine moves only the slots it takes (1/(n+1) of them) and retiring the last one
 *   moves only its own. A slot that moves may have commands owed on its old engine, and a
 *   later command of the same key must not overtake them on the new socket. So a move is a
 *   drain: a PING is sent on every engine that gives slots away (its reply means everything
 *   admitted there before it has been answered), and until then the moving slots' new
 *   commands wait in a lane, in order; once every PING is back, the lane places them in the
 *   new engine's queue in that order, then steps aside. Other slots are never held.
 * - A command takes its place on its engine (or in its lane) in the same synchronous step that
 *   routes it, even when the engine's window is full (`Engine.admit`): so the drain PING comes
 *   after every command routed to the old engine before the move, whenever their callers'
 *   fibers next run.
 *
 * @internal
 */
import type { Reply } from "@effect-falkordb/resp/Reply"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as CommandKeys from "../CommandKeys.ts"
import { BatchSpansEngines, RedisError } from "../RedisError.ts"
import type { ResolvedOptions } from "../RedisOptions.ts"
import type { Lane, Router } from "./Strategies.ts"
import { type Engine, makeEngine } from "./Engine.ts"
import { boundUnsentWait, Request } from "./Request.ts"
import { EngineSizer, TICK_MILLIS } from "./EngineSizer.ts"
import type { FullDuplexWindow } from "./FullDuplexWindow.ts"
import { SLOTS } from "./HashSlot.ts"
import { argumentText } from "./Text.ts"

/** The bounds of a self-sizing client. */
export interface Sizing {
  readonly min: number
  readonly max: number
}

/** What a self-sizing client did, for tests and benchmarks. */
export interface ElasticStats {
  /** Engines taking new commands now. */
  readonly active: number
  readonly added: number
  readonly retired: number
  /** Key moves completed (each a drain of the engines that gave slots away). */
  readonly migrations: number
  /** Commands that waited in a lane for their key's old engine to drain. */
  readonly held: number
  /** Engines that could not be added (the connect failed). */
  readonly failedAdds: number
  /** Trials of one engine more or fewer, and how many were kept. */
  readonly trials: number
  readonly kept: number
}

/**
 * The bucket of `slot` among `buckets` by jump consistent hashing (Lamping & Veach), driven
 * by a small PRNG seeded with the slot: growing to n+1 buckets moves a slot only into the new
 * bucket, and shrinking moves only the last bucket's slots.
 */
const jumpBucket = (slot: number, buckets: number): number => {
  let state = Math.imul(slot + 1, 0x9e3779b1) >>> 0
  let bucket = 0
  let next = 0
  while (next < buckets) {
    bucket = next
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
    const random = (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967296
    next = Math.floor((bucket + 1) / random)
  }
  return bucket
}

const tables = new Map<number, Uint16Array>()

/** The engine index of every slot with `buckets` engines (cached: it depends on nothing else). */
export const slotTable = (buckets: number): Uint16Array => {
  let table = tables.get(buckets)
  if (table === undefined) {
    table = new Uint16Array(SLOTS)
    for (let slot = 0; slot < SLOTS; slot++) table[slot] = jumpBucket(slot, buckets)
    tables.set(buckets, table)
  }
  return table
}

interface Turn {
  readonly request: Request<any>
  /** The target's admission of the request, once the lane has placed it there. */
  admitted: Effect.Effect<void, RedisError> | undefined
  /** Its caller stopped waiting (timed out or interrupted) before the lane opened. */
  passed: boolean
  resume: ((effect: Effect.Effect<void>) => void) | undefined
}

/**
 * Where the commands of moving slots go while their old engines drain: each takes its turn
 * here when it is routed (not when its caller's fiber next runs) and, once the lane opens, all
 * are placed in `target`'s queue in that order in one synchronous step (`Engine.admit` takes
 * a request's place when called, even with a full window). The lane then passes everything
 * straight through.
 */
class HeldLane implements Lane {
  readonly target: Engine
  readonly window: FullDuplexWindow
  private open = false
  private turns: Array<Turn> = []
  private readonly onHeld: () => void

  constructor(target: Engine, onHeld: () => void) {
    this.target = target
    this.window = target.window
    this.onHeld = onHeld
  }

  /** Every engine that gave slots away has answered what it owed before the move. */
  openUp(): void {
    this.open = true
    const turns = this.turns
    this.turns = []
    // Every place is taken before any caller resumes: a resumed caller's next command comes after them all.
    for (const turn of turns) if (!turn.passed) turn.admitted = this.target.admit(turn.request)
    for (const turn of turns) {
      const resume = turn.resume
      turn.resume = undefined
      resume?.(Effect.void)
    }
  }

  private pass(turn: Turn): void {
    turn.passed = true
    turn.resume = undefined
    // Placed just as its wait ended: its caller is gone, so it is never sent.
    if (turn.admitted !== undefined) this.target.abandon(turn.request)
  }

  admit(request: Request<any>): Effect.Effect<void, RedisError> {
    if (this.open) return this.target.admit(request)
    this.onHeld()
    const turn: Turn = { request, admitted: undefined, passed: false, resume: undefined }
    this.turns.push(turn)
    const wait = Effect.callback<void>((resume) => {
      if (turn.admitted !== undefined) return resume(Effect.void)
      turn.resume = resume
      return Effect.sync(() => {
        turn.resume = undefined
      })
    })
    const waited = boundUnsentWait(
      wait,
      request,
      `its key was moving to another engine of ${this.target.options.target} and the commands before it were not answered`
    )
    // Timed out or interrupted before its turn: the lane skips it.
    return Effect.andThen(
      Effect.onError(waited, () => Effect.sync(() => this.pass(turn))),
      Effect.suspend(() => turn.admitted!)
    )
  }

  run<A>(request: Request<A>): Effect.Effect<A, RedisError> {
    return Effect.onInterrupt(Effect.andThen(this.admit(request), Deferred.await(request.deferred)), () =>
      Effect.sync(() => this.target.abandon(request))
    )
  }

  start<A>(
    request: Request<A>,
    resume: (effect: Effect.Effect<A, RedisError>) => void
  ): Effect.Effect<void> | undefined {
    if (this.open) return this.target.start(request, resume)
    // `admit` takes the turn now, in this synchronous step.
    resume(this.run(request))
    return undefined
  }
}

/** Waits until everything admitted to `engine` before now has been answered (or failed). */
const drain = (engine: Engine): Effect.Effect<void> =>
  Effect.callback<void>((resume) =>
    engine.start(new Request<Reply>([["PING"]], false, 1, Number.POSITIVE_INFINITY), (outcome) =>
      resume(Effect.ignore(outcome))
    )
  )

/**
 * Round-robin and least-loaded picks over engines that may change between calls. An engine
 * that is reconnecting would hold a command until its server link is back, so one that is
 * online is preferred. An engine that owes the reply of a command its caller gave up on may be
 * busy with it for long (FalkorDB runs one query per connection at a time): next any engine that
 * owes none is preferred, then the one with the fewest commands in flight; ties go to the first
 * engine in the list, so a lightly loaded client keeps using the same socket (its kernel and
 * client state stay warm: one caller on 8 rotating sockets cost more CPU per query than on one)
 * and the others join in only as load grows. Keyless commands under key routing still go round-robin.
 */
export const makePickers = (list: () => ReadonlyArray<Engine>) => {
  let next = 0
  const roundRobin = (): Engine => {
    const engines = list()
    const engine = engines[next % engines.length]
    next = (next + 1) % engines.length
    return engine
  }
  const lighter = (a: Engine, b: Engine): boolean => {
    const online = a.online
    if (online !== b.online) return online
    return (a.overdue === 0) !== (b.overdue === 0) ? a.overdue === 0 : a.window.inUse < b.window.inUse
  }
  const leastLoaded = (): Engine => {
    const engines = list()
    let best = engines[0]
    for (let i = 1; i < engines.length; i++) {
      const engine = engines[i]
      if (lighter(engine, best)) best = engine
    }
    return best
  }
  return { roundRobin, leastLoaded }
}

interface Member {
  readonly engine: Engine
  readonly scope: Scope.Closeable
}

/**
 * Builds the engine set with `sizing.min` engines and, unless `auto` is false (tests that
 * drive `resize` themselves), the sizer fiber.
 */
export const make = Effect.fnUntraced(function* (
  resolved: ResolvedOptions,
  sizing: Sizing,
  routing: "spread" | "key" | undefined,
  auto: boolean = true
) {
  const clientScope = yield* Effect.scope
  const sizer = new EngineSizer(sizing.min, sizing.max)
  const lock = yield* Semaphore.make(1)
  const members: Array<Member> = []
  /** The active engines: routing targets, index = bucket. */
  let engines: Array<Engine> = []
  /** The only engine, when there is one and nothing moves: the routing fast path. */
  let only: Engine | undefined
  let table = slotTable(1)
  /** Per slot, the lane of a slot that is moving; undefined when nothing moves. */
  let holding: Array<HeldLane | undefined> | undefined
  let routed = 0
  let added = 0
  let retired = 0
  let migrations = 0
  let held = 0
  let failedAdds = 0

  const refreshOnly = () => {
    only = engines.length === 1 && holding === undefined ? engines[0] : undefined
  }

  const open = Effect.gen(function* () {
    const scope = yield* Scope.fork(clientScope, "sequential")
    const engine = yield* makeEngine(resolved).pipe(
      Scope.provide(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    // Picked by load among the others, which compares their overdue replies.
    engine.countsOverdue = true
    members.push({ engine, scope })
    return engine
  })

  for (let i = 0; i < sizing.min; i++) engines.push(yield* open)
  table = slotTable(engines.length)
  refreshOnly()

  const { roundRobin, leastLoaded } = makePickers(() => engines)
  const laneOf = (slot: number): Lane => holding?.[slot] ?? engines[table[slot]]

  const router: Router =
    routing !== "key"
      ? {
          forCommand: () => {
            routed++
            return only ?? leastLoaded()
          },
          forBatch: (commands) => {
            routed += commands.length
            return only ?? leastLoaded()
          }
        }
      : {
          forCommand: (command, readOnly) => {
            routed++
            if (only !== undefined) return only
            if (readOnly) return leastLoaded()
            const slot = CommandKeys.firstKeySlot(command)
            return slot === undefined ? roundRobin() : laneOf(slot)
          },
          forBatch: (commands, readOnly) => {
            routed += commands.length
            if (only !== undefined) return only
            if (readOnly) return leastLoaded()
            let chosen: Lane | undefined
            let spans = false
            const placements: Array<string> = []
            for (const command of commands) {
              const slot = CommandKeys.firstKeySlot(command)
              if (slot === undefined) continue
              const lane = laneOf(slot)
              const engine = lane instanceof HeldLane ? lane.target : lane
              placements.push(
                `"${argumentText(CommandKeys.firstKey(command))}" -> engine ${engines.indexOf(engine as Engine)}`
              )
              // A moving slot's lane goes to the same engine as the slots that stay there; the
              // lane keeps the moving key's order, and the staying keys' commands only come later.
              if (chosen === undefined) chosen = lane
              else if (chosen !== lane) {
                const chosenEngine = chosen instanceof HeldLane ? chosen.target : chosen
                if (chosenEngine !== engine) spans = true
                else if (lane instanceof HeldLane) chosen = lane
              }
            }
            if (spans) {
              return new RedisError({
                reason: new BatchSpansEngines({
                  message: `the batch's keys map to different engines (${placements.join(", ")}); keep them on one engine with a hash tag such as {user1}:a and {user1}:b, or pass { exclusiveFallback: true }`
                })
              })
            }
            return chosen ?? roundRobin()
          }
        }

  /** Moves to `nextEngines` (key routing: drains what moves first). */
  const switchTo = (nextEngines: Array<Engine>) =>
    Effect.gen(function* () {
      const before = engines
      if (routing !== "key") {
        engines = nextEngines
        refreshOnly()
        return
      }
      const nextTable = slotTable(nextEngines.length)
      const lanes = new Map<Engine, HeldLane>()
      const sources = new Set<Engine>()
      const moving: Array<HeldLane | undefined> = new Array(SLOTS)
      for (let slot = 0; slot < SLOTS; slot++) {
        const from = before[table[slot]]
        const to = nextEngines[nextTable[slot]]
        if (from === to) continue
        sources.add(from)
        let lane = lanes.get(to)
        if (lane === undefined) {
          lane = new HeldLane(to, () => held++)
          lanes.set(to, lane)
        }
        moving[slot] = lane
      }
      // One synchronous step: every later command sees the new assignment.
      holding = moving
      table = nextTable
      engines = nextEngines
      refreshOnly()
      yield* Effect.forEach(sources, drain, { concurrency: "unbounded", discard: true })
      // The held commands take their places in their new engines, in order; the lanes then pass
      // everything through, so routing may skip them from the same step on.
      for (const lane of lanes.values()) lane.openUp()
      holding = undefined
      refreshOnly()
      migrations++
    })

  const grow = Effect.gen(function* () {
    const opened = yield* Effect.exit(open)
    if (Exit.isFailure(opened)) {
      failedAdds++
      return
    }
    added++
    yield* switchTo([...engines, opened.value])
  })

  const shrink = Effect.gen(function* () {
    const leaving = engines[engines.length - 1]
    yield* switchTo(engines.slice(0, -1))
    // Nothing new reaches it now: let what it owes finish (bounded), then close it.
    yield* Effect.timeoutOption(leaving.window.awaitIdle, resolved.closeTimeout)
    const index = members.findIndex((member) => member.engine === leaving)
    const [member] = members.splice(index, 1)
    yield* Scope.close(member.scope, Exit.void)
    retired++
  })

  /** Adds or retires engines, one at a time, until `target` are active (within the bounds). */
  const resize = (target: number): Effect.Effect<void> =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        const wanted = Math.max(sizing.min, Math.min(sizing.max, target))
        while (engines.length !== wanted) {
          const before = engines.length
          yield* engines.length < wanted ? grow : shrink
          if (engines.length === before) return
        }
      })
    )

  if (auto) {
    let lastRouted = 0
    const tick = Effect.suspend(() => {
      let inUse = 0
      let waiting = 0
      for (const engine of engines) {
        inUse += engine.window.inUse
        waiting += engine.window.waiting
      }
      const sample = { routed: routed - lastRouted, inUse, waiting }
      lastRouted = routed
      const wanted = sizer.tick(sample, engines.length)
      if (wanted === undefined) return Effect.void
      return Effect.andThen(
        resize(wanted),
        Effect.sync(() => {
          sizer.applied(wanted, engines.length)
          // The change's own duration is not a tick of the new size.
          lastRouted = routed
        })
      )
    })
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(TICK_MILLIS), tick)))
  }

  const stats = (): ElasticStats => ({
    active: engines.length,
    added,
    retired,
    migrations,
    held,
    failedAdds,
    trials: sizer.trials,
    kept: sizer.kept
  })
  return {
    router,
    resize,
    stats,
    /** The active engines now. */
    engines: (): ReadonlyArray<Engine> => engines
  }
})
