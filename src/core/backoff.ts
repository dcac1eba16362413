/**
 * @module backoff — exponential backoff with upward jitter and a health reset.
 */
import { type Clock, realClock } from './clock.ts'

/** Reflector backoff start: 800 ms (client-go `tools/cache/reflector.go`, kube-rs watcher). */
export const DEFAULT_BACKOFF_INITIAL_MS = 800
/** Reflector backoff cap: 30 s (client-go reflector, kube-rs watcher). */
export const DEFAULT_BACKOFF_MAX_MS = 30_000
/** Reflector backoff factor: ×2 (client-go reflector). */
export const DEFAULT_BACKOFF_FACTOR = 2
/** Jitter 1.0: a delay d becomes d + rand·d ∈ [d, 2d) (client-go `wait.Jitter`). */
export const DEFAULT_BACKOFF_JITTER = 1
/** Reset to the initial delay after 2 min without a failure (client-go reflector, kube-rs 120 s). */
export const DEFAULT_BACKOFF_RESET_MS = 120_000

/** Options for {@link Backoff}. */
export interface BackoffOptions {
  /** First delay in ms. Default {@link DEFAULT_BACKOFF_INITIAL_MS}. */
  initialMs?: number
  /** Cap on the delay before jitter, in ms. Default {@link DEFAULT_BACKOFF_MAX_MS}. */
  maxMs?: number
  /** Growth per failure. Default {@link DEFAULT_BACKOFF_FACTOR}. */
  factor?: number
  /** Upward jitter fraction: the delay is `d + random() * jitter * d`. 0 disables. */
  jitter?: number
  /** After this long without a failure the next delay starts from `initialMs` again. */
  resetAfterMs?: number
  /** Time source; inject a ManualClock in tests. */
  clock?: Clock
  /** Injected randomness in [0, 1) for tests. */
  random?: () => number
}

/**
 * Exponential backoff shared by every retry loop. Jitter is applied after the cap,
 * so delays at the cap fall in [max, max·(1+jitter)), as in client-go.
 *
 * @example
 * const b = new Backoff()
 * await sleep(b.next()) // 800–1600 ms, then 1.6–3.2 s, …
 */
export class Backoff {
  /** First delay in ms. */
  readonly initialMs: number
  /** Cap on the delay before jitter, in ms. */
  readonly maxMs: number
  /** Growth per failure. */
  readonly factor: number
  /** Upward jitter fraction. */
  readonly jitter: number
  /** Quiet time after which the sequence starts over. */
  readonly resetAfterMs: number
  readonly #clock: Clock
  readonly #random: () => number
  #current = 0
  #lastFailureAt: number | undefined

  /** Defaults come from the `DEFAULT_BACKOFF_*` constants (client-go's reflector). */
  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? DEFAULT_BACKOFF_INITIAL_MS
    this.maxMs = options.maxMs ?? DEFAULT_BACKOFF_MAX_MS
    this.factor = options.factor ?? DEFAULT_BACKOFF_FACTOR
    this.jitter = options.jitter ?? DEFAULT_BACKOFF_JITTER
    this.resetAfterMs = options.resetAfterMs ?? DEFAULT_BACKOFF_RESET_MS
    this.#clock = options.clock ?? realClock
    this.#random = options.random ?? Math.random
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const now = this.#clock.monotonic()
    if (this.#lastFailureAt !== undefined && now - this.#lastFailureAt >= this.resetAfterMs) this.#current = 0
    this.#lastFailureAt = now
    this.#current = this.#current === 0 ? this.initialMs : Math.min(this.#current * this.factor, this.maxMs)
    return this.#current + this.#random() * this.jitter * this.#current
  }

  /** Forgets past failures. */
  reset(): void {
    this.#current = 0
    this.#lastFailureAt = undefined
  }

  /** Number of the base delay that the next call would start from (0 = fresh). */
  get currentMs(): number {
    return this.#current
  }
}
