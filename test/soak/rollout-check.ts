/**
 * @module rollout-check — the soak's check of one NodeConfig's reports and aggregate, pure.
 *
 * With the per-node design each selected node has one report, Applied at the NodeConfig's current
 * generation, and the aggregator's status counts them: observedGeneration the generation, desired
 * and applied the selected nodes, none failed.
 */
import type { NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { type NodeConfigReport, reportOwnerUid } from '../../src/operators/nodeconfig/report-api.ts'

/**
 * What is wrong with `nc`'s rollout once it had time to settle: `selected` its nodes among the
 * soak's `ours` (reports of other nodes on a shared cluster are left out), `reports` every report.
 */
export function rolloutProblems(
  nc: NodeConfig,
  selected: readonly string[],
  ours: ReadonlySet<string>,
  reports: readonly NodeConfigReport[],
): string[] {
  const out: string[] = []
  const want = selected.map((n) => `${n}=Applied@${nc.metadata.generation}`).sort()
  const got = reports
    .filter((r) => reportOwnerUid(r) === nc.metadata.uid && ours.has(r.spec.nodeName))
    .map((r) => `${r.spec.nodeName}=${r.spec.state}@${r.spec.observedGeneration}`)
    .sort()
  if (JSON.stringify(got) !== JSON.stringify(want))
    out.push(`NodeConfig ${nc.metadata.name} reports ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  const s = nc.status
  const aggregate = [s?.observedGeneration, s?.desired, s?.applied, s?.failed]
  const wantAggregate = [nc.metadata.generation, selected.length, selected.length, 0]
  if (JSON.stringify(aggregate) !== JSON.stringify(wantAggregate))
    out.push(
      `NodeConfig ${nc.metadata.name} aggregate [observedGeneration, desired, applied, failed] ${JSON.stringify(aggregate)}, want ${JSON.stringify(wantAggregate)} (${s?.conditions?.[0]?.reason}: ${s?.conditions?.[0]?.message})`,
    )
  return out
}
