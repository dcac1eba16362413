/**
 * @module release — hands the lease over on a clean stop (client-go `release`, `ReleaseOnCancel`).
 *
 * Each rule is an upstream fix: bounded by the renew deadline (kubernetes/kubernetes#124588, it used an unbounded
 * context and could hang shutdown); re-reads the Lease so the write carries its current
 * resourceVersion (kubernetes/kubernetes#132849); after a 409 — typically a renew that was already on the wire when the
 * stop came — reads and writes again (kubernetes/kubernetes#137988); writes a complete record (kubernetes/kubernetes#80954, a release
 * that wrote only `leaseTransitions` broke LeaseLock-based election).
 */

import { type Clock, sleep } from '../core/clock.ts'
import { deadlineSignal } from '../core/deadline.ts'
import { EdgeopError, errorMessage, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import { isConflict } from '../transport/api-error.ts'
import type { LockCalls } from './lock-calls.ts'
import type { LeaderElectionRecord } from './record.ts'
import { releaseRecord } from './state.ts'
import type { ElectionTiming } from './timing.ts'

/** What a release needs from its elector. */
export interface ReleaseContext {
  readonly calls: LockCalls
  readonly identity: string
  readonly clock: Clock
  readonly timing: ElectionTiming
  readonly log: Logger
  /** Told every record read or written (to keep the elector's observation current). */
  observe(record: LeaderElectionRecord | undefined): void
}

/**
 * Releases the lease if the current record still names us.
 *
 * Guarantees: returns within `renewDeadlineMs` (on the context's clock) whatever the lock does; starts
 * only after our previous lock call has settled (never two of our calls in flight); writes only over
 * the version it has just read, and only if that version names us; the written record is complete:
 * `holderIdentity: ''`, `leaseDurationSeconds: 1`, `acquireTime = renewTime = now`, `leaseTransitions`
 * unchanged. Conflicts are retried at once, other retryable errors after a retry period.
 *
 * Does not guarantee: that the lease is released — on failure it is logged and the lease expires as
 * usual. Returns whether a released record was written.
 */
export async function releaseLease(ctx: ReleaseContext): Promise<boolean> {
  const { signal, dispose } = deadlineSignal(
    ctx.clock,
    ctx.timing.renewDeadlineMs,
    () => new EdgeopError('EDGEOP_ERR_TIMEOUT', `release took longer than ${ctx.timing.renewDeadlineMs} ms`),
  )
  try {
    await ctx.calls.idle(signal)
    while (!signal.aborted) {
      let current: LeaderElectionRecord | undefined
      try {
        current = await ctx.calls.run((lock, s) => lock.get(s), signal)
      } catch (err) {
        if (await retry(ctx, err, signal)) continue
        return false
      }
      ctx.observe(current)
      if (current === undefined || current.holderIdentity !== ctx.identity) {
        ctx.log.info('not the holder any more; nothing to release')
        return false
      }
      const released = releaseRecord(current, ctx.clock.now())
      try {
        await ctx.calls.run((lock, s) => lock.update(released, s), signal)
      } catch (err) {
        if (isConflict(err)) {
          ctx.log.info('release conflicted with another write; reading the lease again')
          continue
        }
        if (await retry(ctx, err, signal)) continue
        return false
      }
      ctx.observe(released)
      ctx.log.info('released the lease')
      return true
    }
    return false
  } finally {
    dispose()
  }
}

/** After a failed call: waits a retry period and returns true when it is worth trying again. */
async function retry(ctx: ReleaseContext, err: unknown, signal: AbortSignal): Promise<boolean> {
  const retryable = isEdgeopError(err) && err.retryable && !signal.aborted
  ctx.log.warn('failed to release the lease', { error: errorMessage(err), retrying: retryable })
  if (!retryable) return false
  try {
    await sleep(ctx.timing.retryPeriodMs, ctx.clock, signal)
    return true
  } catch {
    return false
  }
}
