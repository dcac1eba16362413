/**
 * @module breaker-state — a circuit breaker for one external dependency as a pure state machine.
 *
 * Three phases (Nygard, "Release It!", ch. "Circuit Breaker"; the names every breaker library uses):
 * - `closed`: calls pass; failures are counted, and {@link BreakerLimits.failureThreshold} of them
 *   within {@link BreakerLimits.failureWindowMs}, with no success between, open the breaker;
 * - `open`: calls are refused without being sent until the open period ends;
 * - `half-open`: exactly one call (the probe) is let through; its success closes the breaker, its
 *   failure opens it again for twice as long (capped), a probe that never reports is replaced after
 *   {@link BreakerLimits.probeTimeoutMs}.
 *
 * {@link breakerStep} reads no clock and draws no random number: the driver (`circuit-breaker.ts`) passes
 * monotonic `now` and, with a failure, the random draw that jitters the open period.
 */

/** Where the breaker is. */
export type BreakerPhase = 'closed' | 'open' | 'half-open'

/** The thresholds of one breaker. */
export interface BreakerLimits {
  /** Failures (with no success between) that open a closed breaker. */
  readonly failureThreshold: number
  /** Only failures this recent count. */
  readonly failureWindowMs: number
  /** The first open period; each failed probe doubles it. */
  readonly openMs: number
  /** The longest open period. */
  readonly maxOpenMs: number
  /** The open period is stretched by up to this fraction, at random. */
  readonly jitter: number
  /** A probe that has not reported after this long is presumed lost and another is let through. */
  readonly probeTimeoutMs: number
}

/**
 * 5 failures with no success between: at the default retry policy's transient backoff (800 ms
 * doubling, jittered) one object alone sees a dependency that fails every call fail 5 times within
 * 12–24 s, inside the failure window; a few objects reveal it in a second or two; one or two blips
 * (a connection reset, then a retry that works) never open it. Any success resets the count.
 */
export const DEFAULT_BREAKER_FAILURE_THRESHOLD = 5
/**
 * 30 s: three times the database API's per-call deadline, so a dependency that times out every
 * call still accumulates its failures in one window; older failures say nothing about now.
 */
export const DEFAULT_BREAKER_FAILURE_WINDOW_MS = 30_000
/** 5 s: short enough that a blip costs little, long enough to stop hammering a service that restarts. */
export const DEFAULT_BREAKER_OPEN_MS = 5_000
/** 60 s: a long outage is probed once a minute (Resilience4j's default wait is 60 s too). */
export const DEFAULT_BREAKER_MAX_OPEN_MS = 60_000
/**
 * +20 %: breakers opened by the same outage (several operators, or several dependencies behind one
 * load balancer) must not all probe in the same instant when it ends (AWS Architecture Blog,
 * "Exponential Backoff and Jitter"); client-go's leader election jitters its retry by 1.2 as well.
 */
export const DEFAULT_BREAKER_JITTER = 0.2
/** 30 s: three per-call deadlines; a probe cannot legitimately take longer. */
export const DEFAULT_BREAKER_PROBE_TIMEOUT_MS = 30_000

/** The default limits, each constant above. */
export const DEFAULT_BREAKER_LIMITS: BreakerLimits = {
  failureThreshold: DEFAULT_BREAKER_FAILURE_THRESHOLD,
  failureWindowMs: DEFAULT_BREAKER_FAILURE_WINDOW_MS,
  openMs: DEFAULT_BREAKER_OPEN_MS,
  maxOpenMs: DEFAULT_BREAKER_MAX_OPEN_MS,
  jitter: DEFAULT_BREAKER_JITTER,
  probeTimeoutMs: DEFAULT_BREAKER_PROBE_TIMEOUT_MS,
}

/** Everything the breaker knows. Plain data, replaced (never mutated) by every step. */
export interface BreakerState {
  /** The thresholds this breaker applies. */
  readonly limits: BreakerLimits
  /** Where the breaker is. */
  readonly phase: BreakerPhase
  /** `closed`: monotonic times of the failures since the last success, oldest first. */
  readonly failures: readonly number[]
  /** `open`: monotonic time from which a probe is let through. */
  readonly openUntil: number
  /** Openings since the breaker was last closed (sets the next open period). */
  readonly opens: number
  /** `half-open`: monotonic time the probe in flight was let through; undefined when none. */
  readonly probeAt: number | undefined
}

/** What the driver tells the breaker. */
export type BreakerInput =
  /** A call wants to go out. */
  | { readonly type: 'request' }
  /** A call that was let through reached the dependency and it answered. */
  | { readonly type: 'success' }
  /** A call that was let through failed because of the dependency; `random` ∈ [0, 1) jitters the open period. */
  | { readonly type: 'failure'; readonly random: number }
  /** A call that was let through ended without saying anything about the dependency (its caller gave up). */
  | { readonly type: 'abandon' }

/** The result of one step. */
export interface BreakerStep {
  /** The state after the input. */
  readonly state: BreakerState
  /** For a `request`: whether the call may go out. */
  readonly admitted: boolean
  /** For a refused `request`: ms until a call may be let through; 0 otherwise. */
  readonly retryAfterMs: number
}

/** A closed breaker with `limits` (the defaults when omitted). */
export function initialBreakerState(limits: BreakerLimits = DEFAULT_BREAKER_LIMITS): BreakerState {
  return { limits, phase: 'closed', failures: [], openUntil: 0, opens: 0, probeAt: undefined }
}

/** The open period after the `opens`-th consecutive opening, before jitter. */
export function openPeriodMs(limits: BreakerLimits, opens: number): number {
  return Math.min(limits.maxOpenMs, limits.openMs * 2 ** Math.max(0, opens - 1))
}

/** Feeds one input at monotonic `now`; returns the next state and, for a request, the decision. */
export function breakerStep(state: BreakerState, input: BreakerInput, now: number): BreakerStep {
  const { limits } = state
  switch (input.type) {
    case 'request':
      if (state.phase === 'closed') return pass(state)
      if (state.phase === 'open') {
        if (now < state.openUntil) return refuse(state, state.openUntil - now)
        return pass({ ...state, phase: 'half-open', probeAt: now })
      }
      if (state.probeAt === undefined || now - state.probeAt >= limits.probeTimeoutMs)
        return pass({ ...state, probeAt: now })
      // Look again when the probe has most likely answered, at the latest when it is presumed lost.
      return refuse(state, Math.min(limits.openMs, state.probeAt + limits.probeTimeoutMs - now))
    case 'success':
      // A late answer to a call let through before the breaker opened does not close it: only a probe does.
      if (state.phase === 'open') return pass(state)
      return pass(initialBreakerState(limits))
    case 'failure': {
      if (state.phase === 'open') return pass(state)
      if (state.phase === 'half-open') return pass(open(state, now, input.random))
      const failures = [...state.failures.filter((t) => now - t < limits.failureWindowMs), now]
      if (failures.length >= limits.failureThreshold) return pass(open(state, now, input.random))
      return pass({ ...state, failures })
    }
    case 'abandon':
      return pass(state.phase === 'half-open' ? { ...state, probeAt: undefined } : state)
  }
}

function open(state: BreakerState, now: number, random: number): BreakerState {
  const opens = state.opens + 1
  const period = openPeriodMs(state.limits, opens) * (1 + state.limits.jitter * random)
  return { ...state, phase: 'open', failures: [], openUntil: now + period, opens, probeAt: undefined }
}

function pass(state: BreakerState): BreakerStep {
  return { state, admitted: true, retryAfterMs: 0 }
}

function refuse(state: BreakerState, retryAfterMs: number): BreakerStep {
  return { state, admitted: false, retryAfterMs: Math.ceil(retryAfterMs) }
}
