/**
 * @module work-queue — the fair, deduplicating FIFO that hands each item to one worker at a time.
 *
 * Semantics are client-go's `util/workqueue/queue.go` (`Typed[T]`): a `dirty` set of items that need
 * processing, a `processing` set of items handed out and not yet done, and a FIFO of items ready to
 * hand out. `get` is a promise instead of a blocking call; waiters are served in arrival order.
 */
import type { Clock } from '../core/clock.ts'
import { RingBuffer } from '../core/ring-buffer.ts'
import { type QueueMetrics, QueueMetricsRecorder } from './metrics.ts'

/**
 * What {@link WorkQueue.get} resolves to: an item to process, or the news that the queue is shut
 * down and empty (the worker should exit). Discriminated by `shutdown`.
 *
 * @example
 * const next = await q.get()
 * if (next.shutdown) return
 * use(next.item) // typed T here
 */
export type GetResult<T> = { readonly shutdown: false; readonly item: T } | { readonly shutdown: true }

/** The result every `get` resolves to once the queue is shut down and empty. */
const SHUT_DOWN: GetResult<never> = Object.freeze({ shutdown: true })

/**
 * A work queue (client-go `TypedInterface[T]`). Items are compared like `Map` keys (SameValueZero):
 * use strings such as `namespace/name`, or the very same object for each logical item.
 *
 * Guarantees:
 * - *Stingy*: an item added while it waits is stored once; an item is never queued twice.
 * - *One worker per item*: an item added while it is being processed is not handed to a second
 *   worker; it is parked and queued again (at the back) when `done(item)` is called.
 * - *Fair*: ready items are handed out in the order they became ready; pending `get` calls are served
 *   in the order they were made.
 * - After `shutDown`, adds are ignored, but items already queued are still handed out; `get` then
 *   resolves `{ shutdown: true }` once the queue is empty, and every pending `get` resolves at once.
 *
 * Does not guarantee: that a worker calls `done` (if it does not, the item is never handed out again
 * and `shutDownWithDrain` never resolves); ordering between an item parked during processing and items
 * added after it was parked (it re-enters at the back on `done`).
 *
 * @example
 * const q = createWorkQueue<string>()
 * q.add('default/web')
 * for (;;) {
 *   const next = await q.get()
 *   if (next.shutdown) break
 *   try { await reconcile(next.item) } finally { q.done(next.item) }
 * }
 */
export interface WorkQueue<T> {
  /** Marks `item` as needing processing. Ignored after shutdown; a no-op if it already waits. */
  add(item: T): void
  /** Number of items ready to hand out (excludes items being processed and items parked). */
  len(): number
  /**
   * Waits for an item and marks it as being processed. Resolves `{ shutdown: true }` when the queue
   * is shut down and no item is left.
   */
  get(): Promise<GetResult<T>>
  /** Marks `item` as processed. If it was added again meanwhile, it is queued again. Works after shutdown. */
  done(item: T): void
  /** Stops accepting adds and wakes every pending `get`. Idempotent. Releases a pending drain. */
  shutDown(): void
  /**
   * Like {@link WorkQueue.shutDown}, then resolves once no item is being processed (items still
   * queued are not waited for), or as soon as `shutDown` is called, whichever is first
   * (kubernetes/kubernetes#119554).
   */
  shutDownWithDrain(): Promise<void>
  /** True once `shutDown` or `shutDownWithDrain` was called. */
  shuttingDown(): boolean
}

/** Options for {@link createWorkQueue}. */
export interface WorkQueueOptions {
  /** Where add/get/done timings are reported. Default: none (no clock reads, no bookkeeping). */
  metrics?: QueueMetrics
  /** Clock for metric durations. Default: the real clock. */
  clock?: Clock
}

/**
 * Creates a {@link WorkQueue} (client-go `NewTypedWithConfig`).
 *
 * Guarantees: as {@link WorkQueue}; memory of popped items is released at once and the FIFO's backing
 * array shrinks after a burst (kubernetes/kubernetes#105031); `add`, `get` and `done` are O(1).
 *
 * Does not guarantee: client-go's behaviour for a misused `done` — `done(item)` for an item that is
 * not being processed is a no-op here, where client-go would queue a duplicate of a waiting item.
 *
 * @example
 * const q = createWorkQueue<string>({ metrics: new InMemoryQueueMetrics() })
 */
export function createWorkQueue<T>(options: WorkQueueOptions = {}): WorkQueue<T> {
  return new FifoWorkQueue<T>(options)
}

class FifoWorkQueue<T> implements WorkQueue<T> {
  /** Items ready to hand out, oldest first. Every element is in #dirty and not in #processing. */
  readonly #queue = new RingBuffer<T>()
  /** Items that need processing: all of #queue, plus items re-added while being processed (parked). */
  readonly #dirty = new Set<T>()
  /** Items handed out and not yet done. Never in #queue; may be in #dirty (parked). */
  readonly #processing = new Set<T>()
  /** Pending `get` calls, oldest first. Non-empty only while #queue is empty and not shutting down. */
  readonly #waiters = new RingBuffer<(result: GetResult<T>) => void>()
  /** Pending `shutDownWithDrain` calls; released when #processing empties or `shutDown` is called. */
  #drainWaiters: (() => void)[] = []
  #shuttingDown = false
  readonly #metrics: QueueMetricsRecorder<T> | undefined

  constructor(options: WorkQueueOptions) {
    this.#metrics = options.metrics && new QueueMetricsRecorder<T>(options.metrics, options.clock)
  }

  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return
    this.#metrics?.add(item)
    this.#dirty.add(item)
    if (!this.#processing.has(item)) this.#ready(item)
  }

  len(): number {
    return this.#queue.length
  }

  get(): Promise<GetResult<T>> {
    if (this.#queue.length > 0) {
      const item = this.#queue.shift() as T
      this.#handOut(item)
      return Promise.resolve({ shutdown: false, item })
    }
    if (this.#shuttingDown) return Promise.resolve(SHUT_DOWN)
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  done(item: T): void {
    if (!this.#processing.delete(item)) return
    this.#metrics?.done(item)
    if (this.#dirty.has(item)) this.#ready(item)
    if (this.#processing.size === 0 && this.#drainWaiters.length > 0) this.#releaseDrain()
  }

  shutDown(): void {
    this.#shuttingDown = true
    this.#wakeAll()
    this.#releaseDrain()
  }

  shutDownWithDrain(): Promise<void> {
    this.#shuttingDown = true
    this.#wakeAll()
    if (this.#processing.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.#drainWaiters.push(resolve))
  }

  shuttingDown(): boolean {
    return this.#shuttingDown
  }

  /** `item` (dirty, not processing) is ready: hand it to the oldest waiter, or queue it. */
  #ready(item: T): void {
    const waiter = this.#waiters.shift()
    if (waiter === undefined) {
      this.#queue.push(item)
      return
    }
    this.#handOut(item)
    waiter({ shutdown: false, item })
  }

  #handOut(item: T): void {
    this.#metrics?.get(item)
    this.#processing.add(item)
    this.#dirty.delete(item)
  }

  #wakeAll(): void {
    for (let w = this.#waiters.shift(); w !== undefined; w = this.#waiters.shift()) w(SHUT_DOWN)
  }

  #releaseDrain(): void {
    const waiters = this.#drainWaiters
    this.#drainWaiters = []
    for (const w of waiters) w()
  }
}
