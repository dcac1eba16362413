/**
 * @module options — what a `LeaderElector` is configured with, and what its `run` calls.
 */
import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/log.ts'
import type { ResourceLock } from './lock.ts'
import type { ElectionTiming } from './timing.ts'

/** Options of `LeaderElector`. Timing fields default as in `timing.ts` (15 s / 10 s / 2 s / 1.2). */
export interface LeaderElectorOptions extends Partial<ElectionTiming> {
  /** Where the record lives, and who we are. */
  lock: ResourceLock
  /**
   * On a clean stop, hand the lease over at once by writing a released record (empty holder, 1 s)
   * instead of letting it expire. Only done after the leader's work has settled. Default false, as
   * controller-runtime's `LeaderElectionReleaseOnCancel`.
   */
  releaseOnCancel?: boolean
  /**
   * How long to wait, after the leader's signal aborted, for the promise returned by
   * `onStartedLeading` to settle before giving up on releasing. Default
   * `leaseDurationMs − renewDeadlineMs`: the margin the timing leaves before others could start.
   */
  stopGraceMs?: number
  /**
   * Called (synchronously, errors logged) whenever the observed holder differs from the last one
   * reported, including the first holder seen, our own identity, and `''` after a release (client-go
   * `OnNewLeader`).
   */
  onNewLeader?: (identity: string) => void
  /** Time source; inject a ManualClock in tests. */
  clock?: Clock
  /** Randomness in [0, 1) for the acquire jitter. */
  random?: () => number
  logger?: Logger
  /**
   * Hold the Node process open while `run` is in progress (an interval timer), whatever the lock
   * awaits: a `run` awaited at top level must not end with an empty event loop, where Node exits
   * with code 13 instead of resolving it. The real clock's sleeps hold the loop too, but not between
   * them; an injected clock's timers may hold nothing. Default: true on the real clock, false on an
   * injected clock (tests drive time themselves).
   */
  keepAlive?: boolean
}

/** What `LeaderElector.run` calls. Both are required, as in client-go. */
export interface LeaderCallbacks {
  /**
   * Called once leadership is acquired, after `onNewLeader(identity)`. `signal` aborts the moment
   * leadership ends: with an `EDGEOP_ERR_LEADER` reason when it was lost, `EDGEOP_ERR_ABORTED` on a
   * clean stop. If it returns a promise, that is "the leader's work": the elector waits for it
   * (up to `stopGraceMs`) before releasing the lease.
   */
  onStartedLeading(signal: AbortSignal): unknown
  /** Called once when `run` ends, whether or not this process ever led (client-go). */
  onStoppedLeading(): void
}
