/**
 * @module record — the leader election record and its mapping to a `coordination.k8s.io/v1` Lease spec.
 *
 * The record is client-go's `LeaderElectionRecord` (`tools/leaderelection/resourcelock/interface.go`)
 * without the coordinated-election fields (`strategy`, `preferredHolder`), which edgeop does not
 * implement. Timestamps are written for humans and other tools only: no edgeop candidate ever
 * compares them with its own clock (see `state.ts`).
 */
import { definedProps } from '../core/defined-props.ts'
import type { LeaseSpec } from '../core/types.ts'

/**
 * Who holds the lock, for how long others must wait after its last change, and its history.
 *
 * Invariant: `holderIdentity === ''` means nobody holds it (never written, or released), and it may
 * be taken at once.
 */
export interface LeaderElectionRecord {
  /** Identity of the holder; `''` when free. */
  readonly holderIdentity: string
  /**
   * How long (whole seconds) other candidates wait after they last saw the record *change* before
   * taking over. Candidates use this value, not their own configuration (kubernetes/kubernetes#114872).
   */
  readonly leaseDurationSeconds: number
  /** When the current holder acquired it (MicroTime); informational. */
  readonly acquireTime: string | undefined
  /** When the holder last renewed it (MicroTime); informational. */
  readonly renewTime: string | undefined
  /** How many times the holder changed (Lease `leaseTransitions`). */
  readonly leaderTransitions: number
}

/**
 * Formats epoch milliseconds as a Kubernetes `MicroTime`: RFC 3339 in UTC with exactly six
 * fractional digits, e.g. `2026-11-29T10:00:00.123456Z`. Fractional milliseconds become the last
 * three digits (truncated).
 *
 * @example
 * formatMicroTime(Date.UTC(2026, 10, 29, 10, 0, 0, 123) + 0.456) // '2026-11-29T10:00:00.123456Z'
 */
export function formatMicroTime(epochMs: number): string {
  const whole = Math.floor(epochMs)
  const micros = Math.min(999, Math.floor((epochMs - whole) * 1000))
  const iso = new Date(whole).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`
}

/**
 * Reads a Lease spec as a record (client-go `LeaseSpecToLeaderElectionRecord`). Missing fields read as
 * `''`, `0` or undefined, so a Lease without `leaseDurationSeconds` expires as soon as it stops changing.
 */
export function leaseSpecToRecord(spec: LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: spec?.acquireTime,
    renewTime: spec?.renewTime,
    leaderTransitions: spec?.leaseTransitions ?? 0,
  }
}

/**
 * The Lease spec that stores `record` (client-go `LeaderElectionRecordToLeaseSpec`). It is a whole
 * spec: every field the record has is written, `holderIdentity` even when empty.
 */
export function recordToLeaseSpec(record: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...definedProps({ acquireTime: record.acquireTime, renewTime: record.renewTime }),
    leaseTransitions: record.leaderTransitions,
  }
}

/**
 * A canonical string of the record: two records are the same observation exactly when their keys are
 * equal (client-go compares the record's JSON bytes). Metadata-only writes to the Lease (labels,
 * annotations) do not change it.
 */
export function recordKey(record: LeaderElectionRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime ?? null,
    record.renewTime ?? null,
    record.leaderTransitions,
  ])
}
