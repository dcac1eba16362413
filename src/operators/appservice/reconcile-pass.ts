/**
 * @module reconcile-pass — what the phases of one AppService reconcile share: the reconciler's dependencies,
 * the pass they run in, the status write every phase ends or fails with, and the breaker's requeue.
 */
import type { Deployment, Service } from '../../api/index.ts'
import type { ResourceClient } from '../../client/index.ts'
import type { ReconcileContext } from '../../controller/index.ts'
import type { Clock } from '../../core/index.ts'
import {
  type ConditionInput,
  type EventRecorder,
  type LiveCheck,
  setCondition,
  updateStatusIfChanged,
} from '../../objects/index.ts'
import type { CircuitBreaker } from '../../resilience/index.ts'
import type { AppService, AppServiceStatus } from './api.ts'
import type { DatabaseApi } from './database-api.ts'

/** What the reconciler reads and writes through. */
export interface AppServiceDeps {
  /** Cached AppService by `namespace/name`. */
  getAppService(key: string): AppService | undefined
  /** Cached children. */
  getDeployment(namespace: string, name: string): Deployment | undefined
  getService(namespace: string, name: string): Service | undefined
  appServices(namespace: string): ResourceClient<AppService>
  deployments(namespace: string): ResourceClient<Deployment>
  services(namespace: string): ResourceClient<Service>
  /** Undefined when no database API is configured. */
  database: DatabaseApi | undefined
  /** Guards every call to `database`; unguarded when omitted. */
  breaker?: CircuitBreaker
  /**
   * The fencing token database writes about `app` carry (the Lease's `leaseTransitions` while
   * leading; sharded, the object's epoch while owned). When given and it returns undefined (not
   * leading, not the owner), nothing is written. Unfenced when omitted.
   */
  fencingToken?: (app: AppService) => number | undefined
  /** Sharded: the assignment label, copied from the AppService to its children (their informers select on it). */
  shardLabel?: string
  recorder: EventRecorder
  clock?: Clock
  /** The member cluster the objects are in: part of the database key and entry name. Absent: the home cluster. */
  cluster?: string
  /** Told when an existing child of `kind` was re-applied because it drifted from the desired state. */
  onDrift?: ((kind: string) => void) | undefined
}

/** What every phase of one pass works with: the dependencies, this object's client and the pass's context. */
export interface Pass {
  deps: AppServiceDeps
  /** The AppService client of the object's namespace. */
  api: ResourceClient<AppService>
  clock: Clock
  live: LiveCheck<AppService>
  ctx: ReconcileContext
}

/** Ends a reconcile that needs the database service while its breaker is not closed: requeue after `ms`. */
export class BreakerWait {
  readonly ms: number
  /** A wait of `ms`. */
  constructor(ms: number) {
    this.ms = ms
  }
}

/**
 * Phase 6 (and the report of every failure before it): `base` with `conditions` merged
 * into the current ones, each stamped with this generation, written only when it
 * changed.
 */
export async function updateStatus(
  pass: Pass,
  app: AppService,
  base: AppServiceStatus,
  conditions: readonly ConditionInput[],
): Promise<AppService> {
  let list = app.status?.conditions ?? []
  const now = new Date(pass.clock.now())
  for (const c of conditions)
    list = setCondition(list, { ...c, observedGeneration: app.metadata.generation ?? 0 }, now)
  const written = await updateStatusIfChanged(pass.api, app, { ...base, conditions: list }, pass.ctx.signal)
  if (!written) return app
  // Read your own writes: until the cache shows this version, the next reconcile reads the
  // live object, so it compares its status with this one and not with the one before it.
  pass.live.remember(written)
  pass.ctx.log.debug('status written')
  return written
}
