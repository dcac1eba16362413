/**
 * @module drift-metrics — the count of objects a controller re-applied because they drifted from the desired state.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import type { MetricsRegistry } from './metrics-registry.ts'

/**
 * `edgeop_controller_drift_corrected_total{controller,kind}`: existing objects `controller` re-applied
 * because they drifted from the desired state, at 0 from the start for each of `kinds` (a series
 * born at 1 hides its first correction from `increase()`). Returns the function to call with the
 * re-applied object's kind.
 */
export function driftMetrics(
  registry: MetricsRegistry,
  controller: string,
  kinds: readonly string[],
): (kind: string) => void {
  const drift = registry.counter({
    name: 'edgeop_controller_drift_corrected_total',
    help: 'Drift corrections.',
    labelNames: ['controller', 'kind'],
  })
  for (const kind of kinds) drift.inc({ controller, kind }, 0)
  return (kind) => drift.inc({ controller, kind })
}
