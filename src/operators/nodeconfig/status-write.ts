/**
 * @module status-write — pure: when the aggregator writes a NodeConfig's status, so a rollout costs O(N) events.
 *
 * Every agent watches NodeConfigs, so each status write is delivered to every node: W writes in a
 * rollout to N nodes cost W·N events. A write the agents need (a wave opening, a new generation) or
 * that alerts key on (the `Progressing` condition's status or reason) goes at once; a write that
 * only moves the counts (`desired`, `applied`, `failed`, the condition's message) is made only when
 * they moved by a step of the fleet, or when the open waves have all reported (a wave boundary, the
 * end, a halt settled). So the writes of one rollout are bounded by its waves and steps, not by how
 * long it takes: see {@link maxStatusWritesPerRollout}.
 */
import type { NodeConfigStatus } from './api.ts'
import { ROLLOUT_BUCKETS } from './rollout.ts'

/**
 * A count-only write waits until the counts moved by 25 % of the selected nodes: people
 * watching `kubectl get nodeconfigs` see a rollout advance in quarters, and each wave write
 * (10 % by default) carries the counts too, so with default waves this step never adds a write.
 * At most ⌈100 / 25⌉ = 4 count-only writes per rollout, whatever the fleet's size or speed.
 */
export const COUNT_WRITE_STEP_PERCENT = 25

/** The aggregate without the deprecated shared list, as the aggregator computes and writes it. */
export type AggregateStatus = Omit<NodeConfigStatus, 'nodes'>

/**
 * What to do with a computed status:
 * - `none`: the written status already says it;
 * - `now`: something agents or alerts read changed (or the open waves settled): write at once;
 * - `counts`: only counts moved, by at least a step: write, at most once per minimum interval;
 * - `hold`: only counts moved, by less than a step: write nothing until more changes.
 */
export type StatusWrite = 'none' | 'now' | 'counts' | 'hold'

/** JSON with object keys sorted, to compare a status read back with one computed. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  )
}

/** The part of a status agents and alerts act on: the generation, the wave, each condition's status and reason. */
function signal(s: AggregateStatus | undefined): string {
  return canonicalJson({
    observedGeneration: s?.observedGeneration,
    rollout: s?.rollout,
    conditions: (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
  })
}

/**
 * Decides the write of `next` over the `written` status (the NodeConfig's as last read).
 * `settled` is true when no node of the open waves is still to report: the counts are final
 * for this wave, so they are written at once. `dropSharedList`: the first design's list can go.
 */
export function statusWrite(
  written: AggregateStatus | undefined,
  next: AggregateStatus,
  settled: boolean,
  dropSharedList = false,
): StatusWrite {
  if (canonicalJson(written ?? {}) === canonicalJson(next) && !dropSharedList) return 'none'
  if (dropSharedList || settled || signal(written) !== signal(next)) return 'now'
  const moved =
    Math.abs((next.applied ?? 0) - (written?.applied ?? 0)) +
    Math.abs((next.failed ?? 0) - (written?.failed ?? 0)) +
    Math.abs((next.desired ?? 0) - (written?.desired ?? 0))
  const step = Math.max(1, Math.ceil(((next.desired ?? 0) * COUNT_WRITE_STEP_PERCENT) / 100))
  return moved >= step ? 'counts' : 'hold'
}

/**
 * The most status writes one rollout of a generation costs when nothing else changes (no node
 * relabelled, no aggregator failover, no conflict retried): one per wave opened, one per count step,
 * one when the last wave settles. With the default 10 % waves: 10 + 4 + 1 = 15. Each reaches every
 * agent, so a rollout to N nodes delivers at most this many times N NodeConfig events, plus the
 * reports' own (each agent's report writes, to itself and the aggregator).
 */
export function maxStatusWritesPerRollout(maxUnavailablePercent: number): number {
  return Math.ceil(ROLLOUT_BUCKETS / maxUnavailablePercent) + Math.ceil(100 / COUNT_WRITE_STEP_PERCENT) + 1
}
