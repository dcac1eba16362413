/** @module nodeconfig — the second reference operator: a per-node agent that keeps NodeConfig files on its node. */
export * from './agent.ts'
export * from './api.ts'
export * from './file-store.ts'
export * from './paths.ts'
export * from './plan.ts'
export * from './reconcile.ts'
export * from './root-check.ts'
export * from './status.ts'
