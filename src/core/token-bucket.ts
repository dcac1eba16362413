/**
 * @module token-bucket — an overall rate limit: `qps` tokens per second, at most `burst` saved up.
 *
 * The arithmetic of Go's `golang.org/x/time/rate.Limiter` (which client-go's `BucketRateLimiter` and
 * `flowcontrol.NewTokenBucketRateLimiter` wrap), driven by the injected clock: the bucket starts
 * full, refills continuously, and {@link TokenBucket.reserve} may take tokens from the future, so that
 * the n-th reservation past the burst is told to wait n / qps seconds (`Reserve().Delay()`).
 */
import { type Clock, realClock } from './clock.ts'
import { EdgeopError } from './errors.ts'

/** Options for {@link TokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second. `Infinity` means unlimited. Must be > 0. */
  qps: number
  /** Bucket size: tokens available at once, and at the start. An integer ≥ 1. */
  burst: number
  /** Clock the refill is measured on (monotonic). Default: the real clock. */
  clock?: Clock
}

/**
 * A token bucket on an injected clock.
 *
 * Guarantees: the bucket starts with `burst` tokens; it gains `qps` tokens per second of monotonic
 * clock time, never holding more than `burst`; `reserve()` always succeeds and returns the wait (ms)
 * until the taken token is due, so k back-to-back reservations on an empty bucket wait
 * 1/qps, 2/qps, … k/qps seconds; `tryTake()` never takes a future token.
 *
 * Does not guarantee: that a caller actually waits the returned time (the bucket only accounts).
 *
 * @example
 * const bucket = new TokenBucket({ qps: 10, burst: 100, clock })
 * bucket.reserve() // 0 for the first 100 calls, then 100, 200, … ms
 */
export class TokenBucket {
  /** Tokens added per second. */
  readonly qps: number
  /** Bucket size: requests that may go at once after a quiet period. */
  readonly burst: number
  readonly #clock: Clock
  /** Tokens at time #last; negative when future tokens are reserved. */
  #tokens: number
  /** Monotonic ms of the last accounting. */
  #last: number

  /** Starts full. Throws `EDGEOP_ERR_INVALID` unless qps > 0 and burst is an integer ≥ 1. */
  constructor(options: TokenBucketOptions) {
    const { qps, burst } = options
    if (!(qps > 0)) throw new EdgeopError('EDGEOP_ERR_INVALID', `token bucket qps must be > 0, got ${qps}`)
    if (!Number.isInteger(burst) || burst < 1) {
      throw new EdgeopError('EDGEOP_ERR_INVALID', `token bucket burst must be an integer ≥ 1, got ${burst}`)
    }
    this.qps = qps
    this.burst = burst
    this.#clock = options.clock ?? realClock
    this.#tokens = burst
    this.#last = this.#clock.monotonic()
  }

  /** Takes one token, from the future if need be, and returns how many ms until it is due (0 = now). */
  reserve(): number {
    if (this.qps === Number.POSITIVE_INFINITY) return 0
    const tokens = this.#advance() - 1
    this.#tokens = tokens
    return tokens < 0 ? (-tokens / this.qps) * 1000 : 0
  }

  /** Takes one token if one is available now; never reserves. */
  tryTake(): boolean {
    if (this.qps === Number.POSITIVE_INFINITY) return true
    const tokens = this.#advance()
    if (tokens < 1) return false
    this.#tokens = tokens - 1
    return true
  }

  /**
   * Gives back a token taken by {@link reserve} that will not be used (a waiter was
   * cancelled), so later reservations do not wait for it. Never exceeds `burst`.
   */
  cancelReservation(): void {
    if (this.qps === Number.POSITIVE_INFINITY) return
    this.#tokens = Math.min(this.burst, this.#advance() + 1)
  }

  /** Tokens available now (negative while future tokens are reserved). */
  tokens(): number {
    return this.qps === Number.POSITIVE_INFINITY ? this.burst : this.#advance()
  }

  /** Brings #tokens up to the current time and returns it. */
  #advance(): number {
    const now = this.#clock.monotonic()
    const elapsed = now - this.#last
    if (elapsed > 0) {
      this.#last = now
      this.#tokens = Math.min(this.burst, this.#tokens + (elapsed / 1000) * this.qps)
    }
    return this.#tokens
  }
}
