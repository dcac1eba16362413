/**
 * @module informer-metrics — scrape-time gauges of each informer: synced, last sync, snapshot state, cache size.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import { type Clock, realClock } from '../core/clock.ts'
import type { KubeObject } from '../core/types.ts'
import type { MetricsRegistry } from './metrics-registry.ts'

/** What {@link informerMetrics} reads from an informer (a `SharedInformer` fits). */
export interface InformerHealthSource {
  /** What the informer watches; the `name` label of its gauges. */
  readonly describe: string
  /** Its cache, when it has one: counted and sized at scrape time. */
  readonly store?: { readonly size: number; list(): readonly KubeObject[] }
  /** Whether it has synced, and when it last did (monotonic ms). */
  health(): {
    synced: boolean
    lastSyncAt: number | undefined
    servingFromSnapshotSince?: number | undefined
    snapshotWriteFailures?: number
    /** `unsynced`, `restored` or `synced` (the cache's `SyncState`). */
    syncState?: string
    /** While restored: when the snapshot was written (epoch ms). */
    snapshotTakenAt?: number | undefined
  }
}

/** The values of the `state` label of `edgeop_informer_sync_state`. */
const SYNC_STATES = ['unsynced', 'restored', 'synced'] as const

/** Objects whose JSON length {@link informerMetrics} measures per scrape: enough for a stable mean, cheap at any cache size. */
const SIZE_SAMPLE = 32

/**
 * Scrape-time gauges per informer (label `informer`, its description): `edgeop_informer_synced` (0/1,
 * 0 while serving a restored snapshot), `edgeop_informer_sync_state` (1 for its state, label `state`:
 * `unsynced`, `restored`, `synced`), `edgeop_cache_snapshot_age_seconds` (while restored: since the
 * snapshot was written) and `edgeop_informer_last_sync_age_seconds` (since the last full list; absent before it); with a
 * `store`, `edgeop_informer_objects` and `edgeop_informer_cache_bytes` (an estimate: the mean JSON
 * length of the first {@link SIZE_SAMPLE} objects times their number). Reads
 * `informers()` at every scrape, so informers created later appear and stopped ones vanish. Returns
 * a function that removes the collector.
 */
export function informerMetrics(
  registry: MetricsRegistry,
  informers: () => Iterable<InformerHealthSource>,
  clock: Clock = realClock,
): () => void {
  const gauge = (name: string, help: string) => registry.gauge({ name, help, labelNames: ['informer'] })
  const state = registry.gauge({
    name: 'edgeop_informer_sync_state',
    help: '1 for the cache state: unsynced, restored (a snapshot), synced.',
    labelNames: ['informer', 'state'],
  })
  const all = [
    gauge('edgeop_informer_synced', '1 once the cache holds the server state (not a restored snapshot).'),
    gauge('edgeop_informer_last_sync_age_seconds', 'Seconds since the last full list.'),
    gauge('edgeop_cache_snapshot_serving', '1 while serving an unconfirmed cache snapshot.'),
    gauge('edgeop_cache_snapshot_write_failures', 'Failed cache snapshot writes.'),
    gauge('edgeop_informer_objects', 'Cached objects.'),
    gauge('edgeop_informer_cache_bytes', 'Estimated cache bytes.'),
    gauge('edgeop_cache_snapshot_age_seconds', 'Age of the restored snapshot served.'),
  ] as const
  const [synced, age, serving, failed, objects, bytes, snapshotAge] = all
  let shown: { informer: string }[] = []
  return registry.addCollector(() => {
    // Drop only this collector's old series: another factory may report on the same families.
    for (const l of shown) {
      for (const g of all) g.remove(l)
      for (const s of SYNC_STATES) state.remove({ ...l, state: s })
    }
    shown = []
    for (const i of informers()) {
      const h = i.health()
      const l = { informer: i.describe }
      shown.push(l)
      synced.set(l, h.synced ? 1 : 0)
      const now = h.syncState ?? (h.synced ? 'synced' : 'unsynced')
      for (const s of SYNC_STATES) state.set({ ...l, state: s }, s === now ? 1 : 0)
      if (h.snapshotTakenAt !== undefined) snapshotAge.set(l, (clock.now() - h.snapshotTakenAt) / 1000)
      serving.set(l, h.servingFromSnapshotSince === undefined ? 0 : 1)
      failed.set(l, h.snapshotWriteFailures ?? 0)
      if (h.lastSyncAt !== undefined) age.set(l, (clock.now() - h.lastSyncAt) / 1000)
      const st = i.store
      if (!st) continue
      const sample = st.list().slice(0, SIZE_SAMPLE)
      objects.set(l, st.size)
      bytes.set(l, sample.length && (JSON.stringify(sample).length / sample.length) * st.size)
    }
  })
}
