/**
 * @module rate-limiter — how long to wait before retrying an item: small policies and combinators.
 *
 * Semantics are client-go's `util/workqueue/default_rate_limiters.go`. A limiter answers `when(item)`
 * in milliseconds and, for per-item policies, **counts a failure as a side effect** of that call.
 */
import type { Clock } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import { TokenBucket } from '../core/token-bucket.ts'

/**
 * A retry policy (client-go `TypedRateLimiter[T]`).
 *
 * Guarantees (of every limiter here): `when` returns a finite or infinite number ≥ 0 and never throws;
 * `forget(item)` clears `item`'s history so its next `when` starts over; `numRequeues(item)` is the
 * number of `when(item)` calls since the last `forget(item)` (0 for policies without per-item state).
 *
 * Does not guarantee: anything about items never passed to `when` beyond `numRequeues` = 0; bounded
 * memory when callers never `forget` (per-item history is kept until then).
 *
 * @example
 * const limiter: RateLimiter<string> = itemExponentialRateLimiter({ baseMs: 5, maxMs: 1_000_000 })
 * limiter.when('a') // 5
 * limiter.when('a') // 10
 * limiter.forget('a')
 */
export interface RateLimiter<T> {
  /** Records a failure of `item` and returns how many ms to wait before retrying it. */
  when(item: T): number
  /** Clears `item`'s failure history (call it when the item succeeded). */
  forget(item: T): void
  /** Failures recorded for `item` since its last `forget`. */
  numRequeues(item: T): number
}

/**
 * First per-item retry delay: 5 ms (client-go `DefaultTypedControllerRateLimiter`, and
 * controller-runtime's limiter for its priority queue). client-go's `DefaultItemBasedRateLimiter`
 * uses 1 ms instead.
 */
export const DEFAULT_ITEM_BASE_DELAY_MS = 5
/**
 * Per-item retry delay cap: 1000 s (client-go `DefaultTypedControllerRateLimiter`,
 * `DefaultItemBasedRateLimiter`), reached at the 19th consecutive failure from 5 ms.
 */
export const DEFAULT_ITEM_MAX_DELAY_MS = 1_000_000
/** Overall retry rate: 10 per second (client-go `DefaultTypedControllerRateLimiter`). */
export const DEFAULT_BUCKET_QPS = 10
/** Overall retry burst: 100 (client-go `DefaultTypedControllerRateLimiter`). */
export const DEFAULT_BUCKET_BURST = 100

/** Options for {@link itemExponentialRateLimiter}. */
export interface ItemExponentialOptions {
  /** Delay after the first failure. Default {@link DEFAULT_ITEM_BASE_DELAY_MS}. */
  baseMs?: number
  /** Cap on the delay, before jitter. Default {@link DEFAULT_ITEM_MAX_DELAY_MS}. */
  maxMs?: number
  /** Upward jitter fraction: a delay d becomes d + random()·jitter·d, after the cap. Default 0 (client-go). */
  jitter?: number
  /** Randomness in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number
}

/**
 * Per-item exponential backoff (client-go `ItemExponentialFailureRateLimiter`): the n-th consecutive
 * failure of an item waits `baseMs · 2^(n−1)`, capped at `maxMs` (also when 2^(n−1) overflows).
 *
 * Guarantees: as {@link RateLimiter}; items back off independently.
 *
 * Does not guarantee: a spread between items failing together unless `jitter` > 0.
 *
 * @example
 * const l = itemExponentialRateLimiter<string>() // 5 ms, 10 ms, 20 ms, … ≤ 1000 s
 */
export function itemExponentialRateLimiter<T>(options: ItemExponentialOptions = {}): RateLimiter<T> {
  const baseMs = nonNegative('baseMs', options.baseMs ?? DEFAULT_ITEM_BASE_DELAY_MS)
  const maxMs = nonNegative('maxMs', options.maxMs ?? DEFAULT_ITEM_MAX_DELAY_MS)
  const jitter = nonNegative('jitter', options.jitter ?? 0)
  const random = options.random ?? Math.random
  const failures = new Map<T, number>()
  return {
    when(item) {
      const n = failures.get(item) ?? 0
      failures.set(item, n + 1)
      if (baseMs === 0) return 0
      const exp = baseMs * 2 ** n
      const delay = Math.min(exp, maxMs)
      return jitter > 0 ? delay + random() * jitter * delay : delay
    },
    forget(item) {
      failures.delete(item)
    },
    numRequeues(item) {
      return failures.get(item) ?? 0
    },
  }
}

/**
 * Fast, then slow (client-go `ItemFastSlowRateLimiter`): `fastMs` for an item's first
 * `maxFastAttempts` failures, `slowMs` after that.
 *
 * Guarantees: as {@link RateLimiter}.
 *
 * Does not guarantee: any growth between the two delays.
 *
 * @example
 * const l = itemFastSlowRateLimiter<string>(10, 60_000, 3) // 10, 10, 10, 60000, …
 */
export function itemFastSlowRateLimiter<T>(
  fastMs: number,
  slowMs: number,
  maxFastAttempts: number,
): RateLimiter<T> {
  nonNegative('fastMs', fastMs)
  nonNegative('slowMs', slowMs)
  const failures = new Map<T, number>()
  return {
    when(item) {
      const n = (failures.get(item) ?? 0) + 1
      failures.set(item, n)
      return n <= maxFastAttempts ? fastMs : slowMs
    },
    forget(item) {
      failures.delete(item)
    },
    numRequeues(item) {
      return failures.get(item) ?? 0
    },
  }
}

/** Options for {@link bucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** Default {@link DEFAULT_BUCKET_QPS}. */
  qps?: number
  /** Default {@link DEFAULT_BUCKET_BURST}. */
  burst?: number
  /** Clock the bucket refills on. Default: the real clock. */
  clock?: Clock
}

/**
 * One token bucket shared by all items (client-go `TypedBucketRateLimiter`, `Reserve().Delay()`):
 * never refuses, only delays; tokens for future retries are reserved at the time of `when`.
 *
 * Guarantees: as {@link RateLimiter} and {@link TokenBucket}; `numRequeues` is always 0 and `forget`
 * does nothing.
 *
 * Does not guarantee: per-item fairness (whoever asks first gets the earliest token).
 *
 * @example
 * const l = bucketRateLimiter<string>({ qps: 10, burst: 100, clock })
 */
export function bucketRateLimiter<T>(options: BucketRateLimiterOptions | TokenBucket = {}): RateLimiter<T> {
  const bucket =
    options instanceof TokenBucket
      ? options
      : new TokenBucket({
          qps: options.qps ?? DEFAULT_BUCKET_QPS,
          burst: options.burst ?? DEFAULT_BUCKET_BURST,
          clock: options.clock,
        })
  return {
    when: () => bucket.reserve(),
    forget() {},
    numRequeues: () => 0,
  }
}

/**
 * The strictest of several limiters (client-go `TypedMaxOfRateLimiter`): `when` asks **every**
 * limiter (so each records the failure) and returns the largest delay; `numRequeues` is the largest
 * count; `forget` is forwarded to all.
 *
 * Guarantees: as {@link RateLimiter}; with no limiters, `when` is 0.
 *
 * Does not guarantee: that limiters are consulted in a particular order.
 *
 * @example
 * const l = maxOfRateLimiter(itemExponentialRateLimiter<string>(), bucketRateLimiter<string>())
 */
export function maxOfRateLimiter<T>(...limiters: RateLimiter<T>[]): RateLimiter<T> {
  return {
    when(item) {
      let max = 0
      for (const l of limiters) {
        const d = l.when(item)
        if (d > max) max = d
      }
      return max
    },
    forget(item) {
      for (const l of limiters) l.forget(item)
    },
    numRequeues(item) {
      let max = 0
      for (const l of limiters) max = Math.max(max, l.numRequeues(item))
      return max
    },
  }
}

/**
 * Caps another limiter's delay (client-go `WithMaxWaitRateLimiter`): `min(limiter.when(item), maxWaitMs)`.
 *
 * Guarantees: as {@link RateLimiter}; the wrapped limiter still records the failure.
 *
 * Does not guarantee: that a token bucket underneath is not ahead of the capped time.
 *
 * @example
 * const l = withMaxWaitRateLimiter(defaultControllerRateLimiter<string>(), 60_000)
 */
export function withMaxWaitRateLimiter<T>(limiter: RateLimiter<T>, maxWaitMs: number): RateLimiter<T> {
  nonNegative('maxWaitMs', maxWaitMs)
  return {
    when: (item) => Math.min(limiter.when(item), maxWaitMs),
    forget: (item) => limiter.forget(item),
    numRequeues: (item) => limiter.numRequeues(item),
  }
}

/** Options for {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /** Clock for the token bucket. Default: the real clock. */
  clock?: Clock
}

/**
 * client-go's `DefaultTypedControllerRateLimiter`: the max of per-item exponential backoff
 * (5 ms → 1000 s) and one overall bucket (10 qps, burst 100). This is what controller-runtime uses
 * with its classic queue; with its priority queue (the default since controller-runtime v0.23) it
 * uses the per-item exponential part alone, i.e. `itemExponentialRateLimiter()` here.
 *
 * Guarantees: as {@link maxOfRateLimiter}; the first 100 retries across all items are limited only by
 * their per-item backoff, later ones are spread to ≤ 10 per second overall.
 *
 * Does not guarantee: jitter (none, as client-go).
 *
 * @example
 * const q = createRateLimitingQueue<string>({ rateLimiter: defaultControllerRateLimiter({ clock }) })
 */
export function defaultControllerRateLimiter<T>(
  options: DefaultControllerRateLimiterOptions = {},
): RateLimiter<T> {
  return maxOfRateLimiter<T>(
    itemExponentialRateLimiter<T>({ baseMs: DEFAULT_ITEM_BASE_DELAY_MS, maxMs: DEFAULT_ITEM_MAX_DELAY_MS }),
    bucketRateLimiter<T>({ qps: DEFAULT_BUCKET_QPS, burst: DEFAULT_BUCKET_BURST, clock: options.clock }),
  )
}

function nonNegative(name: string, value: number): number {
  if (!(value >= 0))
    throw new EdgeopError('EDGEOP_ERR_INVALID', `rate limiter ${name} must be ≥ 0, got ${value}`)
  return value
}
