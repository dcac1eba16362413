/**
 * @module wait — poll until a condition holds, failing fast when the process behind it dies.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { EdgeopError } from '../core/errors.ts'
import type { ManagedProcess } from './process.ts'

/** Poll interval: short enough that readiness is noticed promptly, long enough to cost nothing. */
export const POLL_INTERVAL_MS = 200

/** Options for {@link waitUntil}. */
export interface WaitOptions {
  /** What is being waited for, for the error message. */
  what: string
  timeoutMs: number
  intervalMs?: number
  /** If this process exits while waiting, fail at once with its log tail. */
  process?: ManagedProcess
}

/**
 * Calls `check` until it returns a value other than `undefined` and returns that value.
 * Exceptions thrown by `check` count as "not yet"; the last one is reported on timeout.
 */
export async function waitUntil<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = performance.now() + options.timeoutMs
  let last = 'no attempt finished'
  for (;;) {
    if (options.process !== undefined && !options.process.running) {
      const status = await options.process.exited
      throw await options.process.failure(
        `exited (code ${status.code}, signal ${status.signal}) while waiting for ${options.what}`,
      )
    }
    try {
      const value = await check()
      if (value !== undefined) return value
      last = 'not yet'
    } catch (err) {
      last = err instanceof Error ? err.message : String(err)
    }
    if (performance.now() >= deadline) {
      const reason = `${options.what}: not ready after ${options.timeoutMs} ms (last: ${last})`
      throw options.process === undefined
        ? new EdgeopError('EDGEOP_ERR_TIMEOUT', reason, { step: options.what, retryable: true })
        : await options.process.failure(reason, { retryable: true })
    }
    await delay(options.intervalMs ?? POLL_INTERVAL_MS)
  }
}
