/**
 * @module abort — stop waiting for a promise when a signal aborts.
 */
import { EdgeopError } from './errors.ts'

/**
 * Settles like `promise`, or rejects as soon as `signal` aborts (with `onAbort()`, by
 * default an `EDGEOP_ERR_ABORTED` error). The promise itself keeps running and stays
 * handled: use this when others may still wait for it, or when its producer ignores
 * signals.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => unknown = () => new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted', { cause: signal?.reason }),
): Promise<T> {
  if (!signal) return promise
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(onAbort())
    if (signal.aborted) abort()
    else signal.addEventListener('abort', abort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort)
        resolve(value)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort)
        reject(err)
      },
    )
  })
}
