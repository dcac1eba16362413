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
 * 5. {@link syncDatabase} (database-sync.ts) — the external entry, keyed by the object's UID: intent recorded
 *    before a create, read back after an unknown outcome, provisioning polled with requeueAfter;
 * 6. {@link updateStatus} (reconcile-pass.ts) — last, and only when it changed.
 *
 * Every call to the database service goes through the dependency's circuit breaker: while it is
 * not closed, a reconcile that needs the service does not call it, reports
 * Degraded=True ExternalAPIUnavailable with the breaker's phase and is requeued for the breaker's
 * next probe (a deletion keeps its finalizer meanwhile). Writes carry the fencing token.
 */
import type { Deployment } from '../../api/index.ts'
import type { ResourceClient } from '../../client/index.ts'
import { type ReconcileResult, type Reconciler, TerminalError } from '../../controller/index.ts'
import { type KubeObject, realClock } from '../../core/index.ts'
import { applyIfDrifted, finalize, LiveCheck } from '../../objects/index.ts'
import { type AppService, type AppServiceSpec, REASON } from './api.ts'
import { DATABASE_POLL_MS } from './database-plan.ts'
import { callOptions, externalFailed, guarded, syncDatabase } from './database-sync.ts'
import { databaseKey, desiredDeployment, desiredService } from './desired.ts'
import { type AppServiceDeps, BreakerWait, type Pass, updateStatus } from './reconcile-pass.ts'
import { invalidSpecConditions, NOT_DEGRADED, observedStatus, rolloutConditions } from './status.ts'
import { validateSpec } from './validate.ts'

/** The finalizer guarding the external database entry. */
export const FINALIZER = 'platform.example.com/database-cleanup'
/** Field manager of every write this operator makes. */
export const FIELD_MANAGER = 'edgeop-appservice'

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
