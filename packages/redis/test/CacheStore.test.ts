/**
 * The client cache's memory on its own: what a racing invalidation or flush keeps out, the
 * bounded invalidation log, the entry bound (second chance), the TTL, multi-key entries and the
 * clock ring's compaction.
 */
import { describe, expect, it } from "@effect/vitest"
import { CacheStore, entryId } from "../src/internal/CacheStore.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

/** Reads `keys` into `id` with nothing in between. */
const read = (store: CacheStore, id: string, keys: ReadonlyArray<string>, value = bytes(id)) =>
  store.complete(store.begin(keys), id, value, 0)

describe("CacheStore", () => {
  it("a read is not stored when one of its keys was invalidated, or the cache flushed, while it was on the wire", () => {
    const store = new CacheStore(100, Number.POSITIVE_INFINITY)
    const a = store.begin(["k"])
    const b = store.begin(["j"])
    store.invalidate("k")
    expect(store.complete(a, "GET k", bytes("old"), 0)).toBe(false)
    expect(store.complete(b, "GET j", bytes("j"), 0)).toBe(true)
    // Nothing on the wire any more: a later read of k is stored again.
    expect(read(store, "GET k", ["k"])).toBe(true)
    const c = store.begin(["x"])
    store.flush()
    expect(store.complete(c, "GET x", bytes("x"), 0)).toBe(false)
    expect(store.size).toBe(0)
    // A failed read stores nothing.
    expect(store.complete(store.begin(["y"]), "GET y", undefined, 0)).toBe(false)
  })

  it("the invalidation log is bounded: past it, the reads then on the wire are refused, later ones are not", () => {
    const store = new CacheStore(10, Number.POSITIVE_INFINITY)
    const before = store.begin(["k"])
    for (let i = 0; i < 5000; i++) store.invalidate(`other:${i}`)
    expect(store.complete(before, "GET k", bytes("v"), 0)).toBe(false)
    expect(read(store, "GET k", ["k"])).toBe(true)
  })

  it("holds at most maxEntries; an entry hit since the hand passed survives", () => {
    const store = new CacheStore(3, Number.POSITIVE_INFINITY)
    for (const key of ["a", "b", "c"]) read(store, key, [key])
    store.lookup("a", 0)
    read(store, "d", ["d"])
    expect(store.size).toBe(3)
    expect(store.evictions).toBe(1)
    expect(store.lookup("a", 0)).toBeDefined()
    expect(store.lookup("b", 0)).toBeUndefined()
    for (let i = 0; i < 100; i++) {
      read(store, `n${i}`, [`n${i}`])
      expect(store.size).toBeLessThanOrEqual(3)
    }
  })

  it("an entry expires after its ttl", () => {
    const store = new CacheStore(10, 50)
    store.complete(store.begin(["k"]), "GET k", bytes("v"), 1000)
    expect(store.lookup("GET k", 1049)).toBeDefined()
    expect(store.lookup("GET k", 1050)).toBeUndefined()
    expect(store.expirations).toBe(1)
    expect(store.size).toBe(0)
  })

  it("an entry of several keys goes with any of them; several entries of one key go together", () => {
    const store = new CacheStore(10, Number.POSITIVE_INFINITY)
    read(store, "MGET a b", ["a", "b"])
    read(store, "GET a", ["a"])
    read(store, "GETRANGE a 0 1", ["a"])
    store.invalidate("b")
    expect(store.lookup("MGET a b", 0)).toBeUndefined()
    expect(store.invalidations).toBe(1)
    store.invalidate("a")
    expect(store.size).toBe(0)
    expect(store.invalidations).toBe(3)
  })

  it("the clock's ring does not grow with invalidated entries", () => {
    const store = new CacheStore(10, Number.POSITIVE_INFINITY)
    for (let i = 0; i < 10_000; i++) {
      read(store, "GET k", ["k"])
      store.invalidate("k")
    }
    expect((store as unknown as { ring: { length: number } }).ring.length).toBeLessThanOrEqual(2 * 10 + 64)
  })

  it("entry ids tell arguments apart exactly", () => {
    expect(entryId("GET", ["GET", "a\u0000s1:b"])).not.toBe(entryId("GET", ["GET", "a", "b"]))
    expect(entryId("GET", ["GET", 1])).toBe(entryId("GET", ["GET", "1"]))
    expect(entryId("GET", ["GET", bytes("k")])).not.toBe(entryId("GET", ["GET", "k"]))
  })
})
