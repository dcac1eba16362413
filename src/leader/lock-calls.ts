/**
 * @module lock-calls — how one candidate talks to its lock: one call at a time, each bounded.
 *
 * The elector never has two calls on its lock in flight: a call it stopped waiting for (its signal
 * aborted) is still tracked until it settles, so the release can wait for it instead of racing it.
 */
import { raceAbort } from '../core/abort.ts'
import type { ResourceLock } from './lock.ts'

const noop = (): void => {}

/**
 * A {@link ResourceLock} whose calls are tracked.
 *
 * Guarantees: `run` rejects with the signal's reason as soon as the signal aborts, even when the lock
 * ignores the signal; `idle` resolves only once the last call has really settled (or its own signal
 * aborts).
 */
export class LockCalls {
  readonly lock: ResourceLock
  /** The last call started; settles (never rejects) when that call does. */
  #last: Promise<void> = Promise.resolve()

  constructor(lock: ResourceLock) {
    this.lock = lock
  }

  /** Starts `call(signal)` and waits for it, or until `signal` aborts. */
  run<T>(call: (lock: ResourceLock, signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    const pending = call(this.lock, signal)
    this.#last = pending.then(noop, noop)
    return raceAbort(pending, signal, () => signal.reason)
  }

  /** Resolves when the last call has settled, or when `signal` aborts (never rejects). */
  idle(signal: AbortSignal): Promise<void> {
    return raceAbort(this.#last, signal).catch(noop)
  }
}
