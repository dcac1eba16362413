/**
 * @module leader-election-metrics — client-go's `leader_election_master_status` gauge.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import type { MetricsRegistry } from './metrics-registry.ts'

/**
 * client-go's `leader_election_master_status{name}`: 1 while `isLeader()` says this process holds
 * lease `name`, else 0; read at scrape time. Returns a function that removes the collector.
 */
export function leaderElectionMetrics(
  registry: MetricsRegistry,
  name: string,
  isLeader: () => boolean,
): () => void {
  const g = registry.gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
    labelNames: ['name'],
  })
  return registry.addCollector(() => g.set({ name }, isLeader() ? 1 : 0))
}
