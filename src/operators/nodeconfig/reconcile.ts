/**
 * @module reconcile — one pass of the node agent: plan, remove, write, record, report.
 *
 * The agent has a single key, its node: every event (its Node relabelled, any NodeConfig
 * changed) and every periodic drift check runs the same full, level-based pass over all
 * NodeConfigs, so conflicts are seen whole and garbage collection needs no memory of
 * events. Order matters for "nothing leaks": new ownership is recorded before a file is
 * written, and a removal is forgotten only after the file is gone.
 */
import type { ResourceClient } from '../../client/index.ts'
import type { ReconcileResult, Reconciler } from '../../controller/index.ts'
import { type Clock, errorMessage, type KubeObject, type Logger, realClock } from '../../core/index.ts'
import { GROUP, KIND, type NodeConfig, REASON, STATE, VERSION } from './api.ts'
import type { FileStore, OwnershipRecord } from './file-store.ts'
import { applies, type NodePlan, planNode } from './plan.ts'
import {
  appliedMessage,
  failureMessage,
  fieldManagerFor,
  nextEntry,
  ownEntry,
  type Report,
  sameReport,
  statusApplyBody,
} from './status.ts'

/** Drift check interval: 30 s, so a hand-edited file is back within half a minute. */
export const DEFAULT_RECHECK_INTERVAL_MS = 30_000
/**
 * How long a status entry just sent is not sent again while the cache does not show it
 * yet: 10 s. Every agent writes into the same NodeConfig's status, so the cached
 * resourceVersion moves with the others' writes before this agent's own arrives; without
 * the wait each of those moves re-sent the same entry. After it, a write that never shows
 * (lost, or overwritten) is sent again.
 */
export const STATUS_RESEND_AFTER_MS = 10_000

/** Where events go (an `EventRecorder` fits). */
export interface EventSink {
  event(regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void
}

/** What the agent reads and writes through. */
export interface NodeConfigAgentDeps {
  nodeName: string
  /** This node's cached Node object (only its labels are read); undefined when absent. */
  getNode(): KubeObject | undefined
  /** Every cached NodeConfig. */
  listNodeConfigs(): readonly NodeConfig[]
  store: FileStore
  /** The NodeConfig client; only `apply` on the status subresource is used. */
  nodeConfigs: Pick<ResourceClient<NodeConfig>, 'apply'>
  recorder?: EventSink
  clock?: Clock
  /** Default {@link DEFAULT_RECHECK_INTERVAL_MS}. */
  recheckIntervalMs?: number
}

const modeText = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`

/**
 * The agent's reconciler.
 *
 * Guarantees: a missing Node object changes nothing on disk; an unusable root or
 * ownership record fails every applying NodeConfig's entry with the reason and touches
 * no file; one NodeConfig's failure never stops another's files; the status is written
 * only when this node's entry changes, and events only when something changed.
 * Returns `{ requeueAfterMs }` (the drift check); throws, for a retry with backoff, when
 * a status write or the final record save failed.
 */
export function nodeConfigReconciler(deps: NodeConfigAgentDeps): Reconciler {
  const clock = deps.clock ?? realClock
  const recheck = { requeueAfterMs: deps.recheckIntervalMs ?? DEFAULT_RECHECK_INTERVAL_MS }
  const node = deps.nodeName
  const manager = fieldManagerFor(node)
  /** uid → what we last applied, the resourceVersion the cache had then and when (skips re-sends before the cache catches up). */
  const sent = new Map<string, { report: string; rv: string | undefined; at: number }>()

  return async (_request, ctx): Promise<ReconcileResult> => {
    const log = ctx.log
    const nodeObject = deps.getNode()
    if (!nodeObject) {
      log.info('this node has no Node object (yet); leaving files as they are', { node })
      return recheck
    }
    const all = deps.listNodeConfigs()
    const reports = new Map<string, Report>()
    let record: OwnershipRecord
    try {
      await deps.store.open()
      record = await deps.store.loadRecord()
    } catch (err) {
      const message = errorMessage(err)
      log.error('root unusable; no file touched', { error: message })
      for (const c of all)
        if (applies(c, nodeObject.metadata.labels))
          reports.set(c.metadata.uid!, { state: STATE.failed, message: failureMessage([message]) })
      await report(all, reports)
      return recheck
    }

    const plan = planNode(all, nodeObject.metadata.labels, record)
    const next: OwnershipRecord = { version: 1, files: { ...record.files } }
    let recordError: unknown
    try {
      await claimNewPaths(plan, next, deps.store)
    } catch (err) {
      const message = errorMessage(err)
      log.error('cannot record ownership; no file touched', { error: message })
      for (const p of plan.configs) reports.set(p.config.metadata.uid!, { state: STATE.failed, message })
      await report(all, reports)
      return recheck
    }
    await removeUnclaimed(plan, next, all, log)
    for (const p of plan.configs) {
      const uid = p.config.metadata.uid!
      if (p.problems.length > 0) {
        reports.set(uid, { state: STATE.failed, message: failureMessage(p.problems) })
        continue
      }
      const errors: string[] = []
      const written: string[] = []
      const restored: string[] = []
      for (const f of p.files) {
        try {
          const outcome = await deps.store.ensure(f.path, f.content, f.mode, f.sha256)
          const before = record.files[f.path]
          next.files[f.path] = {
            uid,
            name: p.config.metadata.name!,
            sha256: f.sha256,
            mode: modeText(f.mode),
          }
          if (outcome === 'unchanged') continue
          const same = before?.uid === uid && before.sha256 === f.sha256 && before.mode === modeText(f.mode)
          ;(same ? restored : written).push(f.path)
        } catch (err) {
          errors.push(errorMessage(err))
        }
      }
      reports.set(
        uid,
        errors.length > 0
          ? { state: STATE.failed, message: failureMessage(errors) }
          : { state: STATE.applied, message: appliedMessage(p.files.length) },
      )
      if (written.length > 0) {
        log.info('files written', { nodeConfig: p.config.metadata.name, paths: written })
        deps.recorder?.event(
          p.config,
          'Normal',
          REASON.written,
          'Apply',
          `${node}: wrote ${written.join(', ')}`,
        )
      }
      if (restored.length > 0) {
        log.info('drift corrected', { nodeConfig: p.config.metadata.name, paths: restored })
        deps.recorder?.event(
          p.config,
          'Normal',
          REASON.driftCorrected,
          'Apply',
          `${node}: restored ${restored.join(', ')} (changed or deleted on the node)`,
        )
      }
    }
    if (JSON.stringify(next.files) !== JSON.stringify(record.files)) {
      try {
        await deps.store.saveRecord(next)
      } catch (err) {
        recordError = err
      }
    }
    await report(all, reports)
    if (recordError) throw recordError
    return recheck

    async function report(configs: readonly NodeConfig[], outcome: Map<string, Report>): Promise<void> {
      const failures: unknown[] = []
      const now = new Date(clock.now())
      for (const c of configs) {
        const uid = c.metadata.uid!
        const mine = ownEntry(c, node)
        const r = outcome.get(uid)
        const entry = r ? nextEntry(c, node, r, mine, now) : undefined
        if (sameReport(mine, entry)) continue
        const key = JSON.stringify(entry ? [entry.state, entry.message, entry.observedGeneration] : null)
        const last = sent.get(uid)
        if (
          last &&
          last.report === key &&
          (last.rv === c.metadata.resourceVersion || clock.monotonic() - last.at < STATUS_RESEND_AFTER_MS)
        )
          continue
        try {
          await deps.nodeConfigs.apply(statusApplyBody(c, entry) as NodeConfig, {
            fieldManager: manager,
            force: true,
            subresource: 'status',
            signal: ctx.signal,
          })
          sent.set(uid, { report: key, rv: c.metadata.resourceVersion, at: clock.monotonic() })
        } catch (err) {
          if ((err as { status?: number }).status === 404 || (err as { status?: number }).status === 409)
            continue
          failures.push(err)
          continue
        }
        if (entry?.state === STATE.failed)
          deps.recorder?.event(c, 'Warning', REASON.failed, 'Apply', `${node}: ${entry.message}`)
      }
      for (const uid of sent.keys()) if (!configs.some((c) => c.metadata.uid === uid)) sent.delete(uid)
      if (failures.length > 0) throw failures[0]
    }
  }

  /** Removes recorded files nobody claims; forgets each only once it is gone. */
  async function removeUnclaimed(
    plan: NodePlan,
    next: OwnershipRecord,
    all: readonly NodeConfig[],
    log: Logger,
  ): Promise<void> {
    const removedBy = new Map<string, { owner: KubeObject; paths: string[] }>()
    for (const r of plan.removals) {
      try {
        const removed = await deps.store.remove(r.path)
        delete next.files[r.path]
        if (!removed) continue
        const owner =
          all.find((c) => c.metadata.uid === r.owner.uid) ??
          ({
            apiVersion: `${GROUP}/${VERSION}`,
            kind: KIND,
            metadata: { name: r.owner.name, uid: r.owner.uid },
          } as KubeObject)
        const entry = removedBy.get(r.owner.uid) ?? { owner, paths: [] }
        entry.paths.push(r.path)
        removedBy.set(r.owner.uid, entry)
      } catch (err) {
        log.warn('cannot remove a file no NodeConfig claims; will retry', {
          path: r.path,
          error: errorMessage(err),
        })
        if ((err as { step?: string }).step === 'check path') delete next.files[r.path] // never ours to remove
      }
    }
    for (const { owner, paths } of removedBy.values()) {
      log.info('files removed', { nodeConfig: owner.metadata.name, paths })
      deps.recorder?.event(owner, 'Normal', REASON.removed, 'Remove', `${node}: removed ${paths.join(', ')}`)
    }
  }
}

/**
 * Records the owner of every path about to be written for a new owner, before writing,
 * so that a crash between write and record cannot leave an unrecorded file behind.
 */
async function claimNewPaths(plan: NodePlan, next: OwnershipRecord, store: FileStore): Promise<void> {
  let changed = false
  for (const p of plan.configs)
    for (const f of p.files) {
      if (next.files[f.path]?.uid === p.config.metadata.uid) continue
      next.files[f.path] = {
        uid: p.config.metadata.uid!,
        name: p.config.metadata.name!,
        sha256: f.sha256,
        mode: modeText(f.mode),
      }
      changed = true
    }
  if (changed) await store.saveRecord(next)
}
