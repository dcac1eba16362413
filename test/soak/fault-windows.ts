/**
 * @module fault-windows — when each fault that can hold an AppService up was on, and how long after
 * its end its effects may legitimately last (its allowance, derived from the operator's named
 * constants, never a number of our own). The checker counts the convergence bound from the later of
 * an object's last change and the end of such a window plus its allowance.
 */
import { DEFAULT_RETRY_JITTER, FORBIDDEN_RETRY_DELAY_MS } from '../../src/controller/retry-policy.ts'
import { DATABASE_API_TIMEOUT_MS } from '../../src/operators/appservice/database-api.ts'
import {
  type BreakerLimits,
  DEFAULT_BREAKER_LIMITS,
  openPeriodMs,
} from '../../src/resilience/breaker-state.ts'
import type { FaultEvent, FaultKind } from './schedule.ts'

/**
 * After the operator's rules come back, a key that got a 403 is retried at the latest after the
 * forbidden retry delay with its full upward jitter: 30 s × (1 + 1.0) = 60 s.
 */
export const FORBIDDEN_ALLOWANCE_MS = FORBIDDEN_RETRY_DELAY_MS * (1 + DEFAULT_RETRY_JITTER)

/**
 * How long the database breaker may stay open after a fault of `faultMs` ends, at worst: it opens
 * as the fault starts, every probe before the fault's end fails (each doubling the open period,
 * stretched by the full jitter), and the first probe after the end closes it.
 */
export function breakerTailMs(faultMs: number, limits: BreakerLimits = DEFAULT_BREAKER_LIMITS): number {
  let probeAt = 0
  for (let opens = 1; ; opens++) {
    probeAt += openPeriodMs(limits, opens) * (1 + limits.jitter)
    if (probeAt >= faultMs) return probeAt - faultMs
  }
}

/**
 * The allowance of a fault: how long after its window ends the operator may still be catching up
 * because of it (beyond the ordinary convergence bound).
 * - database-outage: the breaker's remaining open time ({@link breakerTailMs});
 * - db-timeout-after-commit: one per-call deadline (DATABASE_API_TIMEOUT_MS, 10 s) per hung write, each
 *   holding the operator's single worker until it times out (fewer hung writes than the breaker's
 *   failure threshold, so they alone do not open it: no breaker time);
 * - db-slow: the last slow answer's delay;
 * - rbac-revoked: {@link FORBIDDEN_ALLOWANCE_MS};
 * - others: 0 (they do not open windows).
 */
export function allowanceMs(ev: FaultEvent): number {
  switch (ev.kind) {
    case 'database-outage':
      return breakerTailMs(ev.durationMs)
    case 'db-timeout-after-commit':
      return ev.writes * DATABASE_API_TIMEOUT_MS
    case 'db-slow':
      return ev.delayMs
    case 'rbac-revoked':
      return FORBIDDEN_ALLOWANCE_MS
    default:
      return 0
  }
}

/** Faults of the database API: they may leave AppServices Degraded and block deletions. */
export const DATABASE_FAULTS: ReadonlySet<FaultKind> = new Set([
  'database-outage',
  'db-timeout-after-commit',
  'db-slow',
])
/**
 * Faults that may hold up any AppService, not only those with a database: a hung or slow database
 * call holds the operator's single worker; a revoked rule fails every Deployment write.
 */
export const OPERATOR_FAULTS: ReadonlySet<FaultKind> = new Set([
  'db-timeout-after-commit',
  'db-slow',
  'rbac-revoked',
])

/** One fault window, in ms since the soak started. */
export interface FaultWindow {
  readonly kind: FaultKind
  readonly fromMs: number
  /** Undefined while the fault is on. */
  toMs: number | undefined
  readonly allowanceMs: number
}

/** The fault windows of one run. */
export class FaultWindows {
  readonly all: FaultWindow[] = []

  /** Opens a window of `kind` at `fromMs` with `allowanceMs`. */
  open(kind: FaultKind, fromMs: number, allowanceMs: number): FaultWindow {
    const w: FaultWindow = { kind, fromMs, toMs: undefined, allowanceMs }
    this.all.push(w)
    return w
  }

  /** Closes `w` at `toMs`. */
  close(w: FaultWindow, toMs: number): void {
    w.toMs = toMs
  }

  /**
   * ms since start by which the effects of every window of `kinds` (all when omitted) are over: the
   * latest end plus allowance, `now` while one is still on, −∞ when there was none.
   */
  settledAt(now: number, kinds?: ReadonlySet<FaultKind>): number {
    let at = Number.NEGATIVE_INFINITY
    for (const w of this.all)
      if (kinds === undefined || kinds.has(w.kind))
        at = Math.max(at, w.toMs === undefined ? now : w.toMs + w.allowanceMs)
    return at
  }
}
