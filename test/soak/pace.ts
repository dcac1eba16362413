/**
 * @module pace — the soak's waits: an abortable sleep and a fixed-rate loop.
 */

/** Resolves after `ms` (at once when it is ≤ 0: a time already past), or at once when `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = (): void => {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, Math.max(0, ms))
    signal?.addEventListener('abort', done, { once: true })
  })

/** Runs `fn` every `ms` (never overlapping itself) until `signal` aborts. */
export async function every(ms: number, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    const t0 = Date.now()
    await fn().catch(() => {})
    await sleep(Math.max(0, ms - (Date.now() - t0)), signal)
  }
}
