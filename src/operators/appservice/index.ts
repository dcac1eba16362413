/** @module appservice — the reference operator: an AppService gets a Deployment, a Service and a database entry. */
export * from './api.ts'
export * from './database-api.ts'
export * from './desired.ts'
export * from './manifests.ts'
export * from './operator.ts'
export * from './reconcile.ts'
export * from './status.ts'
export * from './validate.ts'
