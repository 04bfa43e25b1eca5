/**
 * The memory of `RedisClientCache`: bounded entries keyed by command and arguments, an index
 * from Redis keys to the entries that read them, and the in-flight markers that keep a reply
 * which raced with an invalidation out of the cache.
 *
 * - An entry is stored only when no invalidation of any of its keys, and no flush, happened
 *   while its read was on the wire (`begin` … `complete`): the reply may predate the write the
 *   invalidation announced, and the invalidation has already been spent.
 * - The bound is `maxEntries`, kept with a second-chance (CLOCK) policy: a hit only sets a
 *   bit, and the oldest entry whose bit is clear goes first (a hit costs no reordering).
 * - Redis keys are compared as UTF-8 text: two binary keys that decode alike share an index
 *   slot, which can only evict too much, never too little.
 *
 * @internal
 */
import type { Argument } from "@effect-falkordb/resp/Encoder"
import { AttributedReply, MapReply, PushReply, type Reply, SetReply, VerbatimReply } from "@effect-falkordb/resp/Reply"

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })
const latin1 = new TextDecoder("latin1")

/** A Redis key as index text (see the module note on binary keys). */
export const keyText = (key: Argument | Reply): string =>
  typeof key === "string" ? key : key instanceof Uint8Array ? utf8.decode(key) : String(key)

/**
 * The entry id of a command: its upper-case name, then each argument with its length, so no
 * two different commands share an id. Numbers are sent as their decimal text, so they count as
 * that text; binary arguments keep their exact bytes.
 */
export const entryId = (name: string, command: ReadonlyArray<Argument>): string => {
  let id = name
  for (let i = 1; i < command.length; i++) {
    const argument = command[i]!
    if (argument instanceof Uint8Array) id += `\u0000b${argument.length}:${latin1.decode(argument)}`
    else {
      const text = typeof argument === "string" ? argument : String(argument)
      id += `\u0000s${text.length}:${text}`
    }
  }
  return id
}

/** A copy that shares no bytes with the socket chunk the reply was decoded from. */
export const detach = (reply: Reply): Reply => {
  if (reply === null || typeof reply !== "object") return reply
  if (reply instanceof Uint8Array) return reply.slice()
  if (Array.isArray(reply)) return reply.map(detach)
  if (reply instanceof MapReply) return new MapReply(reply.flat.map(detach))
  if (reply instanceof SetReply) return new SetReply(reply.items.map(detach))
  if (reply instanceof VerbatimReply) return new VerbatimReply(reply.format, reply.text.slice())
  if (reply instanceof AttributedReply) return new AttributedReply(reply.attributes, detach(reply.value))
  if (reply instanceof PushReply) return new PushReply(reply.items.map(detach))
  return reply
}

/** @internal */
export class Entry {
  readonly value: Reply
  readonly keys: ReadonlyArray<string>
  readonly expires: number
  /** Hit since the clock hand last passed (second chance). */
  used = false
  constructor(value: Reply, keys: ReadonlyArray<string>, expires: number) {
    this.value = value
    this.keys = keys
    this.expires = expires
  }
}

/** Reads of one key on the wire; `generation` moves with every invalidation of the key. */
class Flight {
  readers = 0
  generation = 0
}

/** What a read saw when it went out: the epoch and the generation of each of its keys. */
export interface Ticket {
  readonly epoch: number
  readonly keys: ReadonlyArray<string>
  readonly flights: ReadonlyArray<Flight>
  readonly generations: ReadonlyArray<number>
}

/** @internal */
export class CacheStore {
  private readonly entries = new Map<string, Entry>()
  private readonly byKey = new Map<string, Set<string>>()
  private readonly flights = new Map<string, Flight>()
  /** Moves with every flush: a read that began in an older epoch is not stored. */
  private epoch = 0
  hits = 0
  misses = 0
  evictions = 0
  expirations = 0
  invalidations = 0
  flushes = 0
  readonly maxEntries: number
  /** Milliseconds an entry may be served; `Infinity` for no limit. */
  readonly ttl: number

  constructor(maxEntries: number, ttl: number) {
    this.maxEntries = maxEntries
    this.ttl = ttl
  }

  get size(): number {
    return this.entries.size
  }

  /** The live entry of `id`, or `undefined` (an expired one is dropped). */
  lookup(id: string, now: number): Entry | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    if (entry.expires <= now) {
      this.remove(id, entry)
      this.expirations++
      return undefined
    }
    entry.used = true
    return entry
  }

  /** A read of `keys` goes on the wire. */
  begin(keys: ReadonlyArray<string>): Ticket {
    const flights: Array<Flight> = []
    const generations: Array<number> = []
    for (const key of keys) {
      let flight = this.flights.get(key)
      if (flight === undefined) {
        flight = new Flight()
        this.flights.set(key, flight)
      }
      flight.readers++
      flights.push(flight)
      generations.push(flight.generation)
    }
    return { epoch: this.epoch, keys, flights, generations }
  }

  /**
   * The read of `ticket` is over: its reply (`value`, or `undefined` when it failed) is stored
   * under `id` unless a flush or an invalidation of one of its keys happened meanwhile.
   * Returns whether it was stored.
   */
  complete(ticket: Ticket, id: string, value: Reply | undefined, now: number): boolean {
    let fresh = ticket.epoch === this.epoch
    for (let i = 0; i < ticket.flights.length; i++) {
      const flight = ticket.flights[i]!
      if (flight.generation !== ticket.generations[i]) fresh = false
      if (--flight.readers === 0 && this.flights.get(ticket.keys[i]!) === flight) this.flights.delete(ticket.keys[i]!)
    }
    if (!fresh || value === undefined) return false
    this.insert(id, new Entry(detach(value), ticket.keys, now + this.ttl))
    return true
  }

  private insert(id: string, entry: Entry): void {
    const previous = this.entries.get(id)
    if (previous !== undefined) this.remove(id, previous)
    else if (this.entries.size >= this.maxEntries) this.evictOne()
    this.entries.set(id, entry)
    for (const key of entry.keys) {
      let ids = this.byKey.get(key)
      if (ids === undefined) {
        ids = new Set()
        this.byKey.set(key, ids)
      }
      ids.add(id)
    }
  }

  /** Second chance: the oldest entry not hit since the hand last passed it goes. */
  private evictOne(): void {
    for (const [id, entry] of this.entries) {
      if (entry.used) {
        // Moved to the young end with its bit cleared; every entry is passed at most once.
        entry.used = false
        this.entries.delete(id)
        this.entries.set(id, entry)
        continue
      }
      this.remove(id, entry)
      this.evictions++
      return
    }
  }

  private remove(id: string, entry: Entry): void {
    this.entries.delete(id)
    for (const key of entry.keys) {
      const ids = this.byKey.get(key)
      if (ids === undefined) continue
      ids.delete(id)
      if (ids.size === 0) this.byKey.delete(key)
    }
  }

  /** The key changed (a server invalidation, or a write of this client): its entries go, and reads of it on the wire will not be stored. */
  invalidate(key: string): void {
    const flight = this.flights.get(key)
    if (flight !== undefined) flight.generation++
    const ids = this.byKey.get(key)
    if (ids === undefined) return
    this.byKey.delete(key)
    for (const id of ids) {
      const entry = this.entries.get(id)
      if (entry === undefined) continue
      this.remove(id, entry)
      this.invalidations++
    }
  }

  /** Everything goes, and no read on the wire now will be stored. */
  flush(): void {
    this.epoch++
    this.flushes++
    this.entries.clear()
    this.byKey.clear()
  }
}
