/**
 * @module virtual-clock — the simulator's single clock: every timer of every component on one virtual
 * timeline, with the order of timers due at the same instant chosen by the seed.
 */
import type { CancelTimer, Clock } from '../../core/clock.ts'
import type { Prng } from './prng.ts'

interface VirtualTimer {
  at: number
  seq: number
  fn: () => void
  cancelled: boolean
}

/** The epoch the simulation starts at (2026-01-01T00:00:00Z): fixed, so object timestamps replay exactly. */
export const SIMULATION_EPOCH_MS = 1_767_225_600_000

/**
 * A {@link Clock} that moves only when the simulator fires its next timer. Unlike `ManualClock`,
 * timers due at the same instant run in an order the seed picks (a different interleaving of
 * concurrent work per seed), and the driver (`simulate`) settles all promise work between two timers.
 */
export class VirtualClock implements Clock {
  #now = SIMULATION_EPOCH_MS
  #seq = 0
  #timers: VirtualTimer[] = []
  readonly #prng: Prng

  /** Ties are broken by `prng`. */
  constructor(prng: Prng) {
    this.#prng = prng
  }

  /** Virtual wall time in ms. */
  now(): number {
    return this.#now
  }

  /** Virtual monotonic time in ms (the same number as {@link now}). */
  monotonic(): number {
    return this.#now
  }

  /** Virtual ms since the simulation started. */
  get elapsed(): number {
    return this.#now - SIMULATION_EPOCH_MS
  }

  /** Schedules `fn` at now + `ms`. */
  setTimer(fn: () => void, ms: number): CancelTimer {
    const timer: VirtualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false }
    this.#timers.push(timer)
    return () => {
      timer.cancelled = true
    }
  }

  /** Deadline of the earliest pending timer, or undefined when none is pending. */
  nextDeadline(): number | undefined {
    let min: number | undefined
    for (const t of this.#timers) if (!t.cancelled && (min === undefined || t.at < min)) min = t.at
    return min
  }

  /**
   * Moves time to the earliest deadline (at most `limit`) and fires one of the timers due then,
   * chosen by the seed. Returns false (time moved to `limit`) when nothing is due by then.
   */
  fireNext(limit: number): boolean {
    this.#timers = this.#timers.filter((t) => !t.cancelled)
    const at = this.nextDeadline()
    if (at === undefined || at > limit) {
      this.#now = Math.max(this.#now, limit)
      return false
    }
    const due = this.#timers.filter((t) => t.at === at)
    const timer = due.length === 1 ? (due[0] as VirtualTimer) : this.#prng.pick(due)
    timer.cancelled = true
    this.#now = Math.max(this.#now, at)
    timer.fn()
    return true
  }
}
