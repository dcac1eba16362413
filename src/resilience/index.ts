/** @module resilience — guards for calls to dependencies outside the cluster: a circuit breaker per dependency. */
export {
  type BreakerInput,
  type BreakerLimits,
  type BreakerPhase,
  type BreakerState,
  type BreakerStep,
  breakerStep,
  DEFAULT_BREAKER_FAILURE_THRESHOLD,
  DEFAULT_BREAKER_FAILURE_WINDOW_MS,
  DEFAULT_BREAKER_JITTER,
  DEFAULT_BREAKER_LIMITS,
  DEFAULT_BREAKER_MAX_OPEN_MS,
  DEFAULT_BREAKER_OPEN_MS,
  DEFAULT_BREAKER_PROBE_TIMEOUT_MS,
  initialBreakerState,
  openPeriodMs,
} from './breaker-state.ts'
export {
  BREAKER_PHASES,
  CircuitBreaker,
  type CircuitBreakerOptions,
  CircuitOpenError,
} from './circuit-breaker.ts'
