/**
 * @module reconcile — one pass of the node agent, in named phases: open, plan, claim, remove, write, save, report.
 *
 * The agent has a single key, its node: every event (its Node relabelled, any NodeConfig
 * changed) and every periodic drift check runs the same full, level-based pass over all
 * NodeConfigs, so conflicts are seen whole and garbage collection needs no memory of
 * events. Order matters for "nothing leaks": new ownership is recorded
 * ({@link claimNewPaths}) before a file is written ({@link writeFiles}), and a removal is
 * forgotten only after the file is gone ({@link removeUnclaimed}).
 */
import type { ResourceClient } from '../../client/index.ts'
import type { ReconcileResult, Reconciler } from '../../controller/index.ts'
import { type Clock, errorMessage, type KubeObject, type Logger, realClock } from '../../core/index.ts'
import { GROUP, KIND, type NodeConfig, REASON, STATE, VERSION } from './api.ts'
import type { EventSink } from './event-sink.ts'
import type { NodeFiles, OwnedFile, OwnershipRecord } from './file-store.ts'
import { isPathRefused } from './paths.ts'
import { applies, type ConfigPlan, type DesiredFile, type NodePlan, planNode } from './plan.ts'
import type { NodeConfigReport } from './report-api.ts'
import { mayApply } from './rollout.ts'
import { appliedMessage, failureMessage, type Report } from './status.ts'
import { StatusReporter } from './status-reporter.ts'

/** Drift check interval: 30 s, so a hand-edited file is back within half a minute. */
export const DEFAULT_RECHECK_INTERVAL_MS = 30_000

/** What the agent reads and writes through. */
export interface NodeConfigAgentDeps {
  nodeName: string
  /** This node's cached Node object (only its labels are read); undefined when absent. */
  getNode(): KubeObject | undefined
  /** Every cached NodeConfig. */
  listNodeConfigs(): readonly NodeConfig[]
  store: NodeFiles
  /** The NodeConfigReport client; `apply` and `delete` of this node's reports. */
  reports: Pick<ResourceClient<NodeConfigReport>, 'apply' | 'delete'>
  /** This node's cached reports. */
  listReports(): readonly NodeConfigReport[]
  recorder?: EventSink
  clock?: Clock
  /** Default {@link DEFAULT_RECHECK_INTERVAL_MS}. */
  recheckIntervalMs?: number
}

/** What every phase reads: the dependencies and this pass's logger. */
interface Pass {
  deps: NodeConfigAgentDeps
  log: Logger
}

/** Outcomes to report, by NodeConfig UID. */
type Outcomes = Map<string, Report>

/**
 * The agent's reconciler.
 *
 * Guarantees: a missing Node object changes nothing on disk; a NodeConfig generation
 * not yet open to this node's rollout wave changes none of its files here; an unusable root or
 * ownership record fails every applying NodeConfig's entry with the reason and touches
 * no file; one NodeConfig's failure never stops another's files; the status is written
 * only when this node's entry changes, and events only when something changed.
 * Returns `{ requeueAfterMs }` (the drift check); throws, for a retry with backoff, when
 * a status write or the final record save failed.
 */
export function nodeConfigReconciler(deps: NodeConfigAgentDeps): Reconciler {
  const recheck = { requeueAfterMs: deps.recheckIntervalMs ?? DEFAULT_RECHECK_INTERVAL_MS }
  const reporter = new StatusReporter({
    nodeName: deps.nodeName,
    reports: deps.reports,
    listReports: deps.listReports,
    clock: deps.clock ?? realClock,
    recorder: deps.recorder,
  })

  return async (_request, ctx): Promise<ReconcileResult> => {
    const pass: Pass = { deps, log: ctx.log }
    const nodeObject = deps.getNode()
    if (!nodeObject) {
      ctx.log.info('this node has no Node object (yet); leaving files as they are', { node: deps.nodeName })
      return recheck
    }
    const labels = nodeObject.metadata.labels
    const all = deps.listNodeConfigs()
    // A NodeConfig whose current generation is not yet open to this node's wave is held:
    // its files stay as they are, its report says what it said.
    const held = new Set(
      all.filter((c) => applies(c, labels) && !mayApply(c, deps.nodeName)).map((c) => c.metadata.uid),
    )
    const open = all.filter((c) => !held.has(c.metadata.uid))
    const report = (outcomes: Outcomes) => reporter.report(open, outcomes, ctx.signal)

    const opened = await openRecord(pass)
    if (!opened.ok) {
      const applying = open.filter((c) => applies(c, labels))
      await report(failAll(applying, failureMessage([opened.problem])))
      return recheck
    }
    const record = opened.record
    const planned = planNode(all, labels, record)
    const plan: NodePlan = {
      configs: planned.configs.filter((p) => !held.has(p.config.metadata.uid)),
      removals: planned.removals.filter((r) => !held.has(r.owner.uid)),
    }
    const next: OwnershipRecord = { version: 1, files: { ...record.files } }
    const claimProblem = await claimNewPaths(pass, plan, next)
    if (claimProblem !== undefined) {
      const planned = plan.configs.map((p) => p.config)
      await report(failAll(planned, claimProblem))
      return recheck
    }
    await removeUnclaimed(pass, plan, next, all)
    const outcomes = await writeFiles(pass, plan, record, next)
    const recordError = await saveRecord(pass, record, next)
    await report(outcomes)
    if (recordError) throw recordError
    return recheck
  }
}

/** Phase 1: the root opened and the ownership record read; a message (logged) when either is unusable. */
async function openRecord({
  deps,
  log,
}: Pass): Promise<{ ok: true; record: OwnershipRecord } | { ok: false; problem: string }> {
  try {
    await deps.store.open()
    return { ok: true, record: await deps.store.loadRecord() }
  } catch (err) {
    const problem = errorMessage(err)
    log.error('root unusable; no file touched', { error: problem })
    return { ok: false, problem }
  }
}

/**
 * Phase 2 (after {@link planNode}): records the owner of every path about to be written
 * for a new owner, before writing, so that a crash between write and record cannot leave
 * an unrecorded file behind. A message (logged) when the record cannot be saved.
 */
async function claimNewPaths(
  { deps, log }: Pass,
  plan: NodePlan,
  next: OwnershipRecord,
): Promise<string | undefined> {
  let changed = false
  for (const p of plan.configs)
    for (const f of p.files) {
      if (next.files[f.path]?.uid === p.config.metadata.uid) continue
      next.files[f.path] = ownedBy(p.config, f)
      changed = true
    }
  if (!changed) return undefined
  try {
    await deps.store.saveRecord(next)
    return undefined
  } catch (err) {
    const message = errorMessage(err)
    log.error('cannot record ownership; no file touched', { error: message })
    return message
  }
}

/** Phase 3: removes recorded files nobody claims; forgets each only once it is gone. */
async function removeUnclaimed(
  { deps, log }: Pass,
  plan: NodePlan,
  next: OwnershipRecord,
  all: readonly NodeConfig[],
): Promise<void> {
  const removedBy = new Map<string, { owner: KubeObject; paths: string[] }>()
  for (const r of plan.removals) {
    try {
      const removed = await deps.store.remove(r.path)
      delete next.files[r.path]
      if (!removed) continue
      const owner = all.find((c) => c.metadata.uid === r.owner.uid) ?? vanishedOwner(r.owner)
      const entry = removedBy.get(r.owner.uid) ?? { owner, paths: [] }
      entry.paths.push(r.path)
      removedBy.set(r.owner.uid, entry)
    } catch (err) {
      log.warn('cannot remove a file no NodeConfig claims; will retry', {
        path: r.path,
        error: errorMessage(err),
      })
      if (isPathRefused(err)) delete next.files[r.path] // never ours to remove
    }
  }
  for (const { owner, paths } of removedBy.values()) {
    log.info('files removed', { nodeConfig: owner.metadata.name, paths })
    deps.recorder?.event(
      owner,
      'Normal',
      REASON.removed,
      'Remove',
      `${deps.nodeName}: removed ${paths.join(', ')}`,
    )
  }
}

/**
 * Phase 4: every applicable NodeConfig's files in place, recorded in `next`. A blocked
 * NodeConfig reports its problems and writes nothing; a file that cannot be written
 * fails its NodeConfig but not the others.
 */
async function writeFiles(
  pass: Pass,
  plan: NodePlan,
  record: OwnershipRecord,
  next: OwnershipRecord,
): Promise<Outcomes> {
  const outcomes: Outcomes = new Map()
  for (const p of plan.configs)
    outcomes.set(
      p.config.metadata.uid!,
      p.problems.length > 0
        ? { state: STATE.failed, message: failureMessage(p.problems) }
        : await writeConfigFiles(pass, p, record, next),
    )
  return outcomes
}

/**
 * One NodeConfig's files: each ensured and recorded; a file rewritten although the
 * record already held it as it is counts as drift corrected, any other as written (one
 * event for each kind).
 */
async function writeConfigFiles(
  { deps, log }: Pass,
  p: ConfigPlan,
  record: OwnershipRecord,
  next: OwnershipRecord,
): Promise<Report> {
  const uid = p.config.metadata.uid!
  const errors: string[] = []
  const written: string[] = []
  const restored: string[] = []
  for (const f of p.files) {
    try {
      const outcome = await deps.store.ensure(f.path, f.content, f.mode, f.sha256)
      const before = record.files[f.path]
      const owned = ownedBy(p.config, f)
      next.files[f.path] = owned
      if (outcome === 'unchanged') continue
      const same = before?.uid === uid && before.sha256 === owned.sha256 && before.mode === owned.mode
      ;(same ? restored : written).push(f.path)
    } catch (err) {
      errors.push(errorMessage(err))
    }
  }
  const node = deps.nodeName
  if (written.length > 0) {
    log.info('files written', { nodeConfig: p.config.metadata.name, paths: written })
    deps.recorder?.event(p.config, 'Normal', REASON.written, 'Apply', `${node}: wrote ${written.join(', ')}`)
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
  return errors.length > 0
    ? { state: STATE.failed, message: failureMessage(errors) }
    : { state: STATE.applied, message: appliedMessage(p.files.length) }
}

/** Phase 5: the record saved when the pass changed it. Returns the error, thrown only after the status is reported. */
async function saveRecord({ deps }: Pass, record: OwnershipRecord, next: OwnershipRecord): Promise<unknown> {
  if (JSON.stringify(next.files) === JSON.stringify(record.files)) return undefined
  try {
    await deps.store.saveRecord(next)
    return undefined
  } catch (err) {
    return err
  }
}

/** The same failure for each of `configs`. */
function failAll(configs: readonly NodeConfig[], message: string): Outcomes {
  return new Map(configs.map((c) => [c.metadata.uid!, { state: STATE.failed, message }]))
}

/** The record entry for `file` owned by `config`. */
function ownedBy(config: NodeConfig, file: DesiredFile): OwnedFile {
  return {
    uid: config.metadata.uid!,
    name: config.metadata.name!,
    sha256: file.sha256,
    mode: modeText(file.mode),
  }
}

/** A stand-in for a recorded owner that no longer exists, so its removals still get an event. */
function vanishedOwner(owner: OwnedFile): KubeObject {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: KIND, metadata: { name: owner.name, uid: owner.uid } }
}

/** Permission bits as the record writes them: `0644`. */
function modeText(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`
}
