/**
 * @module database-sync — phase 5 of the AppService reconcile: the external database entry, through the
 * circuit breaker and with the fencing token, and how a failed call is reported.
 */
import { EdgeopError, errorMessage, isEdgeopError } from '../../core/index.ts'
import type { ConditionInput } from '../../objects/index.ts'
import { type AppService, type AppServiceSpec, type AppServiceStatus, REASON } from './api.ts'
import type { DatabaseCallOptions } from './database-api.ts'
import {
  type DatabaseProgress,
  databaseCondition,
  nextDatabaseAction,
  progressOfRecord,
  progressOfTask,
} from './database-plan.ts'
import { databaseKey } from './desired.ts'
import { BreakerWait, type Pass, updateStatus } from './reconcile-pass.ts'
import { degraded } from './status.ts'

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
export async function syncDatabase(
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
    const base: AppServiceStatus = recorded ? { ...status, database: recorded } : { ...status }
    return externalFailed(pass, app, base, rollout, err, REASON.externalDown, 'ProvisionDatabase')
  }
  const next: AppServiceStatus = { ...status }
  delete next.database
  if (recorded) next.database = recorded
  return { app, status: next, conditions: recorded ? [databaseCondition(recorded, percent)] : [] }
}

/** A call to the database service through the dependency's breaker (when there is one). */
export function guarded<T>(pass: Pass, fn: () => Promise<T>): Promise<T> {
  return pass.deps.breaker ? pass.deps.breaker.call(fn, pass.ctx.signal) : fn()
}

/**
 * The options of a database call: the pass's signal and the fencing token (writes carry it). With
 * a token source that has none (not leading), the service is not called at all.
 */
export function callOptions(pass: Pass, app: AppService): DatabaseCallOptions {
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
export async function externalFailed(
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
