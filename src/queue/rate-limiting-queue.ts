/**
 * @module rate-limiting-queue — a delaying queue that asks a {@link RateLimiter} how long to wait.
 *
 * Semantics are client-go's `util/workqueue/rate_limiting_queue.go`.
 */
import { realClock } from '../core/clock.ts'
import { createDelayingQueue, type DelayingQueue, type DelayingQueueOptions } from './delaying-queue.ts'
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts'
import type { GetResult } from './work-queue.ts'

/**
 * A {@link DelayingQueue} with per-item retry policy (client-go `TypedRateLimitingInterface[T]`).
 *
 * Guarantees: `addRateLimited(item)` is exactly `addAfter(item, rateLimiter.when(item))` — the
 * limiter records the failure even when the queue is shutting down (as client-go); `forget` and
 * `numRequeues` are the limiter's. Everything {@link DelayingQueue} guarantees.
 *
 * Does not guarantee: that `forget` removes the item from the queue (it only clears its history);
 * that the limiter's history is freed for items never forgotten — call `forget` on success.
 *
 * @example
 * const next = await q.get()
 * if (next.shutdown) return
 * try {
 *   await reconcile(next.item)
 *   q.forget(next.item)
 * } catch {
 *   q.addRateLimited(next.item)
 * } finally {
 *   q.done(next.item)
 * }
 */
export interface RateLimitingQueue<T> extends DelayingQueue<T> {
  /** Adds `item` once the rate limiter says it may be retried. */
  addRateLimited(item: T): void
  /** Tells the rate limiter `item` succeeded: its next retry starts from the shortest delay. */
  forget(item: T): void
  /** Retries recorded for `item` since the last `forget`. */
  numRequeues(item: T): number
}

/** Options for {@link createRateLimitingQueue}. */
export interface RateLimitingQueueOptions<T> extends DelayingQueueOptions<T> {
  /** Retry policy. Default: {@link defaultControllerRateLimiter} on `clock`. */
  rateLimiter?: RateLimiter<T>
  /** The delaying queue to wrap. Default: a new {@link createDelayingQueue} with the other options. */
  delayingQueue?: DelayingQueue<T>
}

/**
 * Creates a {@link RateLimitingQueue} (client-go `NewTypedRateLimitingQueueWithConfig`).
 *
 * Guarantees: as {@link RateLimitingQueue}. The default limiter is client-go's
 * `DefaultTypedControllerRateLimiter` (max of 5 ms → 1000 s per item and 10 qps / burst 100 overall);
 * controller-runtime's priority queue uses only the per-item part — pass
 * `rateLimiter: itemExponentialRateLimiter()` for that behaviour.
 *
 * Does not guarantee: that `clock`, `metrics` and `queue` are used when `delayingQueue` is given
 * (they configure the queue this function would otherwise create).
 *
 * @example
 * const q = createRateLimitingQueue<string>({ clock, metrics })
 * q.addRateLimited('default/web') // 5 ms later, then 10 ms, 20 ms, … until forget
 */
export function createRateLimitingQueue<T>(options: RateLimitingQueueOptions<T> = {}): RateLimitingQueue<T> {
  const limiter =
    options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: options.clock ?? realClock })
  return new LimitedQueue<T>(options.delayingQueue ?? createDelayingQueue<T>(options), limiter)
}

class LimitedQueue<T> implements RateLimitingQueue<T> {
  readonly #queue: DelayingQueue<T>
  readonly #limiter: RateLimiter<T>

  constructor(queue: DelayingQueue<T>, limiter: RateLimiter<T>) {
    this.#queue = queue
    this.#limiter = limiter
  }

  addRateLimited(item: T): void {
    this.#queue.addAfter(item, this.#limiter.when(item))
  }

  forget(item: T): void {
    this.#limiter.forget(item)
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item)
  }

  addAfter(item: T, delayMs: number): void {
    this.#queue.addAfter(item, delayMs)
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
    this.#queue.shutDown()
  }

  shutDownWithDrain(): Promise<void> {
    return this.#queue.shutDownWithDrain()
  }

  shuttingDown(): boolean {
    return this.#queue.shuttingDown()
  }
}
