/**
 * @module controller-observer — how one reconcile ended, and the observer a controller reports to.
 *
 * It lives beside the metrics that implement it: the reconcile loop imports observability, never the
 * reverse, and both sides must agree on one outcome type.
 */

/**
 * How one reconcile ended:
 * - `success`: the reconciler returned nothing;
 * - `requeue`: it returned `{ requeue: true }` (again soon, rate-limited);
 * - `requeue_after`: it returned `{ requeueAfterMs }` (a poll);
 * - `error`: it threw an Error (retried with backoff);
 * - `terminal_error`: it threw a `TerminalError` (not retried until the object changes);
 * - `timeout`: it failed after its reconcile timeout aborted its signal;
 * - `panic`: it threw something that is not an Error.
 *
 * The last four are all `result="error"` in `controller_runtime_reconcile_total` ({@link resultLabel}),
 * as in controller-runtime, and each of the last three also has its own counter.
 */
export type ReconcileOutcome =
  | 'success'
  | 'requeue'
  | 'requeue_after'
  | 'error'
  | 'terminal_error'
  | 'timeout'
  | 'panic'

/** The `result` label values of `controller_runtime_reconcile_total` (controller-runtime's four). */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const

/** The `result` label of an outcome: the outcome itself, or `error` for every kind of failure. */
export function resultLabel(outcome: ReconcileOutcome): (typeof RECONCILE_RESULTS)[number] {
  return outcome === 'success' || outcome === 'requeue' || outcome === 'requeue_after' ? outcome : 'error'
}

/**
 * What a controller tells whoever watches its loop (the reconcile metrics implement it). Both hooks
 * are optional; they must not throw, and are called synchronously from the worker.
 */
export interface ControllerObserver {
  /** One reconcile ended with `outcome` after `seconds` (monotonic, on the controller's clock). */
  onReconcile?(outcome: ReconcileOutcome, seconds: number): void
  /** The number of workers reconciling right now changed to `active`. */
  onActiveWorkers?(active: number): void
  /** The number of keys parked for `reason` (`no_retry`, `attempts`, `time_budget`) changed to `count`. */
  onParkedKeys?(reason: string, count: number): void
  /** A key that should have been parked was not, because the parked-keys cap was reached (it keeps retrying). */
  onParkOverflow?(): void
}
