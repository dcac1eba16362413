/** @module leader — Lease-based leader election (client-go semantics): lock, elector, runWhileLeading. */
export { DEFAULT_HEALTH_TOLERANCE_MS, LeaderElector } from './elector.ts'
export { type LeaseApi, LeaseLock, type LeaseLockOptions } from './lease-lock.ts'
export type { ResourceLock } from './lock.ts'
export type { LeaderCallbacks, LeaderElectorOptions } from './options.ts'
export type { LeaderElectionRecord } from './record.ts'
export { runWhileLeading } from './run-while-leading.ts'
export {
  DEFAULT_JITTER_FACTOR,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  type ElectionTiming,
} from './timing.ts'
