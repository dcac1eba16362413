/**
 * @module deadline — bound a wait by a time limit on a {@link Clock} and by a caller's signal.
 *
 * `AbortSignal.timeout` runs on the process timers, which unit tests cannot move; these
 * helpers arm their timer on the injected clock, so a {@link ManualClock} drives them.
 */
import { raceAbort } from './abort.ts'
import type { Clock } from './clock.ts'
import { EdgeopError } from './errors.ts'

const noop = (): void => {}

/** A signal bound to a deadline; `dispose` cancels the timer and detaches from the parent. */
export interface Deadline {
  /** Aborts when the time is up (reason: the timeout error) or when the parent signal aborts (its reason). */
  readonly signal: AbortSignal
  /** Idempotent. Call it when the bounded work is over, or the timer keeps the process alive. */
  dispose(): void
}

/**
 * A signal that aborts with `reason()` once `ms` have passed on `clock`, or with
 * `parent`'s reason as soon as `parent` aborts, whichever comes first.
 *
 * `ms` undefined or not finite: no time limit (only `parent` can abort it).
 */
export function deadlineSignal(
  clock: Clock,
  ms: number | undefined,
  reason: () => EdgeopError,
  parent?: AbortSignal,
): Deadline {
  const ac = new AbortController()
  const onAbort = (): void => ac.abort(parent?.reason)
  if (parent?.aborted) onAbort()
  else parent?.addEventListener('abort', onAbort, { once: true })
  const cancel =
    ms === undefined || !Number.isFinite(ms) ? noop : clock.setTimer(() => ac.abort(reason()), ms)
  return {
    signal: ac.signal,
    dispose: () => {
      cancel()
      parent?.removeEventListener('abort', onAbort)
    },
  }
}

/**
 * Settles like `promise`, unless first `ms` pass on `clock` (rejects with `reason()`) or
 * `signal` aborts (rejects with `EDGEOP_ERR_ABORTED`, the signal's reason as cause).
 * The timer is cancelled as soon as the result is known. `promise` itself keeps running
 * (see {@link raceAbort}).
 *
 * @example
 * await withDeadline(informer.whenSynced(), clock, 30_000, () => new EdgeopError('EDGEOP_ERR_TIMEOUT', 'no sync in 30 s'))
 */
export async function withDeadline<T>(
  promise: Promise<T>,
  clock: Clock,
  ms: number | undefined,
  reason: () => EdgeopError,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = deadlineSignal(clock, ms, reason, signal)
  try {
    return await raceAbort(promise, deadline.signal, () =>
      signal?.aborted
        ? new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted', { cause: signal.reason })
        : deadline.signal.reason,
    )
  } finally {
    deadline.dispose()
  }
}
