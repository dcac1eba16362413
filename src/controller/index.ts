/** @module controller — the reconcile loop: event sources, predicates, the workqueue-driven Controller, reconcile results. */
export * from './controller.ts'
export * from './merged-source.ts'
export * from './predicates.ts'
export * from './reconciler.ts'
