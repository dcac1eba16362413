/**
 * @module parked-keys — the dead-letter set of one controller: keys that stopped retrying, bounded,
 * and the rule that re-arms one.
 */
import { quoteInput } from '../core/quote-input.ts'
import type { KubeObject } from '../core/types.ts'
import type { ParkedKeyInfo } from '../server/parked-keys-view.ts'
import type { ParkReason } from './retry-policy.ts'

/**
 * At most 1000 keys parked per controller. An entry is a few hundred bytes (its message is cut to
 * {@link MAX_PARKED_MESSAGE_CHARS}), so the set stays under 1 MB; a thousand objects past their
 * budget is an outage the gauge already shows, and their first thousand are enough to diagnose it.
 * At the cap a key that would park keeps retrying instead (at the policy's longest delay, or on its
 * next change for `no_retry`) and `edgeop_controller_park_overflow_total` counts it: nothing is dropped.
 */
export const DEFAULT_MAX_PARKED_KEYS = 1000
/** A parked key's last error message is kept to 300 characters (through `quoteInput`). */
export const MAX_PARKED_MESSAGE_CHARS = 300
/** Set or change this annotation on a parked object to re-arm it now, e.g. `kubectl annotate --overwrite … edgeop.io/retry-now=$(date +%s)`. */
export const RETRY_NOW_ANNOTATION = 'edgeop.io/retry-now'

/**
 * Whether an event on the primary object re-arms its parked key: an add or a delete (`old`
 * undefined), a new generation (a new resourceVersion for kinds without a generation, such as
 * ConfigMaps), a new {@link RETRY_NOW_ANNOTATION} value, or the start of deletion.
 */
export function rearms(old: KubeObject | undefined, obj: KubeObject): boolean {
  if (!old) return true
  const a = old.metadata
  const b = obj.metadata
  const changed =
    a.generation === undefined ? a.resourceVersion !== b.resourceVersion : a.generation !== b.generation
  return (
    changed ||
    a.annotations?.[RETRY_NOW_ANNOTATION] !== b.annotations?.[RETRY_NOW_ANNOTATION] ||
    (!a.deletionTimestamp && !!b.deletionTimestamp)
  )
}

/**
 * What an object records about its own parking, read back by {@link ControllerOptions.parkedFrom}: the
 * condition and Event an `onFailure` hook writes when a key parks are where a parked key survives a
 * restart and reaches every replica, without a write of its own.
 */
export interface ParkedRecord {
  /** Why it stopped. */
  reason: ParkReason
  /** Its last error's class. */
  errorClass: string
  /** Its last error's message (quoted and cut again when shown). */
  lastError: string
  /** Consecutive failures when it parked. */
  attempts: number
  /** Wall ms when it parked (e.g. the condition's `lastTransitionTime`). */
  parkedAt: number
}

/** Whether two records describe the same park (a status write that kept the record is no new park). */
export function sameRecord(a: ParkedRecord, b: ParkedRecord): boolean {
  return (
    a.reason === b.reason &&
    a.errorClass === b.errorClass &&
    a.lastError === b.lastError &&
    a.attempts === b.attempts &&
    a.parkedAt === b.parkedAt
  )
}

/** The park a record on the object (`parkedFrom`) stands for here: its message quoted and cut, its time both failures'. */
export function recordedPark(key: string, r: ParkedRecord): ParkInput {
  const { reason, errorClass, attempts, parkedAt } = r
  const lastError = quoteInput(r.lastError, MAX_PARKED_MESSAGE_CHARS)
  return { key, reason, errorClass, lastError, attempts, firstFailureAt: parkedAt, lastFailureAt: parkedAt }
}

/** A key to park: everything {@link ParkedKeyInfo} shows but the controller name and the times as numbers. */
export interface ParkInput {
  /** The request key. */
  key: string
  /** Why it stops. */
  reason: ParkReason
  /** Its last error's class. */
  errorClass: string
  /** Its last error's message, already quoted and cut. */
  lastError: string
  /** Consecutive failures. */
  attempts: number
  /** Wall ms of the first failure. */
  firstFailureAt: number
  /** Wall ms of the last failure. */
  lastFailureAt: number
}

/** The parked keys of one controller, at most `max` (insertion order). Not thread-safe; the controller owns it. */
export class ParkedKeys {
  readonly #controller: string
  readonly #max: number
  readonly #entries = new Map<string, ParkedKeyInfo>()

  /** An empty set for `controller`, holding at most `max` keys. */
  constructor(controller: string, max = DEFAULT_MAX_PARKED_KEYS) {
    this.#controller = controller
    this.#max = max
  }

  /** Whether `key` is parked. */
  has(key: string): boolean {
    return this.#entries.has(key)
  }

  /** Parks a key; false (and nothing stored) when the set is full. */
  park(p: ParkInput): boolean {
    if (this.#entries.size >= this.#max && !this.#entries.has(p.key)) return false
    this.#entries.set(p.key, {
      controller: this.#controller,
      key: p.key,
      reason: p.reason,
      errorClass: p.errorClass,
      lastError: p.lastError,
      attempts: p.attempts,
      firstFailure: new Date(p.firstFailureAt).toISOString(),
      lastFailure: new Date(p.lastFailureAt).toISOString(),
    })
    return true
  }

  /** Removes `key`; returns its entry, or undefined when it was not parked. */
  unpark(key: string): ParkedKeyInfo | undefined {
    const e = this.#entries.get(key)
    this.#entries.delete(key)
    return e
  }

  /** Keys parked for `reason`. */
  count(reason: string): number {
    let n = 0
    for (const e of this.#entries.values()) if (e.reason === reason) n++
    return n
  }

  /** Every entry, in parking order (copies). */
  list(): ParkedKeyInfo[] {
    return [...this.#entries.values()].map((e) => ({ ...e }))
  }
}
