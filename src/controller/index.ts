/** @module controller — the reconcile loop: event sources, predicates, the workqueue-driven Controller, reconcile results. */
export {
  Controller,
  type ControllerInstrumentation,
  type ControllerObserver,
  type ControllerOptions,
  DEFAULT_MAX_CONCURRENT_RECONCILES,
  type EventSource,
  type MappedWatch,
  type OwnedWatch,
  type PrimaryWatch,
  type ReconcileOutcome,
} from './controller.ts'
export { mergeSources } from './merged-source.ts'
export {
  allOf,
  annotationsChanged,
  anyOf,
  generationChanged,
  labelsChanged,
  type Predicate,
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
