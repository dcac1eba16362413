/**
 * @module failure-reporter — the AppService controller's `onFailure` hook: why the operator is stuck, on the object.
 */
import type {
  FailureReport,
  ParkedRecord,
  ParkReason,
  ReconcileContext,
  ReconcileRequest,
} from '../../controller/index.ts'
import { FINALIZER_RETRY_INTERVAL_MS, RETRY_NOW_ANNOTATION } from '../../controller/index.ts'
import { realClock } from '../../core/index.ts'
import { setCondition, updateStatusIfChanged } from '../../objects/index.ts'
import { type AppService, CONDITION, REASON } from './api.ts'
import type { AppServiceDeps } from './reconcile-pass.ts'
import { degraded } from './status.ts'

/** Degraded reasons the controller's failure reports give (see {@link appServiceFailureReporter}). */
export const FAILURE_REASON = {
  forbidden: 'Forbidden',
  parked: 'Parked',
  finalizerRetrying: 'FinalizerRetrying',
} as const

/** The Degraded message of a parked key: why, after how many failures, of which class, the error, how to retry. */
function parkedMessage(report: FailureReport & { parked: ParkReason }): string {
  return `${report.parked} after ${report.attempts} failures (${report.errorClass}): ${report.message}; to retry, change the spec or annotation ${RETRY_NOW_ANNOTATION}`
}

/** {@link parkedMessage} read back. */
const PARKED_MESSAGE = /^(no_retry|attempts|time_budget) after (\d+) failures \(([a-z]+)\): (.*); to retry, /s

/**
 * The controller's `parkedFrom`: the park an AppService records in its `Degraded=True` condition for
 * its current generation: reason `Parked` (written by {@link appServiceFailureReporter}), or
 * `InvalidConfiguration` (an unusable spec: the reconciler's `TerminalError`, which parks at
 * once); undefined otherwise. So a parked AppService stays parked across a restart and a leader
 * change, and every replica's `/debug/parked` lists it.
 */
export function appServiceParkedRecord(app: AppService): ParkedRecord | undefined {
  const c = app.status?.conditions?.find((x) => x.type === CONDITION.degraded)
  if (c?.status !== 'True') return undefined
  if ((c.observedGeneration ?? 0) !== (app.metadata.generation ?? 0)) return undefined
  const parkedAt = Date.parse(c.lastTransitionTime ?? '') || 0
  if (c.reason === REASON.invalid)
    return { reason: 'no_retry', errorClass: 'terminal', lastError: c.message ?? '', attempts: 1, parkedAt }
  if (c.reason !== FAILURE_REASON.parked) return undefined
  const m = PARKED_MESSAGE.exec(c.message ?? '')
  if (!m) return undefined
  return {
    reason: m[1] as ParkReason,
    attempts: Number(m[2]),
    errorClass: m[3]!,
    lastError: m[4]!,
    parkedAt,
  }
}

/**
 * The controller's `onFailure` hook: Degraded=True and a Warning event that say why the operator is
 * stuck. A 403 names the RBAC rule to grant (`Forbidden`); a parked key says why it stopped and how to
 * retry it (`Parked`); a deletion whose finalizer keeps failing says how long it has waited
 * (`FinalizerRetrying`). Best effort: what fails here is logged by the controller.
 */
export function appServiceFailureReporter(
  deps: Pick<AppServiceDeps, 'getAppService' | 'appServices' | 'recorder' | 'clock'>,
): (req: ReconcileRequest, report: FailureReport, ctx: ReconcileContext) => Promise<void> {
  return async (req, report, ctx) => {
    const app = deps.getAppService(`${req.namespace}/${req.name}`)
    if (!app) return
    const [reason, message] = report.parked
      ? [FAILURE_REASON.parked, parkedMessage({ ...report, parked: report.parked })]
      : report.finalizerWaitingMs !== undefined
        ? [
            FAILURE_REASON.finalizerRetrying,
            `deletion waiting ${Math.round(report.finalizerWaitingMs / 1000)} s; the finalizer is retried every ${FINALIZER_RETRY_INTERVAL_MS / 1000} s until it succeeds: ${report.message}`,
          ]
        : [
            FAILURE_REASON.forbidden,
            `missing permission, grant ${report.missingPermission}: ${report.message}`,
          ]
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
