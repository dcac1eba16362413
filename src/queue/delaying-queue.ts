/**
 * @module delaying-queue — `addAfter(item, ms)`: a min-heap of ready times behind one clock timer.
 *
 * Semantics are client-go's `util/workqueue/delaying_queue.go`, without its goroutine and channel:
 * waiting items sit in a heap keyed by ready time, and a single timer on the injected clock is armed
 * for the earliest one. client-go's 10 s heartbeat is not needed, because nothing here can miss a
 * wake-up: every `addAfter` re-arms the timer synchronously when it moves the earliest deadline.
 */
import { type CancelTimer, type Clock, realClock } from '../core/clock.ts'
import { type HeapNode, MinHeap } from './heap.ts'
import type { QueueMetrics } from './metrics.ts'
import { createWorkQueue, type GetResult, type WorkQueue } from './work-queue.ts'

/**
 * Longest single timer the delaying queue arms: 2³¹ − 1 ms (≈ 24.8 days). Node's `setTimeout` treats
 * anything longer as 1 ms (TimeoutOverflowWarning), so a longer delay is reached by re-arming; this
 * also keeps huge delays from misbehaving (kube-rs#1772 panicked on them).
 */
export const MAX_TIMER_DELAY_MS = 2_147_483_647

/**
 * A {@link WorkQueue} that can also add an item later (client-go `TypedDelayingInterface[T]`).
 *
 * Guarantees:
 * - `addAfter(item, ms)` with `ms ≤ 0` (or NaN) is `add(item)` now.
 * - Of several pending delays for one item the earliest wins: a later `addAfter` never postpones it.
 * - A waiting item is added to the queue no earlier than its ready time on the queue's clock
 *   (monotonic); items due at the same time are added in the order their delays were requested.
 * - One timer for the whole queue, re-armed to the earliest deadline; none is left armed after
 *   `shutDown`/`shutDownWithDrain` (kubernetes/kubernetes#83945). Shutdown is idempotent (kubernetes/kubernetes#77170).
 *
 * Does not guarantee: that a waiting item survives shutdown (waiting items are dropped, as in
 * client-go); that an item is not also queued or in flight while it waits (the later add deduplicates).
 *
 * @example
 * const q = createDelayingQueue<string>({ clock })
 * q.addAfter('default/web', 30_000) // handed out by get() 30 s from now
 */
export interface DelayingQueue<T> extends WorkQueue<T> {
  /** Adds `item` after `delayMs` milliseconds. Ignored after shutdown. */
  addAfter(item: T, delayMs: number): void
}

/** Options for {@link createDelayingQueue}. */
export interface DelayingQueueOptions<T> {
  /** Clock for ready times, the timer and metrics. Default: the real clock. */
  clock?: Clock
  /** Metrics sink: the `workqueue_retries_total` hook here, everything else in the created queue. */
  metrics?: QueueMetrics
  /** The queue to add ready items to. Default: a new {@link createWorkQueue} with `clock` and `metrics`. */
  queue?: WorkQueue<T>
}

/**
 * Creates a {@link DelayingQueue} (client-go `NewTypedDelayingQueueWithConfig`).
 *
 * Guarantees: as {@link DelayingQueue}; `addAfter` is O(log n) in the number of waiting items; memory
 * for an item is released when it becomes ready or at shutdown.
 *
 * Does not guarantee: anything if the wrapped `queue` is shut down directly instead of through this
 * object, beyond dropping waiting items at the next timer.
 *
 * @example
 * const q = createDelayingQueue<string>({ clock: new ManualClock() })
 */
export function createDelayingQueue<T>(options: DelayingQueueOptions<T> = {}): DelayingQueue<T> {
  return new TimerDelayingQueue<T>(options)
}

/** One waiting item. */
interface Waiting<T> extends HeapNode {
  item: T
  /** Monotonic ms at which the item is added. */
  readyAt: number
  /** Request order, to break ready-time ties in FIFO order. */
  seq: number
}

function earlier<T>(a: Waiting<T>, b: Waiting<T>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq)
}

class TimerDelayingQueue<T> implements DelayingQueue<T> {
  readonly #queue: WorkQueue<T>
  readonly #clock: Clock
  readonly #metrics: QueueMetrics | undefined
  readonly #heap = new MinHeap<Waiting<T>>(earlier)
  /** Invariant: an item is in #waiting iff its entry is in #heap. */
  readonly #waiting = new Map<T, Waiting<T>>()
  #seq = 0
  #cancelTimer: CancelTimer | undefined
  /** Monotonic ms the armed timer fires at; undefined iff no timer is armed. */
  #timerAt: number | undefined
  readonly #onTimer = (): void => this.#fire()

  constructor(options: DelayingQueueOptions<T>) {
    this.#clock = options.clock ?? realClock
    this.#metrics = options.metrics
    this.#queue = options.queue ?? createWorkQueue<T>({ clock: this.#clock, metrics: options.metrics })
  }

  addAfter(item: T, delayMs: number): void {
    if (this.#queue.shuttingDown()) return
    try {
      this.#metrics?.incRetries()
    } catch {
      // A sink must not break the queue.
    }
    if (!(delayMs > 0)) {
      this.#queue.add(item)
      return
    }
    const readyAt = this.#clock.monotonic() + delayMs
    const entry = this.#waiting.get(item)
    if (entry === undefined) {
      const added: Waiting<T> = { item, readyAt, seq: this.#seq++, heapIndex: -1 }
      this.#waiting.set(item, added)
      this.#heap.push(added)
    } else if (readyAt < entry.readyAt) {
      entry.readyAt = readyAt
      this.#heap.fix(entry)
    } else {
      return
    }
    this.#arm()
  }

  add(item: T): void {
    this.#queue.add(item)
  }

  len(): number {
    return this.#queue.len()
  }

  get(): Promise<GetResult<T>> {
    return this.#queue.get()
  }

  done(item: T): void {
    this.#queue.done(item)
  }

  shutDown(): void {
    this.#stop()
    this.#queue.shutDown()
  }

  shutDownWithDrain(): Promise<void> {
    this.#stop()
    return this.#queue.shutDownWithDrain()
  }

  shuttingDown(): boolean {
    return this.#queue.shuttingDown()
  }

  /** Makes sure the one timer fires no later than the earliest ready time (or cancels it when idle). */
  #arm(): void {
    const next = this.#heap.peek()
    if (next === undefined) {
      this.#disarm()
      return
    }
    if (this.#timerAt !== undefined && this.#timerAt <= next.readyAt) return
    this.#disarm()
    const now = this.#clock.monotonic()
    const wait = Math.min(Math.max(0, next.readyAt - now), MAX_TIMER_DELAY_MS)
    this.#timerAt = now + wait
    this.#cancelTimer = this.#clock.setTimer(this.#onTimer, wait)
  }

  #disarm(): void {
    this.#cancelTimer?.()
    this.#cancelTimer = undefined
    this.#timerAt = undefined
  }

  #fire(): void {
    this.#cancelTimer = undefined
    this.#timerAt = undefined
    if (this.#queue.shuttingDown()) {
      this.#stop()
      return
    }
    const now = this.#clock.monotonic()
    for (let next = this.#heap.peek(); next !== undefined && next.readyAt <= now; next = this.#heap.peek()) {
      this.#heap.pop()
      this.#waiting.delete(next.item)
      this.#queue.add(next.item)
    }
    this.#arm()
  }

  /** Cancels the timer and drops every waiting item. */
  #stop(): void {
    this.#disarm()
    this.#heap.clear()
    this.#waiting.clear()
  }
}
