/**
 * @module database-plan — pure: the next call to the database service, from what `status.database` recorded.
 *
 * A create is not idempotent at the service, and its answer can be lost after the service applied
 * it (a timeout after the request was sent, or this process dying before it recorded the task).
 * So the intent is recorded first: `Creating` is written to the status *before* the create is sent,
 * and whoever finds `Creating` — this process after a timeout, or the next leader — does not
 * know whether the entry exists and reads it back by its idempotency key before creating again.
 * `Provisioning` polls the task the service returned; `Ready` needs no call.
 */
import type { ConditionInput } from '../../objects/index.ts'
import { type AppServiceStatus, CONDITION, REASON } from './api.ts'
import type { DatabaseRecord, DatabaseTask } from './database-api.ts'

/** What the operator recorded about its entry. */
export type DatabaseProgress = NonNullable<AppServiceStatus['database']>

/**
 * 5 s between polls of a provisioning task: provisioning takes seconds to minutes, and a
 * requeue is cheap; polling faster only loads the service.
 */
export const DATABASE_POLL_MS = 5_000

/** The call the next reconcile makes. */
export type DatabaseAction =
  /** Nothing to do: ready, or no entry wanted and none recorded. */
  | 'none'
  /** Record `Creating`, then create. */
  | 'create'
  /** A create's outcome is unknown: read back by key; create only when absent. */
  | 'read-back'
  /** Poll the recorded task. */
  | 'poll'
  /** No entry wanted but one recorded: remove it. */
  | 'remove'

/** The next action for an AppService that does (`enabled`) or does not want an entry. */
export function nextDatabaseAction(enabled: boolean, recorded: DatabaseProgress | undefined): DatabaseAction {
  if (!enabled) return recorded ? 'remove' : 'none'
  if (!recorded) return 'create'
  return recorded.phase === 'Creating' ? 'read-back' : recorded.phase === 'Provisioning' ? 'poll' : 'none'
}

/** What to record after the service described the entry (a create's answer or a read back). */
export function progressOfRecord(record: DatabaseRecord): DatabaseProgress {
  return record.state === 'ready' || record.task === undefined
    ? { phase: 'Ready' }
    : { phase: 'Provisioning', task: record.task }
}

/**
 * What to record after polling the task of `recorded`: `Ready` (with the task) when it succeeded, unchanged while
 * it runs, and `Creating` when the service no longer knows it (so the entry is read back).
 */
export function progressOfTask(recorded: DatabaseProgress, task: DatabaseTask | undefined): DatabaseProgress {
  if (task === undefined) return { phase: 'Creating' }
  // The task stays: a status merge patch cannot drop a nested field, and it names what provisioned the entry.
  return task.state === 'succeeded' ? { ...recorded, phase: 'Ready' } : recorded
}

/** The DatabaseReady condition for `progress`; `percent` from the last poll, when there was one. */
export function databaseCondition(progress: DatabaseProgress, percent?: number): ConditionInput {
  if (progress.phase === 'Ready')
    return { type: CONDITION.database, status: 'True', reason: REASON.provisioned, message: '' }
  const message =
    progress.phase === 'Creating'
      ? 'create submitted'
      : `task ${progress.task}${percent === undefined ? '' : `: ${percent}% done`}`
  return { type: CONDITION.database, status: 'False', reason: REASON.provisioning, message }
}
