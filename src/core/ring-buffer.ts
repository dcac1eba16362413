/**
 * @module ring-buffer — a growable FIFO that clears every popped slot and shrinks when mostly empty.
 *
 * The storage under the work queue and under each informer handler's notification buffer. client-go
 * once kept popped items reachable through a slice's backing array (kubernetes/kubernetes#105031);
 * here a popped slot is overwritten with `undefined` at once, and the backing array halves whenever
 * it is at most a quarter full, so a burst of a million items leaves neither the items nor a
 * million-slot array behind.
 */

/**
 * Capacity a {@link RingBuffer} starts with and never shrinks below: 16 slots (128 bytes of pointers)
 * is less than one object header per queued item and saves the first four doublings. Our choice.
 */
export const RING_BUFFER_MIN_CAPACITY = 16

/**
 * A first-in first-out buffer of `T` with amortised O(1) `push` and `shift`.
 *
 * Guarantees: `shift` returns items in `push` order; a shifted item is no longer referenced by the
 * buffer; capacity is a power of two in [{@link RING_BUFFER_MIN_CAPACITY}, 4 × length] once the
 * buffer has shrunk after a burst (it halves when at most a quarter full, doubles when full).
 *
 * Does not guarantee: anything about `undefined` items — `shift` on an empty buffer also returns
 * `undefined`, so check {@link RingBuffer.length} when `T` may be `undefined`. Not thread-safe (there
 * are no threads; do not share across workers).
 *
 * @example
 * const fifo = new RingBuffer<string>()
 * fifo.push('a')
 * fifo.push('b')
 * fifo.shift() // 'a'
 * fifo.length // 1
 */
export class RingBuffer<T> {
  /** Backing store; slots outside [head, head + length) (mod capacity) are always `undefined`. */
  #slots: (T | undefined)[] = newSlots(RING_BUFFER_MIN_CAPACITY)
  /** Index of the oldest item. */
  #head = 0
  #length = 0
  /** capacity − 1; capacity is a power of two, so `& mask` is the modulo. */
  #mask = RING_BUFFER_MIN_CAPACITY - 1

  /** Number of items held. */
  get length(): number {
    return this.#length
  }

  /** Number of slots in the backing array (for memory tests and diagnostics). */
  get capacity(): number {
    return this.#mask + 1
  }

  /** Appends `item` at the back. */
  push(item: T): void {
    if (this.#length > this.#mask) this.#resize((this.#mask + 1) * 2)
    this.#slots[(this.#head + this.#length) & this.#mask] = item
    this.#length++
  }

  /** Removes and returns the oldest item, or `undefined` when empty. Its slot is cleared. */
  shift(): T | undefined {
    if (this.#length === 0) return undefined
    const head = this.#head
    const item = this.#slots[head]
    this.#slots[head] = undefined
    this.#head = (head + 1) & this.#mask
    this.#length--
    const capacity = this.#mask + 1
    if (capacity > RING_BUFFER_MIN_CAPACITY && this.#length <= capacity >>> 2) this.#resize(capacity >>> 1)
    return item
  }

  /** The oldest item without removing it, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#length === 0 ? undefined : this.#slots[this.#head]
  }

  /** Removes every item and returns to the minimum capacity. */
  clear(): void {
    this.#slots = newSlots(RING_BUFFER_MIN_CAPACITY)
    this.#head = 0
    this.#length = 0
    this.#mask = RING_BUFFER_MIN_CAPACITY - 1
  }

  /** The items, oldest first, as a new array. */
  toArray(): T[] {
    const out = new Array<T>(this.#length)
    for (let i = 0; i < this.#length; i++) out[i] = this.#slots[(this.#head + i) & this.#mask] as T
    return out
  }

  #resize(capacity: number): void {
    const slots = newSlots<T>(capacity)
    for (let i = 0; i < this.#length; i++) slots[i] = this.#slots[(this.#head + i) & this.#mask]
    this.#slots = slots
    this.#head = 0
    this.#mask = capacity - 1
  }
}

/** A packed array of `capacity` undefined slots (packed arrays stay on V8's fast path). */
function newSlots<T>(capacity: number): (T | undefined)[] {
  return new Array<T | undefined>(capacity).fill(undefined)
}
