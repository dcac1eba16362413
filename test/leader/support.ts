/**
 * @module support — a fake lock over an in-memory compare-and-swap cell, and a clock driver, for the
 * leader election unit tests. Nothing here sleeps: time moves only through {@link runFor}.
 */

import type { Clock, ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import type { ResourceLock } from '../../src/leader/lock.ts'
import type { LeaderElectorOptions } from '../../src/leader/options.ts'
import { formatMicroTime, type LeaderElectionRecord } from '../../src/leader/record.ts'
import { ApiError } from '../../src/transport/api-error.ts'

/** The "server": one record and a version bumped by every write. */
export class FakeLeaseStore {
  record: LeaderElectionRecord | undefined
  version = 0
  /** Every committed write, oldest first. */
  readonly writes: { by: string; record: LeaderElectionRecord }[] = []

  /** A write by someone outside the election (or a late commit), bumping the version. */
  forceWrite(record: LeaderElectionRecord, by = 'outsider'): void {
    this.record = record
    this.version++
    this.writes.push({ by, record })
  }
}

/** What an intercepted call does instead of (or after) behaving normally. */
export type FakeAction =
  /** Reject with `error`; nothing is written. */
  | { type: 'error'; error: unknown }
  /** Never answer; reject with the signal's reason when it aborts. */
  | { type: 'hang' }
  /** Never answer at all, ignoring the signal (a lock that does not honour signals). */
  | { type: 'deaf' }
  /** Behave normally, then run `effect` before the caller sees the answer. */
  | { type: 'after'; effect: () => void }
  /** Commit at once, but answer `ms` later on the clock (a slow response). */
  | { type: 'slow'; ms: number }
  /** Ignore the signal; commit and answer `ms` later on the clock (a request already on the wire). */
  | { type: 'late'; ms: number }

/** One call as the fake saw it. */
export interface FakeCall {
  op: 'get' | 'create' | 'update'
  /** Monotonic time the call was made. */
  at: number
  record?: LeaderElectionRecord
  /** How it ended, once it has. */
  result?: 'ok' | 'conflict' | 'exists' | 'error' | 'aborted'
  /** Monotonic time it ended, once it has. */
  endAt?: number
}

/**
 * A {@link ResourceLock} over a {@link FakeLeaseStore} with LeaseLock's semantics: `update` succeeds only
 * if the store's version is the one last read or written by this lock, and a failure keeps that version.
 */
export class FakeLock implements ResourceLock {
  readonly identity: string
  readonly calls: FakeCall[] = []
  /** Return an action to change the behaviour of one call; undefined behaves normally. */
  intercept: ((call: FakeCall) => FakeAction | undefined) | undefined
  readonly #store: FakeLeaseStore
  readonly #clock: Clock
  #version: number | undefined

  constructor(store: FakeLeaseStore, identity: string, clock: Clock) {
    this.#store = store
    this.identity = identity
    this.#clock = clock
  }

  describe(): string {
    return 'test/lease'
  }

  /** Version this lock would send with its next update. */
  get cachedVersion(): number | undefined {
    return this.#version
  }

  get(signal?: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    return this.#run({ op: 'get', at: this.#clock.monotonic() }, signal, () => {
      this.#version = this.#store.version
      return this.#store.record === undefined ? undefined : { ...this.#store.record }
    })
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    await this.#run({ op: 'create', at: this.#clock.monotonic(), record }, signal, (call) => {
      if (this.#store.record !== undefined) {
        call.result = 'exists'
        throw apiError(409, 'AlreadyExists', 'POST')
      }
      this.#store.forceWrite(record, this.identity)
      this.#version = this.#store.version
      return undefined
    })
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    await this.#run({ op: 'update', at: this.#clock.monotonic(), record }, signal, (call) => {
      if (this.#version === undefined) {
        throw new EdgeopError('EDGEOP_ERR_LEADER', 'lease test/lease not initialized: get or create it first')
      }
      if (this.#version !== this.#store.version) {
        call.result = 'conflict'
        throw apiError(409, 'Conflict', 'PUT')
      }
      this.#store.forceWrite(record, this.identity)
      this.#version = this.#store.version
      return undefined
    })
  }

  async #run<T>(call: FakeCall, signal: AbortSignal | undefined, normal: (call: FakeCall) => T): Promise<T> {
    try {
      return await this.#perform(call, signal, normal)
    } finally {
      call.endAt = this.#clock.monotonic()
    }
  }

  async #perform<T>(
    call: FakeCall,
    signal: AbortSignal | undefined,
    normal: (call: FakeCall) => T,
  ): Promise<T> {
    this.calls.push(call)
    const action = this.intercept?.(call)
    await Promise.resolve()
    if (action?.type === 'late') await new Promise<void>((r) => this.#clock.setTimer(r, action.ms))
    else if (signal?.aborted) {
      call.result = 'aborted'
      throw signal.reason
    }
    if (action?.type === 'error') {
      call.result = 'error'
      throw action.error
    }
    if (action?.type === 'deaf') return new Promise<T>(() => {})
    if (action?.type === 'hang') {
      return new Promise<T>((_, reject) => {
        signal?.addEventListener(
          'abort',
          () => {
            call.result = 'aborted'
            reject(signal.reason)
          },
          { once: true },
        )
      })
    }
    try {
      const value = normal(call)
      call.result = 'ok'
      if (action?.type === 'after') action.effect()
      if (action?.type === 'slow') await new Promise<void>((r) => this.#clock.setTimer(r, action.ms))
      return value
    } catch (err) {
      call.result ??= 'error'
      throw err
    }
  }
}

/** An `ApiError` like the server's. */
export function apiError(status: number, reason: string, method = 'GET'): ApiError {
  return new ApiError({
    status,
    reason,
    message: `injected ${status} ${reason}`,
    method,
    path: '/apis/coordination.k8s.io/v1/namespaces/test/leases/lease',
  })
}

/** A clock that shares `base`'s timers and time flow but reads a different wall clock and monotonic origin. */
export function skewed(base: ManualClock, wallOffsetMs: number, monotonicOffsetMs = 0): Clock {
  return {
    now: () => base.now() + wallOffsetMs,
    monotonic: () => base.monotonic() + monotonicOffsetMs,
    setTimer: (fn, ms) => base.setTimer(fn, ms),
  }
}

/** Lets every pending promise chain (fake calls resolve in microtasks) run to its end. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

/**
 * Moves `clock` forward by `ms`, one timer at a time, letting all async work triggered by each timer
 * finish before the next one fires (so a timer set by that work lands at the right virtual time).
 */
export async function runFor(clock: ManualClock, ms: number): Promise<void> {
  const target = clock.monotonic() + ms
  for (;;) {
    await settle()
    const next = clock.nextDeadline()
    if (next === undefined || next > target) break
    await clock.advance(Math.max(0, next - clock.monotonic()))
  }
  await clock.advance(target - clock.monotonic())
  await settle()
}

/** Short timings used by most tests: lease 3 s, renew deadline 2 s, retry 0.5 s, no jitter (random 0). */
export const FAST = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 } as const

/** A record as another process would have written it. */
export function heldBy(
  holder: string,
  wallMs: number,
  extra: Partial<LeaderElectionRecord> = {},
): LeaderElectionRecord {
  const stamp = formatMicroTime(wallMs)
  return {
    holderIdentity: holder,
    leaseDurationSeconds: 3,
    acquireTime: stamp,
    renewTime: stamp,
    leaderTransitions: 0,
    ...extra,
  }
}

/** A running candidate with its event log. */
export interface Candidate {
  readonly id: string
  readonly lock: FakeLock
  readonly elector: LeaderElector
  /** `new-leader:<id>`, `started@<t>`, `aborted@<t>:<code>`, `stopped@<t>`. */
  readonly events: string[]
  /** The leader signal of the last `onStartedLeading`. */
  leaderSignal: AbortSignal | undefined
  /** Settles like `run`; never rejects (see `error`). */
  readonly done: Promise<void>
  /** Set when `run` rejected. */
  error: unknown
  /** Set when `run` settled (monotonic ms). */
  endedAt: number | undefined
  stop(): void
}

/** Starts a candidate on `store` whose callbacks log to `events`. */
export function candidate(
  store: FakeLeaseStore,
  clock: ManualClock,
  id: string,
  options: Partial<LeaderElectorOptions> & { clock?: Clock } = {},
): Candidate {
  const own = options.clock ?? clock
  const lock = new FakeLock(store, id, own)
  const events: string[] = []
  const ac = new AbortController()
  const elector = new LeaderElector({
    ...FAST,
    random: () => 0,
    onNewLeader: (leader) => events.push(`new-leader:${leader}`),
    ...options,
    lock,
    clock: own,
  })
  const c: Candidate = {
    id,
    lock,
    elector,
    events,
    leaderSignal: undefined,
    error: undefined,
    endedAt: undefined,
    stop: () => ac.abort(),
    done: Promise.resolve(),
  }
  const done = elector
    .run(
      {
        onStartedLeading: (signal) => {
          c.leaderSignal = signal
          events.push(`started@${clock.monotonic()}`)
          signal.addEventListener('abort', () =>
            events.push(`aborted@${clock.monotonic()}:${(signal.reason as { code?: string }).code}`),
          )
        },
        onStoppedLeading: () => events.push(`stopped@${clock.monotonic()}`),
      },
      ac.signal,
    )
    .catch((err: unknown) => {
      c.error = err
    })
    .finally(() => {
      c.endedAt = clock.monotonic()
    })
  return Object.assign(c, { done })
}

/** The monotonic time of the first event starting with `prefix` (e.g. `started`), or undefined. */
export function eventTime(c: Candidate, prefix: string): number | undefined {
  const e = c.events.find((x) => x.startsWith(`${prefix}@`))
  return e === undefined ? undefined : Number(e.slice(prefix.length + 1).split(':')[0])
}
