/**
 * Cardinality is bounded: `/metrics` (the registry's render) of an operator's whole metric set holds
 * the same series for 1,000 objects as for 10, and no label names an object. Every family a
 * production operator registers is fed: reconciles, the work queue, client requests, informers,
 * per-controller object gauges, drift, the dependency breaker, leader election and the process.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { driftMetrics } from '../../src/metrics/drift-metrics.ts'
import { informerMetrics } from '../../src/metrics/informer-metrics.ts'
import { leaderElectionMetrics } from '../../src/metrics/leader-election-metrics.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { objectMetrics } from '../../src/metrics/object-metrics.ts'
import { processMetrics } from '../../src/metrics/process-metrics.ts'
import { reconcileMetrics } from '../../src/metrics/reconcile-metrics.ts'
import { restClientMetrics } from '../../src/metrics/rest-client-metrics.ts'
import { workqueueMetrics } from '../../src/metrics/workqueue-metrics.ts'
import { createWorkQueue } from '../../src/queue/index.ts'
import { CircuitBreaker } from '../../src/resilience/circuit-breaker.ts'

const OUTCOMES = [
  'success',
  'requeue',
  'requeue_after',
  'error',
  'terminal_error',
  'timeout',
  'panic',
] as const
const STATUSES = ['True', 'False', 'Unknown']

/** The series (sample lines) of one render with `n` objects flowing through every metric. */
async function render(n: number): Promise<{ series: string[]; names: string[] }> {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'))
  const r = new MetricsRegistry()
  const names = Array.from({ length: n }, (_, i) => `app-${i}-${(i * 7919).toString(36)}`)
  const objects: KubeObject[] = names.map((name, i) => ({
    apiVersion: 'platform.example.com/v1',
    kind: 'AppService',
    metadata: {
      name,
      namespace: `ns-${i % 50}`,
      uid: `uid-${i}`,
      ...(i % 10 === 0 ? { deletionTimestamp: '2025-12-31T23:59:00Z', finalizers: ['x/y'] } : {}),
    },
    status: {
      conditions: ['Ready', 'Degraded', 'DatabaseReady'].map((type, j) => ({
        type,
        status: STATUSES[(i + j) % 3]!,
        reason: `R${i}`,
        message: name,
      })),
    },
  }))
  const store = { size: n, list: () => objects }
  const observer = reconcileMetrics(r, 'appservice', 2)
  const q = createWorkQueue<string>({ clock, metrics: workqueueMetrics(r, 'appservice') })
  const rest = restClientMetrics(r)
  const drift = driftMetrics(r, 'appservice', ['Deployment', 'Service'])
  const breaker = new CircuitBreaker({ dependency: 'database-api', registry: r, clock })
  informerMetrics(
    r,
    () => [
      { describe: 'appservices in all namespaces', store, health: () => ({ synced: true, lastSyncAt: 0 }) },
    ],
    clock,
  )
  objectMetrics(r, () => [{ name: 'appservice', source: { describe: 'appservices', store } }], clock)
  leaderElectionMetrics(r, 'edgeop', () => true)
  processMetrics(r)
  for (const [i, name] of names.entries()) {
    const key = `ns-${i % 50}/${name}`
    q.add(key)
    observer.onReconcile(OUTCOMES[i % OUTCOMES.length]!, i / 1000)
    rest.onResponse!(i % 2 ? 'GET' : 'PATCH', [200, 404, 409, 0][i % 4]!, i)
    drift(i % 2 ? 'Deployment' : 'Service')
    await breaker
      .call(() =>
        i % 3
          ? Promise.resolve()
          : Promise.reject(new EdgeopError('EDGEOP_ERR_API', name, { retryable: false })),
      )
      .catch(() => {})
  }
  for (let i = 0; i < n; i++) {
    const got = await q.get()
    if (!got.shutdown) q.done(got.item)
  }
  const series = r
    .render()
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')))
  return { series, names }
}

test('/metrics has the same series for 1,000 objects as for 10, and no label names an object', async () => {
  const small = await render(10)
  const large = await render(1000)
  assert.deepEqual(large.series, small.series)
  // Every family of a production operator is there, so the count is the real bound.
  const families = new Set(large.series.map((s) => s.replace(/(_bucket|_sum|_count)?(\{.*)?$/, '')))
  assert.ok(families.size >= 35, `${families.size} families`)
  assert.ok(large.series.length < 600, `${large.series.length} series`)
  for (const s of large.series) {
    assert.ok(!/app-\d|uid-|ns-\d/.test(s), `a label names an object: ${s}`)
  }
  process.stdout.write(`# ${large.series.length} series in ${families.size} families for 1,000 objects\n`)
})
