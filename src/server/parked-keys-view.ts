/**
 * @module parked-keys-view — the dead-letter view: keys a controller stopped retrying, as the ops
 * server shows them (`GET /debug/parked`) and re-arms them (`POST /debug/parked/<key>/retry`).
 *
 * It lives in observability so that the ops server needs no controller: controllers implement it.
 */

/** One parked key, as `GET /debug/parked` shows it (JSON). */
export interface ParkedKeyInfo {
  /** The controller that parked it. */
  controller: string
  /** The request key, `namespace/name` or `name`. */
  key: string
  /** Why it stopped: `no_retry`, `attempts` or `time_budget`. */
  reason: string
  /** The class of its last error, e.g. `forbidden`, `transient`. */
  errorClass: string
  /** Its last error's message, quoted and cut (`quoteInput`); error messages never carry credentials. */
  lastError: string
  /** Consecutive failed reconciles. */
  attempts: number
  /** First failure of the run, RFC 3339. */
  firstFailure: string
  /** Last failure, RFC 3339. */
  lastFailure: string
}

/** What the ops server reads and re-arms. */
export interface ParkedKeysView {
  /** Every parked key, in parking order. */
  parked(): ParkedKeyInfo[]
  /** Re-arms `key` wherever it is parked; returns how many controllers had it parked. */
  retryParked(key: string): number
}
