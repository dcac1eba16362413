/**
 * @module object-metrics — scrape-time gauges over each controller's primary objects: conditions and the oldest finalizer wait.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import { type Clock, realClock } from '../core/clock.ts'
import type { KubeObject } from '../core/types.ts'
import type { Labels, MetricsRegistry } from './metrics-registry.ts'

/**
 * Scrape-time gauges over the primary objects of each controller whose `source` has a `store` (an
 * informer's cache): `edgeop_controller_conditions{controller,type,status}` (objects per
 * condition type and status) and `edgeop_controller_terminating_oldest_seconds{controller}` (the age of
 * the oldest deletion still held by finalizers; 0 when none). No label names an object: condition
 * types are the controller's own (it writes them), a handful. Reads `controllers()` at every scrape
 * and owns both families (one manager per registry). Returns a function that removes the collector.
 */
export function objectMetrics(
  registry: MetricsRegistry,
  controllers: () => Iterable<{
    name: string
    source: { describe: string; store?: { list(): readonly KubeObject[] } }
  }>,
  clock: Clock = realClock,
): () => void {
  const conditions = registry.gauge({
    name: 'edgeop_controller_conditions',
    help: 'Objects by condition.',
    labelNames: ['controller', 'type', 'status'],
  })
  const oldest = registry.gauge({
    name: 'edgeop_controller_terminating_oldest_seconds',
    help: 'Oldest finalizer wait.',
    labelNames: ['controller'],
  })
  return registry.addCollector(() => {
    conditions.reset()
    for (const { name: controller, source } of controllers()) {
      let first = clock.now()
      for (const o of source.store?.list() ?? []) {
        const d = o.metadata.deletionTimestamp
        if (d && o.metadata.finalizers?.length) first = Math.min(first, Date.parse(d))
        for (const { type, status } of (o as { status?: { conditions?: Labels[] } }).status?.conditions ?? [])
          conditions.inc({ controller, type: type!, status: status! })
      }
      oldest.set({ controller }, (clock.now() - first) / 1000)
    }
  })
}
