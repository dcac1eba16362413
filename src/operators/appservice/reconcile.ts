/**
 * @module reconcile — makes one AppService's world match its spec, in named phases.
 *
 * Order matters for correctness, and the reconciler reads in that order:
 * 1. {@link confirmLive} — the cached object confirmed live before acting on it (a new
 *    leader's cache may be older than what its predecessor acted on);
 * 2. {@link checkSpec} — an unusable spec is reported and not retried;
 * 3. {@link ensureFinalizerOrCleanUp} — the finalizer before any external write; on
 *    deletion the external entry is removed and only then the object let go;
 * 4. {@link applyChildren} — Deployment and Service by server-side apply, only on drift;
 * 5. {@link syncDatabase} — the external entry, keyed by the object's UID: intent recorded
 *    before a create, read back after an unknown outcome, provisioning polled with requeueAfter;
 * 6. {@link updateStatus} — last, and only when it changed.
 *
 * Every call to the database service goes through the dependency's circuit breaker: while it is
 * not closed, a reconcile that needs the service does not call it, reports
 * Degraded=True ExternalAPIUnavailable with the breaker's phase and is requeued for the breaker's
 * next probe (a deletion keeps its finalizer meanwhile). Writes carry the fencing token.
 */
import type { Deployment, Service } from '../../api/index.ts'
import type { ResourceClient } from '../../client/index.ts'
import {
  type FailureReport,
  RETRY_NOW_ANNOTATION,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  TerminalError,
} from '../../controller/index.ts'
import {
  type Clock,
  EdgeopError,
  errorMessage,
  isEdgeopError,
  type KubeObject,
  realClock,
} from '../../core/index.ts'
import {
  applyIfDrifted,
  type ConditionInput,
  type EventRecorder,
  finalize,
  LiveCheck,
  setCondition,
  updateStatusIfChanged,
} from '../../objects/index.ts'
import type { CircuitBreaker } from '../../resilience/index.ts'
import { type AppService, type AppServiceSpec, type AppServiceStatus, REASON } from './api.ts'
import type { DatabaseApi, DatabaseCallOptions } from './database-api.ts'
import {
  DATABASE_POLL_MS,
  type DatabaseProgress,
  databaseCondition,
  nextDatabaseAction,
  progressOfRecord,
  progressOfTask,
} from './database-plan.ts'
import { databaseKey, desiredDeployment, desiredService } from './desired.ts'
import { degraded, invalidSpecConditions, NOT_DEGRADED, observedStatus, rolloutConditions } from './status.ts'
import { validateSpec } from './validate.ts'

/** The finalizer guarding the external database entry. */
export const FINALIZER = 'platform.example.com/database-cleanup'
/** Field manager of every write this operator makes. */
export const FIELD_MANAGER = 'edgeop-appservice'

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
interface Pass {
  deps: AppServiceDeps
  /** The AppService client of the object's namespace. */
  api: ResourceClient<AppService>
  clock: Clock
  live: LiveCheck<AppService>
  ctx: ReconcileContext
}

/** The AppService reconciler. */
export function appServiceReconciler(deps: AppServiceDeps): Reconciler {
  const clock = deps.clock ?? realClock
  // One per reconciler, so per process: the operator exits when it loses its Lease.
  const live = new LiveCheck<AppService>()
  return async (req, ctx): Promise<ReconcileResult> => {
    const key = `${req.namespace}/${req.name}`
    const cached = deps.getAppService(key)
    if (!cached) {
      live.forget(key)
      return undefined // gone: children are garbage-collected through owner references
    }
    const pass: Pass = { deps, api: deps.appServices(cached.metadata.namespace!), clock, live, ctx }
    try {
      const app = await confirmLive(pass, cached)
      if (!app) return undefined // its delete event is on its way; whoever removed the finalizer cleaned up
      const spec = await checkSpec(pass, app)
      const current = await ensureFinalizerOrCleanUp(pass, app)
      // No spec only while deleting, and then there is no `current` either.
      if (!current || !spec) return undefined
      const deployment = await applyChildren(pass, current, spec)
      const status = observedStatus(current, spec, deployment)
      const rollout = rolloutConditions(deployment, spec.replicas)
      const db = await syncDatabase(pass, current, spec, status, rollout)
      await updateStatus(pass, db.app, db.status, [...rollout, ...db.conditions, NOT_DEGRADED])
      return db.status.database?.phase === 'Ready' || !db.status.database
        ? undefined
        : { requeueAfterMs: DATABASE_POLL_MS }
    } catch (err) {
      if (err instanceof BreakerWait) return { requeueAfterMs: err.ms }
      throw err
    }
  }
}

/** Ends a reconcile that needs the database service while its breaker is not closed: requeue after `ms`. */
class BreakerWait {
  readonly ms: number
  constructor(ms: number) {
    this.ms = ms
  }
}

/**
 * Phase 1: the object to act on. Everything after acts on the spec (or the deletion), and
 * some of it outside the cluster: act on the live object. When the cache is behind, the
 * object just read is newer than anything the cache holds, so acting on it is what the
 * cache will ask for once it catches up; waiting for it instead would leave the object
 * behind for as long as the watch takes to reconnect (predicates drop the status-only
 * event that follows). Undefined when the object is gone.
 */
async function confirmLive(pass: Pass, cached: AppService): Promise<AppService | undefined> {
  const { object: app, behind } = await pass.live.confirm(pass.api, cached, pass.ctx.signal)
  if (!app) {
    pass.ctx.log.debug('cache is behind the API: the object is gone')
    return undefined
  }
  if (behind)
    pass.ctx.log.debug('cache is behind the API: reconciling the live object', {
      cached: cached.metadata.resourceVersion,
      live: app.metadata.resourceVersion,
    })
  return app
}

/**
 * Phase 2: the spec with its defaults. An unusable spec on a live object gets
 * Ready=False and Degraded=True (InvalidConfiguration), a Warning event, and a
 * {@link TerminalError}: retrying cannot help until the spec changes, and a spec change
 * is an event of its own. While deleting, an unusable spec does not stop the cleanup:
 * undefined then.
 */
async function checkSpec(pass: Pass, app: AppService): Promise<AppServiceSpec | undefined> {
  const checked = validateSpec(app.spec)
  if (checked.ok) return checked.spec
  if (app.metadata.deletionTimestamp) return undefined
  await updateStatus(pass, app, { ...(app.status ?? {}) }, invalidSpecConditions(checked.problem))
  pass.deps.recorder.event(app, 'Warning', REASON.invalid, 'Validate', checked.problem)
  throw new TerminalError(`${app.metadata.namespace}/${app.metadata.name}: ${checked.problem}`)
}

/**
 * Phase 3: the finalizer in place before any external write, and the object as that
 * write returned it. While deleting: the database entry removed, then the finalizer (the
 * finalizer stays, with Degraded=True FinalizationFailed and a Warning, while removal
 * fails); undefined then, as there is nothing more to do.
 */
async function ensureFinalizerOrCleanUp(pass: Pass, app: AppService): Promise<AppService | undefined> {
  const { deps, ctx } = pass
  const outcome = await finalize(
    pass.api,
    app,
    FINALIZER,
    async (gone) => {
      const db = deps.database
      if (!db) return
      try {
        await guarded(pass, () => db.remove(databaseKey(gone, deps.cluster), callOptions(pass, gone)))
      } catch (err) {
        await externalFailed(
          pass,
          gone,
          { ...(gone.status ?? {}) },
          [],
          err,
          REASON.finalizationFailed,
          'Finalize',
        )
      }
    },
    ctx.signal,
  )
  if (outcome.deleting) return undefined
  if (outcome.object !== app) pass.live.remember(outcome.object) // the finalizer patch answered with it
  return outcome.object
}

/** Phase 4: the Deployment and the Service, each applied only when it drifted. Returns the Deployment as it is now. */
async function applyChildren(pass: Pass, app: AppService, spec: AppServiceSpec): Promise<Deployment> {
  const { deps, ctx } = pass
  const ns = app.metadata.namespace!
  const name = app.metadata.name!
  const apply = async <T extends KubeObject>(client: ResourceClient<T>, desired: T, live: T | undefined) => {
    const out = await applyIfDrifted(client, desired, live, FIELD_MANAGER, ctx.signal)
    if (out.written && live) deps.onDrift?.(desired.kind!)
    return out
  }
  const dep = await apply(
    deps.deployments(ns),
    desiredDeployment(app, spec, deps.shardLabel),
    deps.getDeployment(ns, name),
  )
  await apply(deps.services(ns), desiredService(app, spec, deps.shardLabel), deps.getService(ns, name))
  if (dep.written) ctx.log.info('deployment applied', { replicas: spec.replicas, image: spec.image })
  return dep.object
}

/** What {@link syncDatabase} leaves for the final status write. */
interface DatabaseOutcome {
  /** The object to write status to (a status write of the intent changed it). */
  app: AppService
  status: AppServiceStatus
  conditions: ConditionInput[]
}

/**
 * Phase 5: the external database entry exists exactly when the spec asks for one (keyed by the
 * UID). The action comes from `status.database` ({@link nextDatabaseAction}): before a create,
 * `Creating` is written to the status, so an unknown outcome is read back by key, by this process
 * or the next leader, instead of creating a second entry; a provisioning task is polled with
 * DatabaseReady=False carrying its progress. On failure see {@link externalFailed}.
 */
async function syncDatabase(
  pass: Pass,
  app: AppService,
  spec: AppServiceSpec,
  status: AppServiceStatus,
  rollout: ConditionInput[],
): Promise<DatabaseOutcome> {
  const { deps, ctx } = pass
  const enabled = spec.database?.enabled === true
  let recorded: DatabaseProgress | undefined = status.database
  const action = nextDatabaseAction(enabled, recorded)
  const db = deps.database
  if (action !== 'none' && !db) {
    if (!enabled) return { app, status, conditions: [] }
    throw new EdgeopError('EDGEOP_ERR_CONFIG', 'no database API is configured (--database-api)', {
      step: 'provision database',
    })
  }
  const key = databaseKey(app, deps.cluster)
  const ns = app.metadata.namespace!
  const entry = {
    name: `${deps.cluster ? `${deps.cluster}-` : ''}${ns}-${app.metadata.name}`,
    namespace: ns,
    // Sent only when enabled, and validateSpec then requires a class.
    class: spec.database?.class ?? '',
  }
  let percent: number | undefined
  try {
    if (action === 'remove') {
      await guarded(pass, () => db!.remove(key, callOptions(pass, app)))
      recorded = undefined
    } else if (action === 'create') {
      // The intent first: should the answer be lost, whoever reconciles next reads back.
      recorded = { phase: 'Creating' }
      app = await updateStatus(pass, app, { ...status, database: recorded }, rollout)
      recorded = progressOfRecord(await guarded(pass, () => db!.create(key, entry, callOptions(pass, app))))
    } else if (action === 'read-back') {
      const found = await guarded(pass, () => db!.get(key, { signal: ctx.signal }))
      ctx.log.info('database create outcome unknown: read back', { found: found !== undefined })
      recorded = progressOfRecord(
        found ?? (await guarded(pass, () => db!.create(key, entry, callOptions(pass, app)))),
      )
    } else if (action === 'poll') {
      const task = await guarded(pass, () => db!.task(recorded!.task ?? '', callOptions(pass, app)))
      percent = task?.progress
      recorded = progressOfTask(recorded!, task)
    }
  } catch (err) {
    const base: AppServiceStatus = { ...status, ...(recorded ? { database: recorded } : {}) }
    return externalFailed(pass, app, base, rollout, err, REASON.externalDown, 'ProvisionDatabase')
  }
  const next: AppServiceStatus = { ...status }
  delete next.database
  if (recorded) next.database = recorded
  return { app, status: next, conditions: recorded ? [databaseCondition(recorded, percent)] : [] }
}

/** A call to the database service through the dependency's breaker (when there is one). */
function guarded<T>(pass: Pass, fn: () => Promise<T>): Promise<T> {
  return pass.deps.breaker ? pass.deps.breaker.call(fn, pass.ctx.signal) : fn()
}

/**
 * The options of a database call: the pass's signal and the fencing token (writes carry it). With
 * a token source that has none (not leading), the service is not called at all.
 */
function callOptions(pass: Pass, app: AppService): DatabaseCallOptions {
  const source = pass.deps.fencingToken
  const fencingToken = source?.(app)
  if (source && fencingToken === undefined)
    throw new EdgeopError('EDGEOP_ERR_LEADER', 'not leading', { step: 'fence database call' })
  return { signal: pass.ctx.signal, fencingToken }
}

/**
 * A database call failed or was refused. A fenced write (a newer leader exists) ends the
 * reconcile at once, writing nothing. Otherwise the status gets `conditions` and Degraded=True
 * `reason` naming the error and the breaker's phase, and a Warning is recorded; then, while the
 * breaker is not closed, the reconcile ends with a requeue for its next probe, else the error
 * propagates for a retry with backoff.
 */
async function externalFailed(
  pass: Pass,
  app: AppService,
  base: AppServiceStatus,
  conditions: ConditionInput[],
  err: unknown,
  reason: string,
  action: string,
): Promise<never> {
  if (isEdgeopError(err, 'EDGEOP_ERR_LEADER')) throw err
  const breaker = pass.deps.breaker
  const open = breaker !== undefined && breaker.phase !== 'closed'
  // While open, a stable message: the status is not rewritten on every requeue.
  const cause = isEdgeopError(err, 'EDGEOP_ERR_CIRCUIT_OPEN') ? 'not called' : errorMessage(err)
  const message = `database API: ${cause}${breaker ? `; circuit breaker ${breaker.phase}` : ''}`
  await updateStatus(pass, app, base, [...conditions, degraded(open ? REASON.externalDown : reason, message)])
  pass.deps.recorder.event(app, 'Warning', open ? REASON.externalDown : reason, action, message)
  if (open) throw new BreakerWait(Math.max(1, breaker.retryAfterMs()))
  throw err
}

/**
 * Phase 6 (and the report of every failure before it): `base` with `conditions` merged
 * into the current ones, each stamped with this generation, written only when it
 * changed.
 */
async function updateStatus(
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

/** Degraded reasons the controller's failure reports give (see {@link appServiceFailureReporter}). */
export const FAILURE_REASON = { forbidden: 'Forbidden', parked: 'Parked' } as const

/**
 * The controller's `onFailure` hook: Degraded=True and a Warning event that say why the operator is
 * stuck. A 403 names the RBAC rule to grant (`Forbidden`); a parked key says why it stopped and how to
 * retry it (`Parked`). Best effort: what fails here is logged by the controller.
 */
export function appServiceFailureReporter(
  deps: Pick<AppServiceDeps, 'getAppService' | 'appServices' | 'recorder' | 'clock'>,
): (req: ReconcileRequest, report: FailureReport, ctx: ReconcileContext) => Promise<void> {
  return async (req, report, ctx) => {
    const app = deps.getAppService(`${req.namespace}/${req.name}`)
    if (!app) return
    const [reason, message] = report.parked
      ? [
          FAILURE_REASON.parked,
          `${report.parked} after ${report.attempts} failures: ${report.message}; to retry, change the spec or annotation ${RETRY_NOW_ANNOTATION}`,
        ]
      : [FAILURE_REASON.forbidden, `missing permission, grant ${report.missingPermission}: ${report.message}`]
    deps.recorder.event(app, 'Warning', reason, 'Reconcile', message)
    const now = new Date((deps.clock ?? realClock).now())
    const conditions = setCondition(
      app.status?.conditions ?? [],
      { ...degraded(reason, message), observedGeneration: app.metadata.generation ?? 0 },
      now,
    )
    await updateStatusIfChanged(
      deps.appServices(app.metadata.namespace!),
      app,
      { ...(app.status ?? {}), conditions },
      ctx.signal,
    )
  }
}
