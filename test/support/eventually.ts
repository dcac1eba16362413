/**
 * @module eventually — polls a condition on the wall clock until it holds, for integration tests.
 *
 * Unit tests never poll: they drive a ManualClock. Integration tests wait on a real apiserver and
 * real controllers, whose timing is not ours; they poll with this one helper.
 */
import { setTimeout as delay } from 'node:timers/promises'

/** Default pause between two checks: prompt enough to notice a change, cheap for the apiserver. */
export const EVENTUALLY_INTERVAL_MS = 50

/** Options for {@link eventually}. */
export interface EventuallyOptions {
  /** Pause between two checks; default {@link EVENTUALLY_INTERVAL_MS}. */
  intervalMs?: number
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and returns that value
 * (so it serves both a boolean condition and a lookup). Rejects with
 * `not reached within <timeoutMs> ms: <what>` once `timeoutMs` has passed; an exception from `check`
 * rejects at once.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  options: EventuallyOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>
    if (Date.now() >= end) throw new Error(`not reached within ${timeoutMs} ms: ${what}`)
    await delay(options.intervalMs ?? EVENTUALLY_INTERVAL_MS)
  }
}
