/**
 * @module token-bucket — a QPS/burst token bucket on an injected clock.
 *
 * Semantics of `golang.org/x/time/rate.Limiter` as client-go uses it: the bucket
 * starts full with `burst` tokens, refills at `qps` tokens per second, never holds
 * more than `burst`, and {@link TokenBucket.reserve} may take a token that only
 * becomes available in the future, returning how long to wait for it.
 */
import { type Clock, realClock } from './clock.ts'

/** A token bucket. Not tied to any I/O: callers wait for the returned delay themselves. */
export class TokenBucket {
  readonly qps: number
  readonly burst: number
  readonly #clock: Clock
  #tokens: number
  #last: number

  /**
   * @param qps tokens per second, > 0
   * @param burst bucket size, >= 1
   */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!(qps > 0)) throw new RangeError(`token bucket qps must be > 0, got ${qps}`)
    if (!(burst >= 1)) throw new RangeError(`token bucket burst must be >= 1, got ${burst}`)
    this.qps = qps
    this.burst = burst
    this.#clock = clock
    this.#tokens = burst
    this.#last = clock.monotonic()
  }

  #refill(): number {
    const now = this.#clock.monotonic()
    if (now > this.#last) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps)
      this.#last = now
    }
    return now
  }

  /**
   * Takes one token and returns the milliseconds until it is available (0 = now).
   * The token is consumed even when the delay is positive (later callers queue behind).
   */
  reserve(): number {
    this.#refill()
    this.#tokens -= 1
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.qps) * 1000
  }

  /** Takes a token only if one is available now. */
  tryTake(): boolean {
    this.#refill()
    if (this.#tokens < 1) return false
    this.#tokens -= 1
    return true
  }

  /** Gives back a reserved token (e.g. the waiter was cancelled before using it). */
  cancelReservation(): void {
    this.#refill()
    this.#tokens = Math.min(this.burst, this.#tokens + 1)
  }

  /** Tokens available now (may be negative while reservations are outstanding). */
  available(): number {
    this.#refill()
    return this.#tokens
  }
}
