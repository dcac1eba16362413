/**
 * @module request-retry — whether a failed attempt is retried, and when: client-go's rules as a pure function.
 *
 * The rules (client-go `rest/with_retry.go` `IsNextRetry`, `rest/request.go`):
 * - any verb is retried on 429 or 5xx **only** when the response has an integer
 *   `Retry-After`, waiting that many seconds, at most {@link DEFAULT_MAX_RETRIES} times;
 * - GET (never a write; watch starts included) is retried after a connection reset / EOF /
 *   HTTP/2 connection loss, as if told `Retry-After: 1`, within the same budget;
 * - a 401 is retried once when the credential provider has fresher credentials (the driver
 *   asks the provider; the policy only says the attempt may refresh);
 * - nothing else is retried.
 */
import { parseRetryAfter } from './api-error.ts'

/** client-go `rest` default `maxRetries`: 10. */
export const DEFAULT_MAX_RETRIES = 10
/** Transport errors (no response) are retried for GET as if the server said `Retry-After: 1` (client-go `IsErrorRetryable` + `checkWait`). */
export const TRANSPORT_RETRY_AFTER_S = 1

/**
 * Error codes of a lost connection, the only transport failures client-go retries (for GET):
 * connection reset / broken pipe (`net.IsConnectionReset`), probable EOF (`net.IsProbableEOF`,
 * undici's `UND_ERR_SOCKET` / `UND_ERR_CLOSED`) and HTTP/2 connection loss.
 */
const RETRYABLE_TRANSPORT_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
])

/** What one attempt came to. */
export type AttemptOutcome =
  /** A response with status ≥ 400. `retryAfter` is the raw `Retry-After` header. */
  | { kind: 'response'; status: number; retryAfter?: string | string[] | undefined }
  /** No response: the request failed with this error code (undici, Node or HTTP/2), if any. */
  | { kind: 'transport'; errorCode: string | undefined }

/** Where the request stands: how many attempts failed before this one, and whether a 401 already refreshed credentials. */
export interface AttemptState {
  /** 0 for the first attempt. */
  attempt: number
  /** True once a 401 has been answered with a credential refresh. */
  refreshedCredentials: boolean
  /** Retries allowed for 429/5xx and transport errors. Default {@link DEFAULT_MAX_RETRIES}. */
  maxRetries?: number
}

/** What to do after a failed attempt. */
export type RetryDecision =
  | { action: 'retry'; afterMs: number }
  | { action: 'refresh-credentials' }
  | { action: 'give-up' }

const GIVE_UP: RetryDecision = { action: 'give-up' }

/**
 * Decides what follows a failed attempt of a `method` request. Pure: no clock, no I/O.
 * `refresh-credentials` means: retry at once if the credential provider has credentials
 * newer than the ones just refused, else give up.
 */
export function decideRetry(state: AttemptState, method: string, outcome: AttemptOutcome): RetryDecision {
  const budgetLeft = state.attempt < Math.max(0, state.maxRetries ?? DEFAULT_MAX_RETRIES)
  if (outcome.kind === 'transport') {
    const lost = outcome.errorCode !== undefined && RETRYABLE_TRANSPORT_CODES.has(outcome.errorCode)
    return method === 'GET' && lost && budgetLeft
      ? { action: 'retry', afterMs: TRANSPORT_RETRY_AFTER_S * 1000 }
      : GIVE_UP
  }
  if (outcome.status === 401) return state.refreshedCredentials ? GIVE_UP : { action: 'refresh-credentials' }
  if (outcome.status !== 429 && outcome.status < 500) return GIVE_UP
  const seconds = parseRetryAfter(outcome.retryAfter)
  return seconds !== undefined && budgetLeft ? { action: 'retry', afterMs: seconds * 1000 } : GIVE_UP
}
