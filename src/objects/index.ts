/** @module objects — what a reconciler does to Kubernetes objects: apply on drift, conditions, finalizers, owner references, live checks, events, CRDs from zod. */
export * from './apply.ts'
export * from './conditions.ts'
export * from './crd.ts'
export * from './events.ts'
export * from './finalizer.ts'
export * from './live-check.ts'
export * from './owner.ts'
