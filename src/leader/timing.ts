/**
 * @module timing — the three durations of leader election, their defaults and their validation.
 *
 * Defaults are client-go's "core clients" values, which controller-runtime also uses
 * (`pkg/manager/internal.go`); the checks are `NewLeaderElector`'s, plus one that client-go lacks:
 * the Lease stores whole seconds, so the renew deadline is checked against the duration other
 * candidates will actually read.
 */
import { EdgeopError } from '../core/errors.ts'

/** client-go: "Core clients default this value to 15 seconds" (`LeaderElectionConfig.LeaseDuration`). */
export const DEFAULT_LEASE_DURATION_MS = 15_000
/** client-go: "Core clients default this value to 10 seconds" (`RenewDeadline`). */
export const DEFAULT_RENEW_DEADLINE_MS = 10_000
/** client-go: "Core clients default this value to 2 seconds" (`RetryPeriod`). */
export const DEFAULT_RETRY_PERIOD_MS = 2_000
/** client-go `JitterFactor` (a constant there): acquire attempts are `retry + rand·1.2·retry` apart. */
export const DEFAULT_JITTER_FACTOR = 1.2

/** The durations of an election. All values in milliseconds except the factor. */
export interface ElectionTiming {
  /**
   * How long a non-leader waits after it last saw the record change before it may take over. Written
   * to the Lease as whole seconds (truncated), and it is that value other candidates use.
   */
  readonly leaseDurationMs: number
  /**
   * How long the leader keeps trying to renew, counted from the start of its last successful write,
   * before it gives up leadership (and aborts its work).
   */
  readonly renewDeadlineMs: number
  /** Interval between acquire attempts (jittered) and between renew attempts. */
  readonly retryPeriodMs: number
  /** Acquire attempts wait `retryPeriodMs · (1 + random() · jitterFactor)`. */
  readonly jitterFactor: number
}

function invalid(message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_INVALID', `leader election: ${message}`, {
    step: 'validate leader election timing',
  })
}

function positive(name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(`${name} must be a finite number > 0, got ${String(value)}`)
  }
}

/**
 * Fills in defaults and validates (client-go `NewLeaderElector`):
 * `leaseDurationMs > renewDeadlineMs > retryPeriodMs × jitterFactor`, every value finite and > 0.
 * Additionally `leaseDurationMs ≥ 1000` (a Lease holds whole seconds ≥ 1) and `renewDeadlineMs` below
 * the whole-second lease duration, so a leader always gives up before others may take over.
 *
 * @throws EdgeopError `EDGEOP_ERR_INVALID` naming the offending value.
 * @example
 * resolveTiming({ leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 })
 */
export function resolveTiming(partial: Partial<ElectionTiming> = {}): ElectionTiming {
  const t: ElectionTiming = {
    leaseDurationMs: partial.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: partial.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: partial.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
    jitterFactor: partial.jitterFactor ?? DEFAULT_JITTER_FACTOR,
  }
  positive('leaseDurationMs', t.leaseDurationMs)
  positive('renewDeadlineMs', t.renewDeadlineMs)
  positive('retryPeriodMs', t.retryPeriodMs)
  positive('jitterFactor', t.jitterFactor)
  if (t.leaseDurationMs <= t.renewDeadlineMs) {
    throw invalid(
      `leaseDurationMs (${t.leaseDurationMs}) must be greater than renewDeadlineMs (${t.renewDeadlineMs})`,
    )
  }
  const jittered = t.retryPeriodMs * t.jitterFactor
  if (t.renewDeadlineMs <= jittered) {
    throw invalid(
      `renewDeadlineMs (${t.renewDeadlineMs}) must be greater than retryPeriodMs × jitterFactor ` +
        `(${t.retryPeriodMs} × ${t.jitterFactor} = ${jittered})`,
    )
  }
  if (t.renewDeadlineMs <= t.retryPeriodMs) {
    throw invalid(
      `renewDeadlineMs (${t.renewDeadlineMs}) must be greater than retryPeriodMs (${t.retryPeriodMs})`,
    )
  }
  if (t.leaseDurationMs < 1000) {
    throw invalid(`leaseDurationMs (${t.leaseDurationMs}) must be at least 1000: a Lease holds whole seconds`)
  }
  const written = leaseDurationSeconds(t) * 1000
  if (t.renewDeadlineMs >= written) {
    throw invalid(
      `leaseDurationMs (${t.leaseDurationMs}) is written to the Lease as ${written / 1000} s (whole seconds), ` +
        `which must be greater than renewDeadlineMs (${t.renewDeadlineMs})`,
    )
  }
  return t
}

/** The `leaseDurationSeconds` this candidate writes: whole seconds, truncated (client-go). */
export function leaseDurationSeconds(timing: Pick<ElectionTiming, 'leaseDurationMs'>): number {
  return Math.floor(timing.leaseDurationMs / 1000)
}

/** The wait between two acquire attempts: `retry + random() · factor · retry` (client-go `wait.Jitter`). */
export function jitteredRetry(timing: ElectionTiming, random: () => number): number {
  return timing.retryPeriodMs + random() * timing.jitterFactor * timing.retryPeriodMs
}
