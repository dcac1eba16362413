/**
 * @module elector — the driver: acquire, renew, give up, release, on an injected clock.
 *
 * client-go `tools/leaderelection/leaderelection.go` (`Run`, `acquire`, `renew`, `release`), with the
 * decisions in the pure `state.ts` and every wait on a {@link Clock}, so unit tests never sleep.
 *
 * **No fencing.** Like client-go, this does not guarantee that only one process acts as leader at any
 * instant: a paused process (GC, SIGSTOP, a VM freeze) or clocks running at different *rates* can make
 * a deposed leader act after another has started. What it guarantees is bounded by local time:
 * the leader stops at most `renewDeadlineMs` after the start of its last successful renewal, while
 * others wait at least `leaseDurationSeconds` after they saw that renewal. Everything a leader does
 * must therefore stay idempotent and guarded by optimistic concurrency (resourceVersion) on the
 * objects it writes.
 */
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { deadlineSignal } from '../core/deadline.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { runAttempt } from './attempt.ts'
import type { ResourceLock } from './lock.ts'
import { LockCalls } from './lock-calls.ts'
import type { LeaderCallbacks, LeaderElectorOptions } from './options.ts'
import { releaseLease } from './release.ts'
import {
  type AttemptOutcome,
  type ElectionState,
  initialState,
  observe,
  observedHolder,
  stepDown,
} from './state.ts'
import { type ElectionTiming, jitteredRetry, leaseDurationSeconds, resolveTiming } from './timing.ts'

/**
 * How far past its renew deadline a process may still believe it leads before {@link LeaderElector.check}
 * fails: 20 s, the value kube-controller-manager and kube-scheduler give client-go's
 * `NewLeaderHealthzAdaptor`.
 */
export const DEFAULT_HEALTH_TOLERANCE_MS = 20_000

/**
 * The first renewal attempt after a success gets a third of the renew deadline. A request sent on a
 * connection that died without a reset (a NAT or firewall dropping the flow) never answers; given the
 * whole deadline it would cost the lease, cut short it leaves room for more attempts, which the
 * transport sends on a new connection (it retires an HTTP/2 connection whose request timed out
 * waiting for headers). Those get the rest of the deadline: a new connection costs round trips.
 * client-go gives each attempt the whole deadline and loses the lease then (openshift/library-go#636 met it).
 */
export const RENEW_ATTEMPTS_PER_DEADLINE = 3

const noop = (): void => {}

/**
 * A leader election candidate (client-go `LeaderElector`).
 *
 * Guarantees:
 * - a non-leader takes over only when the record is free (`holderIdentity: ''`), or it has not seen
 *   the record change for the record's own `leaseDurationSeconds`, measured on the local monotonic
 *   clock (immune to wall-clock skew between candidates); a takeover increments `leaseTransitions`;
 * - every write is a compare-and-swap on the resourceVersion last read, so two candidates racing for a
 *   free lease cannot both win;
 * - the leader renews every `retryPeriodMs`; if no renewal has succeeded `renewDeadlineMs` after the
 *   start of the last successful one, it stops leading *at that instant* (the leader signal aborts),
 *   which is before any other candidate can consider the lease expired (given equal clock rates);
 * - when the record names another holder, it stops leading at once;
 * - the release writes a complete record, is bounded by `renewDeadlineMs`, is retried after a
 *   conflict with a fresh read, and never overlaps a lock call of our own renew loop.
 *
 * Does not guarantee: fencing (see the module doc); progress when the lock's calls ignore their
 * signal (the elector stops waiting for them, but cannot stop them).
 *
 * When leadership is lost, `run` rejects with `EDGEOP_ERR_LEADER`. The operator's main should then
 * exit non-zero so the pod restarts clean, as controller-runtime does ("leader election lost"); see
 * {@link runWhileLeading}.
 *
 * @example
 * const elector = new LeaderElector({ lock, releaseOnCancel: true })
 * await elector.run({ onStartedLeading: (signal) => controller.run(signal), onStoppedLeading() {} }, shutdown)
 */
export class LeaderElector {
  /** The lock this elector competes for. */
  readonly lock: ResourceLock
  /** Lease duration, renew deadline and retry period, validated. */
  readonly timing: ElectionTiming
  /** Whether a cancelled leader clears the Lease so a successor need not wait for it to expire. */
  readonly releaseOnCancel: boolean
  /** How long a cancelled leader waits for its work to settle before giving up on releasing. */
  readonly stopGraceMs: number
  readonly #onNewLeader: ((identity: string) => void) | undefined
  readonly #clock: Clock
  readonly #random: () => number
  readonly #log: Logger
  readonly #keepAlive: boolean
  #state: ElectionState
  #reported = ''
  #leading = false
  #started = false
  readonly #calls: LockCalls

  /** Validates the lock and timing (lease > renew > retry × 1.2), throwing `EDGEOP_ERR_INVALID` otherwise; starts nothing. */
  constructor(options: LeaderElectorOptions) {
    const lock = options.lock
    if (lock === undefined || lock === null) throw invalid('lock is required')
    if (typeof lock.identity !== 'string' || lock.identity === '') throw invalid('the lock identity is empty')
    this.lock = lock
    this.timing = resolveTiming(options)
    this.releaseOnCancel = options.releaseOnCancel ?? false
    this.stopGraceMs = options.stopGraceMs ?? this.timing.leaseDurationMs - this.timing.renewDeadlineMs
    if (!Number.isFinite(this.stopGraceMs) || this.stopGraceMs < 0) {
      throw invalid(`stopGraceMs must be a finite number ≥ 0, got ${String(options.stopGraceMs)}`)
    }
    this.#onNewLeader = options.onNewLeader
    this.#clock = options.clock ?? realClock
    this.#random = options.random ?? Math.random
    this.#keepAlive = options.keepAlive ?? this.#clock === realClock
    this.#log = (options.logger ?? noopLogger).child({ lease: lock.describe(), identity: lock.identity })
    this.#state = initialState(lock.identity, leaseDurationSeconds(this.timing))
    this.#calls = new LockCalls(lock)
  }

  /** This candidate's identity. */
  get identity(): string {
    return this.lock.identity
  }

  /** True between acquiring and the moment leadership ends (lost, or stopping). */
  isLeader(): boolean {
    return this.#leading
  }

  /**
   * The fencing token of this leadership: the Lease's `leaseTransitions` as this leader wrote it,
   * which every change of holder increases, so a deposed leader's token is lower than its
   * successor's. Undefined while not leading. An external system that refuses writes carrying a
   * token lower than one it has seen cannot be written by a deposed leader after its successor.
   */
  fencingToken(): number | undefined {
    return this.#leading ? this.#state.observed?.record.leaderTransitions : undefined
  }

  /** The holder as last observed (`''` when none or not yet known). */
  leader(): string {
    return observedHolder(this.#state)
  }

  /**
   * The health check (client-go `HealthzAdaptor`): an error when this process believes it leads but
   * its last successful renewal started more than `renewDeadlineMs + toleranceMs` ago — a wedged
   * leader, since a healthy one steps down at the deadline. Undefined (healthy) otherwise, including
   * whenever it is not the leader. (client-go measures `LeaseDuration` + tolerance from the last
   * observed change; edgeop measures from the point where its own leader must already have stopped.)
   */
  check(toleranceMs: number = DEFAULT_HEALTH_TOLERANCE_MS): EdgeopError | undefined {
    const renewedAt = this.#state.renewedAt
    if (!this.#leading || renewedAt === undefined) return undefined
    const since = this.#clock.monotonic() - renewedAt
    if (since <= this.timing.renewDeadlineMs + toleranceMs) return undefined
    return new EdgeopError(
      'EDGEOP_ERR_LEADER',
      `leader election: this process believes it holds ${this.lock.describe()} but its last renewal started ` +
        `${Math.round(since)} ms ago (renew deadline ${this.timing.renewDeadlineMs} ms + tolerance ${toleranceMs} ms)`,
      { step: 'leader election health check' },
    )
  }

  /** `check(toleranceMs) === undefined`: for readiness/liveness probes. */
  healthy(toleranceMs?: number): boolean {
    return this.check(toleranceMs) === undefined
  }

  /**
   * Campaigns until `signal` aborts or leadership is lost. Resolves after a clean stop (signal aborted,
   * work settled, lease released if configured); rejects with `EDGEOP_ERR_LEADER` when leadership was
   * lost. `onStoppedLeading` is called in both cases, and also when this process never led.
   * An elector runs once.
   */
  async run(callbacks: LeaderCallbacks, signal?: AbortSignal): Promise<void> {
    if (typeof callbacks?.onStartedLeading !== 'function') throw invalid('onStartedLeading is required')
    if (typeof callbacks.onStoppedLeading !== 'function') throw invalid('onStoppedLeading is required')
    if (this.#started) throw invalid('this elector has already run; create a new one')
    this.#started = true
    const keepAlive = this.#keepAlive ? setInterval(noop, 1 << 30) : undefined
    try {
      if (await this.#acquire(signal)) await this.#lead(callbacks, signal)
    } finally {
      clearInterval(keepAlive)
      this.#leading = false
      this.#state = stepDown(this.#state)
      try {
        callbacks.onStoppedLeading()
      } catch (err) {
        this.#log.error('onStoppedLeading threw', { error: errorMessage(err) })
      }
    }
  }

  /** Attempts until one succeeds (true) or `signal` aborts (false); waits are jittered (client-go). */
  async #acquire(signal: AbortSignal | undefined): Promise<boolean> {
    this.#log.info('attempting to acquire the lease')
    for (;;) {
      if (signal?.aborted) return false
      const outcome = await this.#attempt(signal, this.timing.renewDeadlineMs)
      if (outcome.acquired) {
        this.#log.info('acquired the lease', { transition: outcome.transition })
        return true
      }
      if (outcome.reason === 'failed' && !signal?.aborted) {
        this.#log.warn('failed to acquire the lease', { error: errorMessage(outcome.error) })
      }
      try {
        await sleep(jitteredRetry(this.timing, this.#random), this.#clock, signal)
      } catch {
        return false
      }
    }
  }

  /** Leads: starts the work, renews until stopped or lost, then stops the work and releases. */
  async #lead(callbacks: LeaderCallbacks, signal: AbortSignal | undefined): Promise<void> {
    const leader = new AbortController()
    const loop = new AbortController()
    let lost: EdgeopError | undefined
    const end = (reason: EdgeopError): void => {
      if (loop.signal.aborted) return
      this.#leading = false
      // The moment leadership ends: the work's signal first, then the renew loop.
      leader.abort(reason)
      loop.abort(reason)
    }
    const lose = (why: string): void => {
      if (loop.signal.aborted) return
      lost = new EdgeopError('EDGEOP_ERR_LEADER', `leader election lost: ${why}`, {
        step: `renew lease ${this.lock.describe()}`,
      })
      this.#log.error('leader election lost', { reason: why })
      end(lost)
    }
    const cancel = (): void =>
      end(new EdgeopError('EDGEOP_ERR_ABORTED', 'leader election stopped', { cause: signal?.reason }))
    signal?.addEventListener('abort', cancel, { once: true })
    let disarm = this.#armDeadline(lose)
    this.#leading = true
    let work: Promise<void> | undefined
    // Stopped during the winning attempt: hand the lease back without starting any work.
    if (signal?.aborted) cancel()
    else {
      try {
        const started = callbacks.onStartedLeading(leader.signal)
        if (isThenable(started)) {
          work = Promise.resolve(started).then(noop, (err: unknown) => {
            if (!leader.signal.aborted)
              this.#log.error('the leader work failed', { error: errorMessage(err) })
          })
        }
      } catch (err) {
        this.#log.error('onStartedLeading threw', { error: errorMessage(err) })
      }
    }
    let failing = false
    try {
      while (!loop.signal.aborted) {
        try {
          await sleep(this.timing.retryPeriodMs, this.#clock, loop.signal)
        } catch {
          break
        }
        // Timers may fire late or out of order (a stalled event loop): never renew past the deadline.
        if (this.#clock.monotonic() >= (this.#state.renewedAt ?? 0) + this.timing.renewDeadlineMs) {
          lose(`no successful renewal within the renew deadline (${this.timing.renewDeadlineMs} ms)`)
          break
        }
        // The first attempt after a renewal is cut short (see RENEW_ATTEMPTS_PER_DEADLINE); later ones
        // run on a new connection, whose handshake a slow link makes long: they get the rest of the deadline.
        const outcome = await this.#attempt(
          loop.signal,
          failing ? undefined : Math.floor(this.timing.renewDeadlineMs / RENEW_ATTEMPTS_PER_DEADLINE),
        )
        if (loop.signal.aborted) break
        failing = !outcome.acquired
        if (outcome.acquired) {
          disarm()
          disarm = this.#armDeadline(lose)
          continue
        }
        const holder = observedHolder(this.#state)
        if (holder !== '' && holder !== this.identity) lose(`the lease is now held by ${holder}`)
        else this.#log.warn('failed to renew the lease', { error: errorMessage(outcome.error) })
      }
    } finally {
      disarm()
      signal?.removeEventListener('abort', cancel)
    }
    this.#state = stepDown(this.#state)
    const stopped = work === undefined || (await this.#settlesWithin(work, this.stopGraceMs))
    if (!stopped) {
      this.#log.warn('the leader work did not stop within the grace period; not releasing the lease', {
        stopGraceMs: this.stopGraceMs,
      })
    } else {
      // The end of this process's leadership as far as work goes: what follows only hands the record back.
      this.#log.info('leader work stopped')
      if (this.releaseOnCancel)
        await releaseLease({
          calls: this.#calls,
          identity: this.identity,
          clock: this.#clock,
          timing: this.timing,
          log: this.#log,
          observe: (record) => {
            this.#state = observe(this.#state, record, this.#clock.monotonic())
          },
        })
    }
    if (lost !== undefined) throw lost
  }

  /** Loses leadership at `renewedAt + renewDeadline` unless disarmed first. */
  #armDeadline(lose: (why: string) => void): () => void {
    const renewedAt = this.#state.renewedAt ?? this.#clock.monotonic()
    const deadline = renewedAt + this.timing.renewDeadlineMs
    return this.#clock.setTimer(
      () => lose(`no successful renewal within the renew deadline (${this.timing.renewDeadlineMs} ms)`),
      deadline - this.#clock.monotonic(),
    )
  }

  /** One attempt, bounded by `signal` and, when given, `timeoutMs`; reports a new holder. */
  async #attempt(signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<AttemptOutcome> {
    const bound = deadlineSignal(
      this.#clock,
      timeoutMs,
      () =>
        new EdgeopError('EDGEOP_ERR_TIMEOUT', `lease attempt took longer than ${timeoutMs} ms`, {
          retryable: true,
        }),
      signal,
    )
    try {
      const { state, outcome } = await runAttempt(this.#calls, this.#state, this.#clock, bound.signal)
      this.#state = state
      this.#report()
      return outcome
    } finally {
      bound.dispose()
    }
  }

  /** Reports a new observed holder to `onNewLeader`. */
  #report(): void {
    const holder = observedHolder(this.#state)
    if (holder === this.#reported) return
    this.#reported = holder
    if (this.#onNewLeader === undefined) return
    try {
      this.#onNewLeader(holder)
    } catch (err) {
      this.#log.error('onNewLeader threw', { error: errorMessage(err) })
    }
  }

  /** Resolves true when `work` settles within `ms`, false otherwise. */
  async #settlesWithin(work: Promise<void>, ms: number): Promise<boolean> {
    let disarm = noop
    const timedOut = new Promise<boolean>((resolve) => {
      disarm = this.#clock.setTimer(() => resolve(false), ms)
    })
    try {
      return await Promise.race([work.then(() => true), timedOut])
    } finally {
      disarm()
    }
  }
}

function invalid(message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_INVALID', `leader election: ${message}`, {
    step: 'create leader elector',
  })
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}
