/**
 * @module reconcile — makes one AppService's world match its spec.
 *
 * Order matters for correctness: finalizer before any external write; the cached object
 * confirmed live before acting on it (a new leader's cache may be older than what its
 * predecessor acted on); children by server-side apply, only on drift; external entry
 * keyed by the object's UID; status written last and only when it changed; deletion
 * cleans up the external entry and only then lets the object go.
 */
import * as z from 'zod/mini'
import type { ResourceClient } from '../../client/index.ts'
import {
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  TerminalError,
} from '../../controller/index.ts'
import { type Clock, type Condition, errorMessage, type KubeObject, realClock } from '../../core/index.ts'
import {
  applyIfDrifted,
  type EventRecorder,
  finalize,
  LiveCheck,
  setCondition,
  updateStatusIfChanged,
} from '../../objects/index.ts'
import { type AppService, AppServiceSpec, CONDITION, REASON } from './api.ts'
import type { DatabaseApi } from './database-api.ts'
import {
  databaseKey,
  desiredDeployment,
  desiredService,
  endpointOf,
  selectorOf,
  unusableSpec,
} from './desired.ts'

/** The finalizer guarding the external database entry. */
export const FINALIZER = 'platform.example.com/database-cleanup'
/** Field manager of every write this operator makes. */
export const FIELD_MANAGER = 'edgeop-appservice'
/** Default database class when the spec names none. */
export const DEFAULT_DATABASE_CLASS = 'standard'

/** What the reconciler reads and writes through. */
export interface AppServiceDeps {
  /** Cached AppService by `namespace/name`. */
  getAppService(key: string): AppService | undefined
  /** Cached children. */
  getDeployment(namespace: string, name: string): KubeObject | undefined
  getService(namespace: string, name: string): KubeObject | undefined
  appServices(namespace: string): ResourceClient<AppService>
  deployments(namespace: string): ResourceClient
  services(namespace: string): ResourceClient
  /** Undefined when no database API is configured. */
  database: DatabaseApi | undefined
  recorder: EventRecorder
  clock?: Clock
}

interface DeploymentStatus {
  replicas?: number
  updatedReplicas?: number
  readyReplicas?: number
  availableReplicas?: number
  observedGeneration?: number
  conditions?: { type: string; status: string; reason?: string; message?: string }[]
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
    const api = deps.appServices(cached.metadata.namespace!)
    // Everything below acts on the spec (or the deletion), and some of it outside the
    // cluster: act on the live object. When the cache is behind, the object just read is
    // newer than anything the cache holds, so acting on it is what the cache will ask for
    // once it catches up; waiting for it instead would leave the object behind for as long
    // as the watch takes to reconnect (predicates drop the status-only event that follows).
    const { object: app, behind } = await live.confirm(api, cached, ctx.signal)
    if (!app) {
      ctx.log.debug('cache is behind the API: the object is gone')
      return undefined // its delete event is on its way; whoever removed the finalizer cleaned up
    }
    if (behind)
      ctx.log.debug('cache is behind the API: reconciling the live object', {
        cached: cached.metadata.resourceVersion,
        live: app.metadata.resourceVersion,
      })

    const parsed = z.safeParse(AppServiceSpec, app.spec ?? {})
    const problem = parsed.success ? unusableSpec(parsed.data) : describeIssues(parsed.error)
    if (problem && !app.metadata.deletionTimestamp) {
      await writeStatus(
        api,
        app,
        { ...(app.status ?? {}) },
        [
          { type: CONDITION.ready, status: 'False', reason: REASON.invalid, message: problem },
          { type: CONDITION.degraded, status: 'True', reason: REASON.invalid, message: problem },
        ],
        clock,
        ctx,
        live,
      )
      deps.recorder.event(app, 'Warning', REASON.invalid, 'Validate', problem)
      throw new TerminalError(`${req.namespace}/${req.name}: ${problem}`)
    }

    const outcome = await finalize(
      api,
      app,
      FINALIZER,
      async (gone) => {
        try {
          await deps.database?.remove(databaseKey(gone), ctx.signal)
        } catch (err) {
          const message = `removing the database entry failed: ${errorMessage(err)}`
          await writeStatus(
            api,
            gone,
            { ...(gone.status ?? {}) },
            [{ type: CONDITION.degraded, status: 'True', reason: REASON.finalizationFailed, message }],
            clock,
            ctx,
            live,
          )
          deps.recorder.event(gone, 'Warning', REASON.finalizationFailed, 'Finalize', message)
          throw err
        }
      },
      ctx.signal,
    )
    if (outcome.deleting) return undefined
    const current = outcome.object
    if (current !== app) live.remember(current) // the finalizer patch answered with it
    const spec = (parsed as { data: AppServiceSpec }).data
    const ns = current.metadata.namespace!

    const dep = await applyIfDrifted(
      deps.deployments(ns),
      desiredDeployment(current, spec),
      deps.getDeployment(ns, req.name),
      FIELD_MANAGER,
      ctx.signal,
    )
    await applyIfDrifted(
      deps.services(ns),
      desiredService(current, spec),
      deps.getService(ns, req.name),
      FIELD_MANAGER,
      ctx.signal,
    )
    if (dep.written) ctx.log.info('deployment applied', { replicas: spec.replicas, image: spec.image })

    const status = {
      ...(current.status ?? {}),
      observedGeneration: current.metadata.generation,
      readyReplicas: (dep.object.status as DeploymentStatus | undefined)?.readyReplicas ?? 0,
      selector: selectorOf(current),
      endpoint: endpointOf(current, spec),
    }
    const conditions = deploymentConditions(dep.object, spec)

    const wantsDatabase = spec.database?.enabled === true
    try {
      if (wantsDatabase) {
        if (!deps.database) throw new Error('no database API is configured (--database-api)')
        await deps.database.ensure(
          databaseKey(current),
          { name: `${ns}-${req.name}`, namespace: ns, class: spec.database?.class ?? DEFAULT_DATABASE_CLASS },
          ctx.signal,
        )
      } else {
        await deps.database?.remove(databaseKey(current), ctx.signal)
      }
      conditions.push({ type: CONDITION.degraded, status: 'False', reason: REASON.asExpected, message: '' })
    } catch (err) {
      const message = `database API: ${errorMessage(err)}`
      await writeStatus(
        api,
        current,
        status,
        [...conditions, { type: CONDITION.degraded, status: 'True', reason: REASON.externalDown, message }],
        clock,
        ctx,
        live,
      )
      deps.recorder.event(current, 'Warning', REASON.externalDown, 'ProvisionDatabase', message)
      throw err
    }
    await writeStatus(api, current, status, conditions, clock, ctx, live)
    return undefined
  }
}

/**
 * Ready and Progressing from the live Deployment. Ready means the rollout is complete, as
 * `kubectl rollout status` decides it: the controller has seen this generation, every
 * replica runs the new template, no old replica is left, and they are all available. Ready
 * replicas alone are not enough: in a rolling update with surge there are more ready
 * replicas than wanted while old ones still serve.
 */
function deploymentConditions(
  dep: KubeObject,
  spec: AppServiceSpec,
): Omit<Condition, 'lastTransitionTime'>[] {
  const st = (dep.status ?? {}) as DeploymentStatus
  const ready = st.readyReplicas ?? 0
  const updated = st.updatedReplicas ?? 0
  const observed = (st.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0)
  const progressing = st.conditions?.find((c) => c.type === 'Progressing')
  const stuck = progressing?.status === 'False'
  const done =
    observed &&
    updated >= spec.replicas &&
    (st.replicas ?? 0) <= updated &&
    (st.availableReplicas ?? 0) >= updated &&
    ready >= spec.replicas
  const message = `${ready}/${spec.replicas} replicas ready`
  return [
    done
      ? { type: CONDITION.ready, status: 'True', reason: REASON.available, message }
      : {
          type: CONDITION.ready,
          status: 'False',
          reason: stuck ? REASON.unavailable : REASON.progressing,
          message: stuck ? `${message}: ${progressing?.message ?? 'rollout stalled'}` : message,
        },
    done
      ? { type: CONDITION.progressing, status: 'False', reason: REASON.available, message }
      : {
          type: CONDITION.progressing,
          status: stuck ? 'False' : 'True',
          reason: stuck ? REASON.unavailable : REASON.progressing,
          message,
        },
  ]
}

async function writeStatus(
  api: ResourceClient<AppService>,
  app: AppService,
  base: Record<string, unknown>,
  conditions: Omit<Condition, 'lastTransitionTime'>[],
  clock: Clock,
  ctx: ReconcileContext,
  live: LiveCheck<AppService>,
): Promise<void> {
  let list = app.status?.conditions ?? []
  const now = new Date(clock.now())
  for (const c of conditions)
    list = setCondition(list, { ...c, observedGeneration: app.metadata.generation ?? 0 }, now)
  const written = await updateStatusIfChanged(api, app, { ...base, conditions: list }, ctx.signal)
  if (!written) return
  // Read your own writes: until the cache shows this version, the next reconcile reads the
  // live object, so it compares its status with this one and not with the one before it.
  live.remember(written)
  ctx.log.debug('status written')
}

function describeIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `spec.${i.path.map(String).join('.')}: ${i.message}`).join('; ')
}
