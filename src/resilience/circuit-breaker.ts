/**
 * @module circuit-breaker — the driver of one breaker: one per external dependency, shared by every
 * key that calls it, with its phase and transitions as metrics.
 *
 * The decisions are {@link breakerStep}'s; this class only reads the clock, draws the jitter, runs the call
 * and reports. Metrics: `edgeop_circuit_breaker_state{dependency}` (0 closed, 1 open, 2 half-open),
 * `edgeop_circuit_breaker_transitions_total{dependency,from,to}` and
 * `edgeop_dependency_call_duration_seconds{dependency,outcome}`, every call's latency by outcome:
 * `success` or the error's code (`EDGEOP_ERR_CIRCUIT_OPEN`, at 0 s, when refused; `error` for a non-edgeop error).
 */
import { type Clock, EdgeopError, isEdgeopError, realClock } from '../core/index.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'
import { REST_CLIENT_BUCKETS } from '../metrics/rest-client-metrics.ts'
import {
  type BreakerInput,
  type BreakerLimits,
  type BreakerPhase,
  type BreakerState,
  breakerStep,
  DEFAULT_BREAKER_LIMITS,
  initialBreakerState,
} from './breaker-state.ts'

/** The phases in the order of their gauge values (0, 1, 2). */
export const BREAKER_PHASES: readonly BreakerPhase[] = ['closed', 'open', 'half-open']

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** The dependency's name, the `dependency` label (e.g. `database-api`). */
  dependency: string
  /** Where the state gauge and the transitions counter go; none when omitted. */
  registry?: MetricsRegistry
  /** Thresholds; each omitted one is its `DEFAULT_BREAKER_*` constant. */
  limits?: Partial<BreakerLimits>
  /** Default {@link realClock} (its monotonic time). */
  clock?: Clock
  /** Jitter source in [0, 1); default `Math.random`. */
  random?: () => number
}

/** Thrown by {@link CircuitBreaker.call} when the breaker refuses a call (code `EDGEOP_ERR_CIRCUIT_OPEN`, retryable). */
export class CircuitOpenError extends EdgeopError {
  /** The phase that refused the call. */
  readonly phase: BreakerPhase
  /** When a call may next be let through. */
  readonly retryAfterMs: number

  /** An error for `dependency` in `phase`, retry after `retryAfterMs`. */
  constructor(dependency: string, phase: BreakerPhase, retryAfterMs: number) {
    super('EDGEOP_ERR_CIRCUIT_OPEN', `${dependency}: circuit breaker ${phase}`, {
      step: `call ${dependency}`,
      retryable: true,
    })
    this.name = 'CircuitOpenError'
    this.phase = phase
    this.retryAfterMs = retryAfterMs
  }
}

/**
 * A circuit breaker around calls to one external dependency.
 *
 * Guarantees: while open, {@link CircuitBreaker.call} throws {@link CircuitOpenError} without calling
 * `fn`; in half-open at most one call runs at a time; every phase change is counted once.
 * Does not guarantee: any ordering among callers refused at the same time.
 *
 * @example
 * const breaker = new CircuitBreaker({ dependency: 'database-api', registry })
 * const entry = await breaker.call(() => api.get(key, signal), signal)
 */
export class CircuitBreaker {
  /** The `dependency` label. */
  readonly dependency: string
  #state: BreakerState
  readonly #clock: Clock
  readonly #random: () => number
  readonly #report: (from: BreakerPhase, to: BreakerPhase) => void
  readonly #observe: (outcome: string, since: number) => void

  /** A closed breaker; registers and zeroes its metrics. */
  constructor(o: CircuitBreakerOptions) {
    this.dependency = o.dependency
    this.#state = initialBreakerState({ ...DEFAULT_BREAKER_LIMITS, ...o.limits })
    this.#clock = o.clock ?? realClock
    this.#random = o.random ?? Math.random
    const dependency = o.dependency
    const gauge = o.registry?.gauge({
      name: 'edgeop_circuit_breaker_state',
      help: 'Circuit breaker phase: 0 closed, 1 open, 2 half-open.',
      labelNames: ['dependency'],
    })
    const transitions = o.registry?.counter({
      name: 'edgeop_circuit_breaker_transitions_total',
      help: 'Circuit breaker phase changes.',
      labelNames: ['dependency', 'from', 'to'],
    })
    const calls = o.registry?.histogram({
      name: 'edgeop_dependency_call_duration_seconds',
      help: 'Dependency calls.',
      labelNames: ['dependency', 'outcome'],
      buckets: REST_CLIENT_BUCKETS,
    })
    this.#observe = (outcome, since) =>
      calls?.observe({ dependency, outcome }, (this.#clock.monotonic() - since) / 1000)
    gauge?.set({ dependency }, 0)
    this.#report = (from, to) => {
      gauge?.set({ dependency }, BREAKER_PHASES.indexOf(to))
      transitions?.inc({ dependency, from, to })
    }
  }

  /** The current phase (an open breaker stays `open` until a call arrives after its open period). */
  get phase(): BreakerPhase {
    return this.#state.phase
  }

  /** Ms until a call would be let through; 0 when one would be now. Changes nothing. */
  retryAfterMs(): number {
    return breakerStep(this.#state, { type: 'request' }, this.#clock.monotonic()).retryAfterMs
  }

  /**
   * Runs `fn` if the breaker lets it through, and records its outcome; throws
   * {@link CircuitOpenError} otherwise. A retryable edgeop error, or any other error, counts against
   * the dependency; a non-retryable edgeop error (a refusal, a bad request) proves it answered and
   * counts as a success; a call that fails after `signal` aborted is recorded as abandoned.
   */
  async call<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const decision = this.#feed({ type: 'request' })
    const start = this.#clock.monotonic()
    if (!decision.admitted) {
      this.#observe('EDGEOP_ERR_CIRCUIT_OPEN', start)
      throw new CircuitOpenError(this.dependency, this.phase, decision.retryAfterMs)
    }
    let result: T
    try {
      result = await fn()
    } catch (err) {
      this.#observe(isEdgeopError(err) ? err.code : 'error', start)
      if (signal?.aborted) this.#feed({ type: 'abandon' })
      else if (!isEdgeopError(err) || err.retryable) this.#feed({ type: 'failure', random: this.#random() })
      else this.#feed({ type: 'success' })
      throw err
    }
    this.#observe('success', start)
    this.#feed({ type: 'success' })
    return result
  }

  #feed(input: BreakerInput) {
    const from = this.#state.phase
    const next = breakerStep(this.#state, input, this.#clock.monotonic())
    this.#state = next.state
    if (next.state.phase !== from) this.#report(from, next.state.phase)
    return next
  }
}
