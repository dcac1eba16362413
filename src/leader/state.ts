/**
 * @module state — one acquire-or-renew attempt as a pure state machine.
 *
 * client-go `tryAcquireOrRenew` (`tools/leaderelection/leaderelection.go`), split so that no I/O and
 * no clock read happens here: {@link begin} and {@link step} return the next lock command, the
 * driver (`elector.ts`) executes it and feeds back the result with the monotonic time it arrived.
 *
 * The one rule that makes the algorithm tolerate clock skew: a lease's expiry is judged **only** from
 * the local monotonic time at which this candidate last saw the record *change*, plus the record's
 * own `leaseDurationSeconds` (kubernetes/kubernetes#114872). The record's `renewTime`/`acquireTime` are never
 * compared with the local clock.
 */
import { formatMicroTime, type LeaderElectionRecord, recordKey } from './record.ts'

/** A record as this candidate last saw it change. */
export interface Observation {
  readonly record: LeaderElectionRecord
  /** {@link recordKey} of `record`. */
  readonly key: string
  /** Local monotonic ms when the change was seen (client-go `observedTime`). */
  readonly at: number
}

/** An attempt in progress: which lock call the driver is executing. */
export type Attempt =
  /** The holder's optimistic renew, reusing the cached object (client-go "fast path"). */
  | {
      readonly phase: 'fast-update'
      readonly wallNow: number
      readonly writeAt: number
      readonly record: LeaderElectionRecord
    }
  | { readonly phase: 'get'; readonly wallNow: number }
  | {
      readonly phase: 'create' | 'update'
      readonly wallNow: number
      readonly writeAt: number
      readonly record: LeaderElectionRecord
      /** The write makes us holder (we were not). */
      readonly transition: boolean
    }

/** Everything one candidate knows. Plain data, replaced (never mutated) by every transition. */
export interface ElectionState {
  readonly identity: string
  /** What this candidate writes as `leaseDurationSeconds`. */
  readonly leaseDurationSeconds: number
  readonly observed: Observation | undefined
  /**
   * Monotonic start of the last successful write that made or kept us holder. The leader must give
   * up at `renewedAt + renewDeadline`: the write cannot have been committed — and so cannot have been
   * seen by anyone — before it started.
   */
  readonly renewedAt: number | undefined
  readonly attempt: Attempt | undefined
}

/** A lock call for the driver, or the end of the attempt. */
export type Command =
  | { readonly op: 'get' }
  | { readonly op: 'create'; readonly record: LeaderElectionRecord }
  | { readonly op: 'update'; readonly record: LeaderElectionRecord }
  | { readonly op: 'done'; readonly outcome: AttemptOutcome }

/** How an attempt ended. */
export type AttemptOutcome =
  | {
      readonly acquired: true
      /** `fast`: renewed with the cached object; `slow`: after a fresh read. */
      readonly path: 'fast' | 'slow'
      /** We became holder with this write (created, or taken over from someone/no one). */
      readonly transition: boolean
    }
  | {
      readonly acquired: false
      /** `held`: another holder's lease is still valid; `failed`: a lock call failed. */
      readonly reason: 'held' | 'failed'
      /** The holder as last observed (`''` when none or unknown). */
      readonly holder: string
      readonly error?: unknown
    }

/** What the driver observed. `now` is local monotonic ms when the result arrived. */
export type LockResult =
  | { readonly type: 'read'; readonly record: LeaderElectionRecord | undefined; readonly now: number }
  | { readonly type: 'written'; readonly now: number }
  | { readonly type: 'failed'; readonly error: unknown; readonly now: number }

/** A transition: the new state and what to do next. */
export interface Transition {
  readonly state: ElectionState
  readonly command: Command
}

/** The state of a candidate that has seen nothing yet. */
export function initialState(identity: string, leaseDurationSeconds: number): ElectionState {
  return { identity, leaseDurationSeconds, observed: undefined, renewedAt: undefined, attempt: undefined }
}

/** Whether the observed lease is still valid at local monotonic `now` (client-go `isLeaseValid`). */
export function isLeaseValid(observed: Observation | undefined, now: number): boolean {
  return observed !== undefined && observed.at + observed.record.leaseDurationSeconds * 1000 > now
}

/** Whether the last observed record names this candidate (client-go `IsLeader`). */
export function isHolder(state: ElectionState): boolean {
  return state.observed !== undefined && state.observed.record.holderIdentity === state.identity
}

/** The holder as last observed; `''` when none. */
export function observedHolder(state: ElectionState): string {
  return state.observed?.record.holderIdentity ?? ''
}

/** Records a read: the observation time moves only when the record changed. */
export function observe(
  state: ElectionState,
  record: LeaderElectionRecord | undefined,
  now: number,
): ElectionState {
  if (record === undefined) return state
  const key = recordKey(record)
  if (state.observed?.key === key) return state
  return { ...state, observed: { record, key, at: now } }
}

/** Forgets leadership (the driver gave up or stopped): no renew time until the next acquisition. */
export function stepDown(state: ElectionState): ElectionState {
  return { ...state, renewedAt: undefined, attempt: undefined }
}

/**
 * Starts an attempt at monotonic `now` and wall-clock `wallNow` (used only for the timestamps
 * written). The holder of a lease it still considers valid first tries the fast path: an update of
 * the cached object with a new `renewTime`; everyone else reads first.
 */
export function begin(state: ElectionState, now: number, wallNow: number): Transition {
  const observed = state.observed
  if (observed !== undefined && isHolder(state) && isLeaseValid(observed, now)) {
    const record: LeaderElectionRecord = {
      holderIdentity: state.identity,
      leaseDurationSeconds: state.leaseDurationSeconds,
      acquireTime: observed.record.acquireTime,
      renewTime: formatMicroTime(wallNow),
      leaderTransitions: observed.record.leaderTransitions,
    }
    return {
      state: { ...state, attempt: { phase: 'fast-update', wallNow, writeAt: now, record } },
      command: { op: 'update', record },
    }
  }
  return { state: { ...state, attempt: { phase: 'get', wallNow } }, command: { op: 'get' } }
}

/** Feeds the result of the command last returned; returns the next one. */
export function step(state: ElectionState, result: LockResult): Transition {
  const attempt = state.attempt
  if (attempt === undefined) throw new Error('leader election state: step() without begin()')
  switch (attempt.phase) {
    case 'fast-update':
      if (result.type === 'written')
        return wrote(state, attempt.record, attempt.writeAt, result.now, 'fast', false)
      // Any failure (typically a conflict): fall back to a fresh read (client-go slow path).
      return {
        state: { ...state, attempt: { phase: 'get', wallNow: attempt.wallNow } },
        command: { op: 'get' },
      }
    case 'get':
      if (result.type === 'failed') return done(state, failed(state, result.error))
      if (result.type !== 'read') return unexpected(attempt.phase, result)
      return afterRead(state, attempt.wallNow, result.record, result.now)
    case 'create':
    case 'update':
      if (result.type === 'written') {
        return wrote(state, attempt.record, attempt.writeAt, result.now, 'slow', attempt.transition)
      }
      if (result.type === 'failed') return done(state, failed(state, result.error))
      return unexpected(attempt.phase, result)
  }
}

function afterRead(
  state: ElectionState,
  wallNow: number,
  record: LeaderElectionRecord | undefined,
  now: number,
): Transition {
  const stamp = formatMicroTime(wallNow)
  if (record === undefined) {
    const created: LeaderElectionRecord = {
      holderIdentity: state.identity,
      leaseDurationSeconds: state.leaseDurationSeconds,
      acquireTime: stamp,
      renewTime: stamp,
      leaderTransitions: 0,
    }
    return write(state, 'create', wallNow, now, created, true)
  }
  const seen = observe(state, record, now)
  const holder = record.holderIdentity
  const ours = holder === state.identity
  if (holder !== '' && !ours && isLeaseValid(seen.observed, now)) {
    return done(seen, { acquired: false, reason: 'held', holder })
  }
  const next: LeaderElectionRecord = ours
    ? {
        holderIdentity: state.identity,
        leaseDurationSeconds: state.leaseDurationSeconds,
        acquireTime: record.acquireTime,
        renewTime: stamp,
        leaderTransitions: record.leaderTransitions,
      }
    : {
        holderIdentity: state.identity,
        leaseDurationSeconds: state.leaseDurationSeconds,
        acquireTime: stamp,
        renewTime: stamp,
        leaderTransitions: record.leaderTransitions + 1,
      }
  return write(seen, 'update', wallNow, now, next, !ours)
}

function write(
  state: ElectionState,
  op: 'create' | 'update',
  wallNow: number,
  now: number,
  record: LeaderElectionRecord,
  transition: boolean,
): Transition {
  return {
    state: { ...state, attempt: { phase: op, wallNow, writeAt: now, record, transition } },
    command: { op, record },
  }
}

function wrote(
  state: ElectionState,
  record: LeaderElectionRecord,
  writeAt: number,
  now: number,
  path: 'fast' | 'slow',
  transition: boolean,
): Transition {
  const next: ElectionState = {
    ...state,
    observed: { record, key: recordKey(record), at: now },
    renewedAt: writeAt,
    attempt: undefined,
  }
  return { state: next, command: { op: 'done', outcome: { acquired: true, path, transition } } }
}

function failed(state: ElectionState, error: unknown): AttemptOutcome {
  return { acquired: false, reason: 'failed', holder: observedHolder(state), error }
}

function done(state: ElectionState, outcome: AttemptOutcome): Transition {
  return { state: { ...state, attempt: undefined }, command: { op: 'done', outcome } }
}

function unexpected(phase: string, result: LockResult): never {
  throw new Error(`leader election state: result ${result.type} while in phase ${phase}`)
}

/** The complete record a release writes (kubernetes/kubernetes#80954): no holder, 1 s, fresh times, transitions kept. */
export function releaseRecord(current: LeaderElectionRecord, wallNow: number): LeaderElectionRecord {
  const stamp = formatMicroTime(wallNow)
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: stamp,
    renewTime: stamp,
    leaderTransitions: current.leaderTransitions,
  }
}
