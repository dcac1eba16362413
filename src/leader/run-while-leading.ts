/**
 * @module run-while-leading — run one function only while this process holds the lease.
 *
 * The shape an operator's main wants: campaign, run the controllers while leading, and learn through
 * one promise whether leadership ended cleanly or was lost.
 */
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import type { LeaderElector } from './elector.ts'

/**
 * Campaigns with `elector` and runs `fn(leaderSignal)` once leadership is acquired.
 *
 * - `leaderSignal` aborts the moment leadership ends. When renewal has failed for the renew deadline
 *   it aborts right then — before the lease can expire for any other candidate — with an
 *   `EDGEOP_ERR_LEADER` reason, so the old leader stops acting before another can start. `fn` must
 *   honour it promptly: the elector waits for `fn` to settle (up to `stopGraceMs`) before releasing.
 * - When `signal` aborts (shutdown): `leaderSignal` aborts, `fn` is awaited, the lease is released if
 *   the elector has `releaseOnCancel`, and the promise resolves with `fn`'s value (undefined if `fn`
 *   never ran, did not settle within the grace period, or rejected with an abort).
 * - When `fn` settles on its own: leadership is given up (released if configured) and the promise
 *   settles like `fn`.
 * - When leadership is **lost**: the promise rejects with `EdgeopError` code `EDGEOP_ERR_LEADER`, once
 *   `fn` has settled (at most `stopGraceMs` after the abort) and, with `releaseOnCancel`, after one
 *   bounded attempt to release (at most `renewDeadlineMs`), as client-go's `Run` does.
 *
 * What the runtime expects on loss: stop and exit non-zero so the pod restarts clean, as
 * controller-runtime does ("leader election lost"). The exit belongs to the operator's main (below).
 * A process that wants to campaign again instead must create a new elector, and must not assume that
 * anything the interrupted `fn` was doing completed.
 *
 * Does not guarantee fencing: reconcilers must stay idempotent (see `elector.ts`).
 *
 * @example
 * const shutdown = new AbortController()
 * process.once('SIGTERM', () => shutdown.abort())
 * const elector = new LeaderElector({ lock, releaseOnCancel: true })
 * try {
 *   await runWhileLeading(elector, (signal) => controller.run(signal), shutdown.signal)
 * } catch (err) {
 *   if (isEdgeopError(err, 'EDGEOP_ERR_LEADER')) process.exit(1)
 *   throw err
 * }
 */
export async function runWhileLeading<T>(
  elector: LeaderElector,
  fn: (signal: AbortSignal) => T | Promise<T>,
  signal?: AbortSignal,
): Promise<T | undefined> {
  const stop = new AbortController()
  const onAbort = (): void => stop.abort(signal?.reason)
  if (signal?.aborted) onAbort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined
  let leaderSignal: AbortSignal | undefined
  try {
    await elector.run(
      {
        onStartedLeading: (s) => {
          leaderSignal = s
          return (async () => fn(s))()
            .then(
              (value) => {
                outcome = { ok: true, value }
              },
              (error: unknown) => {
                outcome = { ok: false, error }
              },
            )
            .finally(() => stop.abort(new EdgeopError('EDGEOP_ERR_ABORTED', 'the leader work finished')))
        },
        onStoppedLeading: () => {},
      },
      stop.signal,
    )
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
  if (outcome === undefined) return undefined
  if (outcome.ok) return outcome.value
  if (signal?.aborted && isAbortLike(outcome.error, leaderSignal)) return undefined
  throw outcome.error
}

function isAbortLike(error: unknown, leaderSignal: AbortSignal | undefined): boolean {
  if (leaderSignal !== undefined && error === leaderSignal.reason) return true
  if (isEdgeopError(error, 'EDGEOP_ERR_ABORTED')) return true
  return error instanceof Error && error.name === 'AbortError'
}
