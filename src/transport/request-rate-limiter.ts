/**
 * @module request-rate-limiter — client-side request throttling (client-go `flowcontrol`).
 */
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import { TokenBucket } from '../core/token-bucket.ts'

/** client-go `rest.DefaultQPS`: 5 requests per second when QPS is left at 0. */
export const DEFAULT_QPS = 5
/** client-go `rest.DefaultBurst`: 10 when burst is left at 0. */
export const DEFAULT_BURST = 10

/** Throttles requests. `wait` resolves when the request may go, with the milliseconds waited. */
export interface RequestRateLimiter {
  /** Resolves with the ms waited (0: no wait) once the request may go; rejects with `EDGEOP_ERR_ABORTED` if `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<number>
}

/** A limiter that never waits (QPS < 0: rely on the server's API Priority and Fairness). */
export const unlimited: RequestRateLimiter = { wait: async () => 0 }

/**
 * A token-bucket limiter with client-go's defaulting: `qps === 0` → 5, `burst === 0` → 10,
 * `qps < 0` → no limiter at all. A waiter that is aborted gives its token back.
 */
export function tokenBucketLimiter(qps = 0, burst = 0, clock: Clock = realClock): RequestRateLimiter {
  if (qps < 0) return unlimited
  const bucket = new TokenBucket({
    qps: qps === 0 ? DEFAULT_QPS : qps,
    burst: burst === 0 ? DEFAULT_BURST : burst,
    clock,
  })
  return {
    async wait(signal) {
      const delay = bucket.reserve()
      if (delay === 0) return 0
      try {
        await sleep(delay, clock, signal)
      } catch (cause) {
        bucket.cancelReservation()
        throw new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted while waiting for the client rate limiter', {
          step: 'client rate limiter',
          cause,
        })
      }
      return delay
    },
  }
}
