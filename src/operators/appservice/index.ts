/**
 * @module appservice — the reference operator: an AppService gets a Deployment, a Service and a database entry.
 *
 * Written as user code: every file imports the library only through its public entry points, and
 * `../../<folder>/index.ts` is the module a user imports as `edgeop/<folder>`. So, copied out of this
 * repository, `import { CORE_TYPES, type KubeClient } from '../../client/index.ts'` reads
 * `import { CORE_TYPES, type KubeClient } from 'edgeop/client'` (likewise `edgeop/api`, `edgeop/cache`,
 * `edgeop/controller`, `edgeop/core`, `edgeop/leader`, `edgeop/manager`, `edgeop/metrics`,
 * `edgeop/objects`, `edgeop/operator`, `edgeop/queue`, `edgeop/resilience`, `edgeop/sharding`,
 * `edgeop/tracing`, `edgeop/webhook`); the paths stay relative here so the tests run from the sources.
 * `APPSERVICES` is a typed resource type, so clients and informers of it hold `AppService`s without casts.
 */
export * from './api.ts'
export * from './convert.ts'
export * from './database-api.ts'
export * from './database-plan.ts'
export * from './deployment-names.ts'
export * from './desired.ts'
export * from './disruption-budget.ts'
export * from './failure-reporter.ts'
export * from './manifests.ts'
export * from './operator.ts'
export * from './reconcile.ts'
export type { AppServiceDeps } from './reconcile-pass.ts'
export * from './status.ts'
export * from './validate.ts'
export * from './webhooks.ts'
