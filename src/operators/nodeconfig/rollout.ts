/**
 * @module rollout — pure: which nodes may take a NodeConfig's generation, in waves.
 *
 * Every (NodeConfig, node) pair has a bucket from 0 to 99, a hash of the NodeConfig's UID
 * and the node's name: stable, spread evenly, different for each NodeConfig, and computable
 * by the agent alone (it sees no other node). The aggregator opens a generation to the
 * buckets below `status.rollout.percent` and raises it by `spec.rollout.maxUnavailable`
 * once every node of the open waves has reported, unless more than `maxFailures` failed.
 * The rollout state is one number on the NodeConfig, whatever the fleet's size.
 */
import { createHash } from 'node:crypto'
import {
  DEFAULT_MAX_FAILURES,
  DEFAULT_MAX_UNAVAILABLE_PERCENT,
  type NodeConfig,
  type NodeConfigRollout,
  type NodeConfigRolloutStatus,
} from './api.ts'

/** Buckets per NodeConfig: percent steps. */
export const ROLLOUT_BUCKETS = 100

/** `node`'s bucket (0–99) for the NodeConfig with `uid`. */
export function rolloutBucket(uid: string, node: string): number {
  return createHash('sha256').update(`${uid}/${node}`).digest().readUInt32BE(0) % ROLLOUT_BUCKETS
}

/** `spec.rollout` with its defaults. */
export function rolloutSettings(config: NodeConfig): Required<NodeConfigRollout> {
  return {
    maxUnavailable: config.spec?.rollout?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE_PERCENT,
    maxFailures: config.spec?.rollout?.maxFailures ?? DEFAULT_MAX_FAILURES,
  }
}

/**
 * True when `node` may put `config`'s current generation in place: the aggregator has opened
 * this generation to the node's bucket. Until then the node keeps what it has.
 */
export function mayApply(config: NodeConfig, node: string): boolean {
  const r = config.status?.rollout
  return (
    r !== undefined &&
    r.generation === config.metadata.generation &&
    rolloutBucket(config.metadata.uid ?? '', node) < r.percent
  )
}

/** What the aggregator knows of one selected node at the current generation. */
export type NodeOutcome = 'applied' | 'failed' | 'pending'

/** The next `status.rollout`, and whether failures stopped it. */
export interface RolloutStep {
  rollout: NodeConfigRolloutStatus
  halted: boolean
}

/**
 * The wave after this one. A new generation opens the first wave (all buckets at once when
 * the NodeConfig was rolled out by the shared-status agents, which had no waves: its nodes
 * already hold it). More failures than `maxFailures` keep the wave where it is (`halted`).
 * Otherwise the wave opens further while every node in the open buckets has reported,
 * so empty waves of a small fleet pass at once.
 */
export function nextRollout(
  config: NodeConfig,
  outcomes: ReadonlyMap<string, NodeOutcome>,
  migrated: boolean,
): RolloutStep {
  const generation = config.metadata.generation ?? 0
  const { maxUnavailable, maxFailures } = rolloutSettings(config)
  const current = config.status?.rollout
  let percent =
    current?.generation === generation
      ? current.percent
      : migrated
        ? ROLLOUT_BUCKETS
        : Math.min(ROLLOUT_BUCKETS, maxUnavailable)
  const failed = [...outcomes.values()].filter((o) => o === 'failed').length
  if (failed > maxFailures) return { rollout: { generation, percent }, halted: true }
  const uid = config.metadata.uid ?? ''
  const buckets = [...outcomes].map(([node, o]) => ({
    bucket: rolloutBucket(uid, node),
    done: o !== 'pending',
  }))
  while (percent < ROLLOUT_BUCKETS && buckets.every((b) => b.done || b.bucket >= percent))
    percent = Math.min(ROLLOUT_BUCKETS, percent + maxUnavailable)
  return { rollout: { generation, percent }, halted: false }
}
