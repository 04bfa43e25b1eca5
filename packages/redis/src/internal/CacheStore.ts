/**
 * The memory of `RedisClientCache`: bounded entries keyed by command and arguments, an index
 * from Redis keys to the entries that read them, and the in-flight markers that keep a reply
 * which raced with an invalidation out of the cache.
 *
 * - An entry is stored only when no invalidation of any of its keys, and no flush, happened
 *   while its read was on the wire (`begin` … `complete`): the reply may predate the write the
 *   invalidation announced, and the invalidation has already been spent. Every invalidation
 *   moves a sequence number; while reads are on the wire the sequence number of each key's last
 *   invalidation is logged, so a read that saw no invalidation at all costs no lookup, and the
 *   log is dropped whenever no read is on the wire (bounded: an overflow refuses the stores of
 *   the reads then on the wire instead of growing).
 * - The bound is `maxEntries`, kept with a second-chance (CLOCK) policy: a hit only sets a
 *   bit, and the oldest entry whose bit is clear goes first (a hit costs no reordering).
 * - Redis keys are compared as UTF-8 text: two binary keys that decode alike share an index
 *   slot, which can only evict too much, never too little.
 *
 * @internal
 */
import { decodeUtf8 } from "@effect-falkordb/resp/Text"
import type { Argument } from "@effect-falkordb/resp/Encoder"
import { AttributedReply, MapReply, PushReply, type Reply, SetReply, VerbatimReply } from "@effect-falkordb/resp/Reply"
import { RingBuffer } from "./RingBuffer.ts"

const latin1 = new TextDecoder("latin1")

/** A Redis key as index text (see the module note on binary keys). */
export const keyText = (key: Argument | Reply): string =>
  typeof key === "string" ? key : key instanceof Uint8Array ? decodeUtf8(key) : String(key)

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
  readonly id: string
  readonly value: Reply
  readonly keys: ReadonlyArray<string>
  readonly expires: number
  /** Hit since the clock hand last passed (second chance). */
  used = false
  /** Still in the cache (the clock's ring drops removed entries lazily). */
  live = true
  constructor(id: string, value: Reply, keys: ReadonlyArray<string>, expires: number) {
    this.id = id
    this.value = value
    this.keys = keys
    this.expires = expires
  }
}

/** What a read saw when it went out: the epoch and the invalidation sequence number. */
export interface Ticket {
  readonly epoch: number
  readonly seq: number
  readonly keys: ReadonlyArray<string>
}

/** @internal */
export class CacheStore {
  private readonly entries = new Map<string, Entry>()
  /** Redis key → the id (or ids) of the entries that read it. */
  private readonly byKey = new Map<string, string | Set<string>>()
  /** Entries oldest first, for the clock hand; removed ones are skipped when met. */
  private ring = new RingBuffer<Entry>()
  /** Moves with every flush: a read that began in an older epoch is not stored. */
  private epoch = 0
  /** Moves with every invalidation of a key. */
  private seq = 0
  /** Reads on the wire. */
  private reading = 0
  /** Key → `seq` of its last invalidation, kept only while reads are on the wire. */
  private readonly invalidatedAt = new Map<string, number>()
  /** Reads that began before it are not stored (the log overflowed while they were on the wire). */
  private floor = 0
  private readonly logLimit: number
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
    this.logLimit = Math.max(4096, maxEntries)
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
    this.reading++
    return { epoch: this.epoch, seq: this.seq, keys }
  }

  /**
   * The read of `ticket` is over: its reply (`value`, or `undefined` when it failed) is stored
   * under `id` unless a flush or an invalidation of one of its keys happened meanwhile.
   * Returns whether it was stored.
   */
  complete(ticket: Ticket, id: string, value: Reply | undefined, now: number): boolean {
    this.reading--
    let fresh = value !== undefined && ticket.epoch === this.epoch && ticket.seq >= this.floor
    if (fresh && ticket.seq !== this.seq) {
      for (const key of ticket.keys) {
        const at = this.invalidatedAt.get(key)
        if (at !== undefined && at > ticket.seq) {
          fresh = false
          break
        }
      }
    }
    // No read left to ask: what the log knows concerns nobody any more.
    if (this.reading === 0 && this.invalidatedAt.size > 0) this.invalidatedAt.clear()
    if (!fresh) return false
    this.insert(new Entry(id, detach(value!), ticket.keys, now + this.ttl))
    return true
  }

  private insert(entry: Entry): void {
    const id = entry.id
    const previous = this.entries.get(id)
    if (previous !== undefined) this.remove(id, previous)
    else if (this.entries.size >= this.maxEntries) this.evictOne()
    this.entries.set(id, entry)
    this.ring.push(entry)
    // Invalidated entries wait in the ring for the hand: compact before they outnumber the live ones.
    if (this.ring.length > 2 * this.maxEntries + 64) {
      const ring = new RingBuffer<Entry>(this.entries.size + 16)
      for (const held of this.ring.drain()) if (held.live) ring.push(held)
      this.ring = ring
    }
    for (const key of entry.keys) {
      const ids = this.byKey.get(key)
      if (ids === undefined) this.byKey.set(key, id)
      else if (typeof ids === "string") {
        if (ids !== id) this.byKey.set(key, new Set([ids, id]))
      } else ids.add(id)
    }
  }

  /** Second chance: the oldest entry not hit since the hand last passed it goes. */
  private evictOne(): void {
    for (;;) {
      const entry = this.ring.shift()
      if (entry === undefined) return
      if (!entry.live) continue
      if (entry.used) {
        // Back to the young end with its bit cleared: every entry is passed at most once.
        entry.used = false
        this.ring.push(entry)
        continue
      }
      this.remove(entry.id, entry)
      this.evictions++
      return
    }
  }

  private remove(id: string, entry: Entry): void {
    entry.live = false
    this.entries.delete(id)
    for (const key of entry.keys) {
      const ids = this.byKey.get(key)
      if (ids === undefined) continue
      if (typeof ids === "string") {
        if (ids === id) this.byKey.delete(key)
      } else {
        ids.delete(id)
        if (ids.size === 0) this.byKey.delete(key)
      }
    }
  }

  /** The key changed (a server invalidation, or a write of this client): its entries go, and reads of it on the wire will not be stored. */
  invalidate(key: string): void {
    this.seq++
    if (this.reading > 0) {
      if (this.invalidatedAt.size >= this.logLimit && !this.invalidatedAt.has(key)) {
        // Too many keys to remember: the reads on the wire now will not be stored.
        this.invalidatedAt.clear()
        this.floor = this.seq
      } else this.invalidatedAt.set(key, this.seq)
    }
    const ids = this.byKey.get(key)
    if (ids === undefined) return
    this.byKey.delete(key)
    for (const id of typeof ids === "string" ? [ids] : ids) {
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
    this.ring = new RingBuffer()
  }
}
