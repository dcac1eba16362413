/**
 * @module failure-reporter — the AppService controller's `onFailure` hook: why the operator is stuck, on the object.
 */
import type { FailureReport, ReconcileContext, ReconcileRequest } from '../../controller/index.ts'
import { RETRY_NOW_ANNOTATION } from '../../controller/index.ts'
import { realClock } from '../../core/index.ts'
import { setCondition, updateStatusIfChanged } from '../../objects/index.ts'
import type { AppServiceDeps } from './reconcile-pass.ts'
import { degraded } from './status.ts'

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
