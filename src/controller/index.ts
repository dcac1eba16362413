/** @module controller — the reconcile loop: event sources, predicates, the workqueue-driven Controller, reconcile results. */

export { Controller, type ControllerObserver, type ReconcileOutcome } from './controller.ts'
export {
  type ControllerInstrumentation,
  type ControllerOptions,
  DEFAULT_MAX_CONCURRENT_RECONCILES,
} from './controller-options.ts'
export type { FailureReport } from './failure-handler.ts'
export { mergeSources } from './merged-source.ts'
export {
  DEFAULT_MAX_PARKED_KEYS,
  ParkedKeys,
  type ParkedRecord,
  type ParkInput,
  RETRY_NOW_ANNOTATION,
  rearms,
  sameRecord,
} from './parked-keys.ts'
export {
  allOf,
  annotationsChanged,
  anyOf,
  generationChanged,
  labelsChanged,
  type Predicate,
  passes,
  resourceVersionChanged,
} from './predicates.ts'
export {
  isTerminalError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  requestKey,
  TerminalError,
} from './reconciler.ts'
export {
  type ClassifiedRetryOptions,
  CONFLICT_RETRY,
  classifyError,
  clientGoRetryPolicy,
  DEFAULT_PARK_AFTER_MS,
  DEFAULT_RETRY_JITTER,
  defaultRetryPolicy,
  type ErrorClass,
  type FailureHistory,
  FINALIZER_RETRY_INTERVAL_MS,
  FORBIDDEN_RETRY_DELAY_MS,
  type ParkReason,
  type RetryDecision,
  type RetryPolicy,
  TRANSIENT_BASE_DELAY_MS,
} from './retry-policy.ts'
export type {
  EventSource,
  HandlerOptions,
  MappedWatch,
  OwnedWatch,
  PrimaryIdentity,
  PrimaryWatch,
} from './watches.ts'
