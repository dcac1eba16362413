/**
 * @module abortable — stop waiting for shared credential work without cancelling it for the others.
 */
import { raceAbort } from '../core/abort.ts'
import { EdgeopError } from '../core/errors.ts'

/** The `EDGEOP_ERR_ABORTED` error a credential wait rejects with; `what` names the provider. */
export function abortError(what: string, signal: AbortSignal): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_ABORTED', `${what}: aborted while waiting for credentials`, {
    step: 'get credentials',
    cause: signal.reason,
  })
}

/**
 * Waits for the shared credential `promise`, or rejects with {@link abortError} as soon as
 * `signal` aborts; the promise keeps running for its other waiters.
 */
export function raceCredentials<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  what: string,
): Promise<T> {
  return raceAbort(promise, signal, () => abortError(what, signal as AbortSignal))
}
