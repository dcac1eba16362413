/**
 * @module aggregate — pure: a NodeConfig's status from the selected nodes and their reports.
 *
 * The status is what a DaemonSet's is: how many nodes are selected, how many applied or
 * failed the current generation, and one `Progressing` condition saying where the rollout
 * stands and, when failures stopped it, why. It is written by one leader-elected aggregator,
 * never by the agents.
 */
import type { Condition } from '../../core/index.ts'
import { setCondition } from '../../objects/index.ts'
import { type NodeConfig, type NodeConfigStatus, STATE } from './api.ts'
import type { NodeConfigReport } from './report-api.ts'
import { type NodeOutcome, nextRollout, rolloutBucket, rolloutSettings } from './rollout.ts'

/** The condition the aggregator sets. */
export const PROGRESSING = 'Progressing'
/** `Progressing` reasons (stable: users alert on them). */
export const ROLLOUT_REASON = {
  rollingOut: 'RollingOut',
  complete: 'RolloutComplete',
  failureThreshold: 'FailureThresholdExceeded',
} as const

/** Nodes a condition names (failed, or awaited); the rest are counted. */
export const MAX_NAMED_FAILURES = 3

/** The aggregate status (without the deprecated `nodes`) and whether the old shared list may go. */
export interface Aggregate {
  status: Omit<NodeConfigStatus, 'nodes'>
  /** True when `status.nodes` is present and every node in it has a report (or is no longer selected). */
  dropSharedList: boolean
  /** Selected nodes of the open waves that have not reported the current generation: 0 once the waves settled. */
  waiting: number
}

/**
 * Aggregates `config`'s status over the `selected` node names from `reports` (this
 * NodeConfig's, by UID). A report counts only at the current generation.
 */
export function aggregate(
  config: NodeConfig,
  selected: readonly string[],
  reports: readonly NodeConfigReport[],
  now: Date,
): Aggregate {
  const generation = config.metadata.generation ?? 0
  const byNode = new Map(reports.map((r) => [r.spec.nodeName, r]))
  const outcomes = new Map<string, NodeOutcome>()
  for (const node of selected) {
    const r = byNode.get(node)
    outcomes.set(
      node,
      r?.spec.observedGeneration !== generation
        ? 'pending'
        : r.spec.state === STATE.applied
          ? 'applied'
          : 'failed',
    )
  }
  const shared = config.status?.nodes
  const migrated = config.status?.rollout === undefined && (shared?.length ?? 0) > 0
  const step = nextRollout(config, outcomes, migrated)
  const applied = [...outcomes.values()].filter((o) => o === 'applied').length
  const failedNodes = selected.filter((n) => outcomes.get(n) === 'failed')
  const { maxFailures } = rolloutSettings(config)
  const wave = step.rollout.percent
  // The open waves' nodes that have not reported: a node whose agent never reports holds its wave.
  const uid = config.metadata.uid ?? ''
  const waiting = selected.filter((n) => outcomes.get(n) === 'pending' && rolloutBucket(uid, n) < wave)
  let condition: Omit<Condition, 'lastTransitionTime'>
  if (step.halted) {
    const named = failedNodes
      .slice(0, MAX_NAMED_FAILURES)
      .map((n) => `${n}: ${byNode.get(n)?.spec.message ?? 'failed'}`)
    const more = failedNodes.length - named.length
    condition = {
      type: PROGRESSING,
      status: 'False',
      reason: ROLLOUT_REASON.failureThreshold,
      message: `${failedNodes.length} of ${selected.length} nodes failed generation ${generation}, more than spec.rollout.maxFailures (${maxFailures}); the rollout stopped at ${wave}% of the nodes (${named.join('; ')}${more > 0 ? `; and ${more} more` : ''})`,
    }
  } else if (wave === 100 && applied === selected.length) {
    condition = {
      type: PROGRESSING,
      status: 'True',
      reason: ROLLOUT_REASON.complete,
      message: `generation ${generation} applied on all ${selected.length} selected nodes`,
    }
  } else {
    const shown = waiting.slice(0, MAX_NAMED_FAILURES)
    const more = waiting.length - shown.length
    condition = {
      type: PROGRESSING,
      status: 'True',
      reason: ROLLOUT_REASON.rollingOut,
      message: `generation ${generation} open to ${wave}% of the nodes; ${applied} of ${selected.length} applied${shown.length > 0 ? `; waiting for ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : ''}`,
    }
  }
  const conditions = setCondition(
    config.status?.conditions,
    { ...condition, observedGeneration: generation },
    now,
  )
  const dropSharedList = !!shared?.every((e) => byNode.has(e.name) || !outcomes.has(e.name))
  return {
    status: {
      observedGeneration: generation,
      desired: selected.length,
      applied,
      failed: failedNodes.length,
      rollout: step.rollout,
      conditions: conditions as NodeConfigStatus['conditions'],
    },
    dropSharedList,
    waiting: waiting.length,
  }
}
