/**
 * A growable FIFO ring buffer: O(1) push and shift, consumed slots cleared so replies and
 * requests are not retained after they leave (an `Array.shift` is O(n)).
 *
 * @internal
 */
export class RingBuffer<A> {
  private items: Array<A | undefined>
  private head = 0
  private count = 0

  constructor(capacity = 16) {
    this.items = new Array(capacity)
  }

  get length(): number {
    return this.count
  }

  push(item: A): void {
    if (this.count === this.items.length) this.grow()
    this.items[(this.head + this.count) % this.items.length] = item
    this.count++
  }

  peek(): A | undefined {
    return this.count === 0 ? undefined : this.items[this.head]
  }

  shift(): A | undefined {
    if (this.count === 0) return undefined
    const item = this.items[this.head]
    this.items[this.head] = undefined
    this.head = (this.head + 1) % this.items.length
    this.count--
    return item
  }

  /** Removes and returns the newest item. */
  pop(): A | undefined {
    if (this.count === 0) return undefined
    this.count--
    const index = (this.head + this.count) % this.items.length
    const item = this.items[index]
    this.items[index] = undefined
    return item
  }

  /** Removes and returns everything, oldest first. */
  drain(): Array<A> {
    const out: Array<A> = new Array(this.count)
    for (let i = 0; i < out.length; i++) out[i] = this.shift() as A
    return out
  }

  private grow(): void {
    const next: Array<A | undefined> = new Array(this.items.length * 2)
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) % this.items.length]
    this.items = next
    this.head = 0
  }
}
