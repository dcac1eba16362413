/**
 * @module clock — time as a parameter.
 *
 * Every component with a timer takes a {@link Clock}, so unit tests drive virtual
 * time with {@link ManualClock} and never sleep.
 */

/** A cancel function returned by {@link Clock.setTimer}. Calling it twice is harmless. */
export type CancelTimer = () => void

/** The source of time and timers. */
export interface Clock {
  /** Milliseconds since the epoch (wall clock; may jump). */
  now(): number
  /** Milliseconds from an arbitrary origin that never goes backwards. */
  monotonic(): number
  /**
   * Calls `fn` once after `ms` milliseconds. A pending timer keeps the process alive
   * (a pending promise alone would not): components cancel their timers when they stop.
   */
  setTimer(fn: () => void, ms: number): CancelTimer
}

/** The process clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms))
    return () => clearTimeout(t)
  },
}

/**
 * Waits `ms` on `clock`; rejects with the signal's reason when `signal` aborts first.
 * The pending timer is cancelled on abort.
 */
export function sleep(ms: number, clock: Clock = realClock, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = (): void => {
      cancel()
      reject(signal?.reason)
    }
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

interface ManualTimer {
  at: number
  seq: number
  fn: () => void
  cancelled: boolean
}

/**
 * A clock that moves only when told to. `advance(ms)` fires due timers in deadline
 * order (ties in creation order), including timers scheduled by those timers.
 *
 * @example
 * const clock = new ManualClock()
 * const p = sleep(1000, clock)
 * await clock.advance(1000) // p resolves
 */
export class ManualClock implements Clock {
  #now: number
  #seq = 0
  #timers: ManualTimer[] = []

  /** Starts at `startMs` (a fixed instant, so tests are repeatable); wall and monotonic time are the same number. */
  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs
  }

  /** Wall time in ms; moves only with {@link ManualClock.advance}. */
  now(): number {
    return this.#now
  }

  /** Monotonic time in ms; moves only with {@link ManualClock.advance}. */
  monotonic(): number {
    return this.#now
  }

  /** Schedules `fn` at now + `ms`; it runs during the `advance` that reaches that time. */
  setTimer(fn: () => void, ms: number): CancelTimer {
    const timer: ManualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false }
    this.#timers.push(timer)
    return () => {
      timer.cancelled = true
    }
  }

  /** Number of timers not yet fired or cancelled. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length
  }

  /** Deadline of the earliest pending timer, or undefined. */
  nextDeadline(): number | undefined {
    let min: number | undefined
    for (const t of this.#timers) if (!t.cancelled && (min === undefined || t.at < min)) min = t.at
    return min
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due, and lets promise
   * callbacks run between timers so async code observes each step.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms
    await flushMicrotasks()
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled)
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq)
      const next = this.#timers[0]
      if (next === undefined || next.at > target) break
      this.#timers.shift()
      this.#now = Math.max(this.#now, next.at)
      next.fn()
      await flushMicrotasks()
    }
    this.#now = target
    await flushMicrotasks()
  }

  /** Sets the wall clock without firing timers (simulates a clock jump). */
  jump(ms: number): void {
    this.#now += ms
  }
}

/** Lets pending promise reactions run (several macrotask-free turns). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve()
}
