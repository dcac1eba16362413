/**
 * @module nodeconfig — the second reference operator: a per-node agent that keeps NodeConfig files on its node.
 *
 * Written as user code: every file imports the library only through its public entry points, and
 * `../../<folder>/index.ts` is the module a user imports as `edgeop/<folder>`. So, copied out of this
 * repository, `import { type ResourceClient } from '../../client/index.ts'` reads
 * `import { type ResourceClient } from 'edgeop/client'` (likewise `edgeop/cache`, `edgeop/controller`,
 * `edgeop/core`, `edgeop/objects`, `edgeop/operator`, `edgeop/queue`); the paths stay relative here so
 * the tests run from the sources. `NODECONFIGS` is a typed resource type, so clients and informers of it
 * hold `NodeConfig`s without casts.
 */
export * from './agent.ts'
export * from './aggregate.ts'
export * from './aggregator.ts'
export * from './api.ts'
export * from './event-sink.ts'
export * from './file-store.ts'
export * from './paths.ts'
export * from './plan.ts'
export * from './reconcile.ts'
export * from './report-api.ts'
export * from './rollout.ts'
export * from './root-check.ts'
export * from './status.ts'
export * from './status-reporter.ts'
export * from './status-write.ts'
