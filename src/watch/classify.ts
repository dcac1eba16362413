/**
 * @module classify — which failures mean relist, resume or back off, decided by error code.
 *
 * The state machine sees a failure only as a {@link FailureInfo}; this file is the one place that
 * turns an error into one. Errors are matched by their stable `code` (`core/errors.ts`) and, for API
 * errors, by the structured fields of the server's Status (HTTP status, reason, causes) through the
 * predicates of `transport/api-error.ts`; never by message text, which servers, proxies and versions
 * reword.
 *
 * | error                                                         | FailureInfo          | the state machine                                   |
 * | ------------------------------------------------------------- | -------------------- | --------------------------------------------------- |
 * | `EDGEOP_ERR_API` 410 Gone / Expired                           | `expired`            | list from `''` at once (pager: one unpaginated retry) |
 * | `EDGEOP_ERR_API` 504 Timeout or ServerTimeout, cause `ResourceVersionTooLarge` | `tooLargeRv` | list from `''` at once                 |
 * | `EDGEOP_ERR_API` 429                                          | `throttledOrRefused` | back off (≥ Retry-After), retry the same step       |
 * | `EDGEOP_ERR_NETWORK` caused by `ECONNREFUSED`                 | `throttledOrRefused` | back off, retry the same step (client-go `isWatchErrorRetriable`) |
 * | anything else from list or watch open (5xx, 403, reset, timeout) | none set          | back off, relist                                    |
 * | mid-stream `EDGEOP_ERR_DECODE`                                | none set             | back off, relist                                    |
 * | mid-stream anything else (`ECONNRESET`, EOF, idle timeout)    | no failure           | re-watch at once from the last RV (client-go: probable EOF) |
 */

import type { Status } from '../core/types.ts'
import {
  hasStatusCause,
  isGoneOrExpired,
  isServerTimeout,
  isTimeout,
  isTooManyRequests,
} from '../transport/api-error.ts'
import type { FailureInfo } from './events.ts'

/** HTTP status of a watch ERROR event that means the requested resourceVersion is gone (410 Gone/Expired). */
const STATUS_EXPIRED = 410
/** HTTP status of a watch ERROR event that asks the client to slow down (429 TooManyRequests). */
const STATUS_TOO_MANY_REQUESTS = 429
/** Status cause of "Too large resource version": the server's cache is behind the RV (kubernetes/kubernetes#92537). */
const CAUSE_RV_TOO_LARGE = 'ResourceVersionTooLarge'
/** The transport error code of a refused connection (the apiserver is down or restarting). */
const CONNECTION_REFUSED = 'ECONNREFUSED'

const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null | undefined)?.code

/** Classifies an error from list or watch-open for the state machine, by its `code`. */
export function classify(err: unknown): FailureInfo {
  switch (codeOf(err)) {
    case 'EDGEOP_ERR_API': {
      const retryAfter = (err as { retryAfter?: unknown }).retryAfter
      return {
        expired: isGoneOrExpired(err),
        tooLargeRv: (isTimeout(err) || isServerTimeout(err)) && hasStatusCause(err, CAUSE_RV_TOO_LARGE),
        throttledOrRefused: isTooManyRequests(err),
        ...(typeof retryAfter === 'number' ? { retryAfterSeconds: retryAfter } : {}),
        error: err,
      }
    }
    case 'EDGEOP_ERR_NETWORK': {
      const refused = codeOf((err as { cause?: unknown }).cause) === CONNECTION_REFUSED
      return otherFailure(err, refused)
    }
    default:
      return otherFailure(err, false)
  }
}

/**
 * Classifies an error that ended an open watch stream: `undefined` when the stream merely ended
 * (transport errors and idle teardown close a watch cleanly, client-go "probable EOF"), a failure
 * when the stream is not a watch stream (`EDGEOP_ERR_DECODE`: relist).
 */
export function midStreamFailure(err: unknown): FailureInfo | undefined {
  return codeOf(err) === 'EDGEOP_ERR_DECODE' ? classify(err) : undefined
}

/** A watch ERROR event's Status as a failure, by its HTTP `code` and causes. */
export function failureOfStatus(status: Status): FailureInfo {
  const code = status?.code ?? 500
  const retry = status?.details?.retryAfterSeconds
  return {
    expired: code === STATUS_EXPIRED,
    tooLargeRv: (status?.details?.causes ?? []).some((c) => c.reason === CAUSE_RV_TOO_LARGE),
    throttledOrRefused: code === STATUS_TOO_MANY_REQUESTS,
    retryAfterSeconds: retry,
    error: status,
  }
}

/** A failure that is neither expired nor too-large: back off, then relist (or retry, if `throttledOrRefused`). */
export function otherFailure(error: unknown, throttledOrRefused = false): FailureInfo {
  return { expired: false, tooLargeRv: false, throttledOrRefused, error }
}
