/**
 * @module retry-on-conflict — re-run a read-modify-write when someone else wrote first.
 */
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { isConflict } from '../transport/api-error.ts'

/** client-go `retry.DefaultRetry`: 5 steps, 10 ms apart (factor 1, jitter 0.1). */
export const DEFAULT_CONFLICT_RETRY = { attempts: 5, delayMs: 10, jitter: 0.1 } as const

/**
 * Runs `fn` (which should read the object fresh, modify it and write it with its
 * resourceVersion) and re-runs it when the write fails with 409 Conflict, up to
 * `attempts` times (client-go `retry.RetryOnConflict`). Other errors, and the last
 * conflict, are thrown.
 *
 * @example
 * await retryOnConflict(async () => {
 *   const scale = await deployments.getScale('web')
 *   return deployments.updateScale({ ...scale, spec: { replicas: 3 } })
 * })
 */
export async function retryOnConflict<T>(
  fn: () => Promise<T>,
  options: { attempts?: number; delayMs?: number; clock?: Clock; signal?: AbortSignal } = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_CONFLICT_RETRY.attempts
  const delay = options.delayMs ?? DEFAULT_CONFLICT_RETRY.delayMs
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err
      await sleep(
        delay * (1 + Math.random() * DEFAULT_CONFLICT_RETRY.jitter),
        options.clock ?? realClock,
        options.signal,
      )
    }
  }
}
