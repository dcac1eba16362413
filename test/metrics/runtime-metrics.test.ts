import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import type { SharedInformer } from '../../src/cache/informer.ts'
import type { ControllerObserver } from '../../src/controller/controller.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import type { InformerReadiness, leaderCheck } from '../../src/health/health-checks.ts'
import type { LeaderElector } from '../../src/leader/index.ts'
import { driftMetrics } from '../../src/metrics/drift-metrics.ts'
import { type InformerHealthSource, informerMetrics } from '../../src/metrics/informer-metrics.ts'
import { leaderElectionMetrics } from '../../src/metrics/leader-election-metrics.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { objectMetrics } from '../../src/metrics/object-metrics.ts'
import { processMetrics } from '../../src/metrics/process-metrics.ts'
import { RECONCILE_TIME_BUCKETS, reconcileMetrics } from '../../src/metrics/reconcile-metrics.ts'
import { restClientMetrics } from '../../src/metrics/rest-client-metrics.ts'
import { WORKQUEUE_BUCKETS, workqueueMetrics } from '../../src/metrics/workqueue-metrics.ts'
import { createWorkQueue } from '../../src/queue/index.ts'
import { Transport } from '../../src/transport/transport.ts'
import { json, startStub } from '../support/http-stub.ts'

/** The sample lines of `render()` whose metric name starts with `prefix` (no HELP/TYPE). */
function samples(r: MetricsRegistry, prefix: string): string[] {
  return r
    .render()
    .split('\n')
    .filter((l) => l.startsWith(prefix))
}

describe('reconcile metrics', () => {
  test('every series starts at zero and max concurrency is set, before any reconcile', () => {
    const r = new MetricsRegistry()
    reconcileMetrics(r, 'mirror', 4)
    assert.deepEqual(samples(r, 'controller_runtime_'), [
      'controller_runtime_active_workers{controller="mirror"} 0',
      'controller_runtime_max_concurrent_reconciles{controller="mirror"} 4',
      'controller_runtime_reconcile_errors_total{controller="mirror"} 0',
      'controller_runtime_reconcile_panics_total{controller="mirror"} 0',
      'controller_runtime_reconcile_timeouts_total{controller="mirror"} 0',
      'controller_runtime_reconcile_total{controller="mirror",result="error"} 0',
      'controller_runtime_reconcile_total{controller="mirror",result="requeue"} 0',
      'controller_runtime_reconcile_total{controller="mirror",result="requeue_after"} 0',
      'controller_runtime_reconcile_total{controller="mirror",result="success"} 0',
      'controller_runtime_terminal_reconcile_errors_total{controller="mirror"} 0',
    ])
  })

  test('results, error details and active workers map to controller-runtime series', () => {
    const r = new MetricsRegistry()
    const m = reconcileMetrics(r, 'c', 2)
    m.onActiveWorkers(2)
    assert.deepEqual(samples(r, 'controller_runtime_active_workers'), [
      'controller_runtime_active_workers{controller="c"} 2',
    ])
    m.onReconcile('success', 0.001)
    m.onReconcile('requeue', 0.1)
    m.onReconcile('requeue_after', 0.2)
    m.onReconcile('error', 0.3)
    m.onReconcile('terminal_error', 0.4)
    m.onReconcile('panic', 0.5)
    m.onReconcile('timeout', 0.6)
    m.onReconcile('success', 0.7)
    m.onActiveWorkers(0)
    const lines = samples(r, 'controller_runtime_')
    for (const expected of [
      'controller_runtime_active_workers{controller="c"} 0',
      'controller_runtime_reconcile_total{controller="c",result="success"} 2',
      'controller_runtime_reconcile_total{controller="c",result="requeue"} 1',
      'controller_runtime_reconcile_total{controller="c",result="requeue_after"} 1',
      'controller_runtime_reconcile_total{controller="c",result="error"} 4',
      'controller_runtime_reconcile_errors_total{controller="c"} 4',
      'controller_runtime_terminal_reconcile_errors_total{controller="c"} 1',
      'controller_runtime_reconcile_panics_total{controller="c"} 1',
      'controller_runtime_reconcile_timeouts_total{controller="c"} 1',
      'controller_runtime_reconcile_time_seconds_count{controller="c"} 8',
      'controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.005"} 1',
      'controller_runtime_reconcile_time_seconds_bucket{controller="c",le="0.5"} 6',
    ]) {
      assert.ok(lines.includes(expected), `missing ${expected}`)
    }
  })

  test('bucket layouts match controller-runtime and client-go', () => {
    assert.equal(RECONCILE_TIME_BUCKETS.length, 40)
    assert.deepEqual([RECONCILE_TIME_BUCKETS[0], RECONCILE_TIME_BUCKETS.at(-1)], [0.005, 60])
    assert.deepEqual(WORKQUEUE_BUCKETS, [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000])
  })

  test('two controllers share the families, each with its own series', () => {
    const r = new MetricsRegistry()
    reconcileMetrics(r, 'a', 1).onActiveWorkers(1)
    reconcileMetrics(r, 'b', 1)
    assert.deepEqual(samples(r, 'controller_runtime_active_workers'), [
      'controller_runtime_active_workers{controller="a"} 1',
      'controller_runtime_active_workers{controller="b"} 0',
    ])
  })
})

describe('workqueue metrics', () => {
  test('a real queue reports under workqueue_* with name and controller labels; in-flight gauges at scrape', async () => {
    const clock = new ManualClock()
    const r = new MetricsRegistry()
    const q = createWorkQueue<string>({ clock, metrics: workqueueMetrics(r, 'mirror') })
    const l = '{name="mirror",controller="mirror"}'
    assert.ok(samples(r, 'workqueue_depth').includes(`workqueue_depth${l} 0`))
    q.add('a')
    q.add('b')
    await clock.advance(2000)
    const got = await q.get()
    assert.equal(got.shutdown, false)
    await clock.advance(1500)
    const lines = samples(r, 'workqueue_')
    for (const expected of [
      `workqueue_depth${l} 1`,
      `workqueue_adds_total${l} 2`,
      `workqueue_retries_total${l} 0`,
      `workqueue_queue_duration_seconds_count${l} 1`,
      `workqueue_queue_duration_seconds_sum${l} 2`,
      `workqueue_unfinished_work_seconds${l} 1.5`,
      `workqueue_longest_running_processor_seconds${l} 1.5`,
    ]) {
      assert.ok(lines.includes(expected), `missing ${expected} in\n${lines.join('\n')}`)
    }
    q.done('a')
    assert.ok(samples(r, 'workqueue_work_duration').includes(`workqueue_work_duration_seconds_count${l} 1`))
    assert.ok(samples(r, 'workqueue_unfinished').includes(`workqueue_unfinished_work_seconds${l} 0`))
  })
})

describe('rest client metrics', () => {
  const cleanups: (() => Promise<void>)[] = []
  after(async () => {
    for (const c of cleanups) await c()
  })

  test('the transport reports codes, methods, latency and throttling through the observer', async () => {
    const stub = await startStub((req, res) =>
      req.url.startsWith('/api/v1/namespaces/x/configmaps/missing')
        ? json(res, 404, { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 })
        : json(res, 200, { kind: 'ConfigMap' }),
    )
    cleanups.push(stub.close)
    const r = new MetricsRegistry()
    const t = new Transport(
      { server: stub.url, tls: { insecureSkipVerify: false }, namespace: 'default', source: 'test' },
      { qps: -1, http2: false, observer: restClientMetrics(r) },
    )
    cleanups.push(() => t.close())
    await t.request({ method: 'GET', path: '/api/v1/namespaces/x/configmaps/a' })
    await t.request({ method: 'PUT', path: '/api/v1/namespaces/x/configmaps/a', body: {} })
    await t.request({ method: 'GET', path: '/api/v1/namespaces/x/configmaps/missing' }).catch(() => {})
    assert.deepEqual(samples(r, 'rest_client_requests_total'), [
      'rest_client_requests_total{code="200",method="GET"} 1',
      'rest_client_requests_total{code="200",method="PUT"} 1',
      'rest_client_requests_total{code="404",method="GET"} 1',
    ])
    assert.ok(
      samples(r, 'rest_client_request_duration').includes(
        'rest_client_request_duration_seconds_count{verb="GET"} 2',
      ),
    )
  })

  test('transport errors are counted as code "<error>", throttling in seconds', () => {
    const r = new MetricsRegistry()
    const o = restClientMetrics(r)
    o.onResponse?.('GET', 0, 12)
    o.onThrottle?.(250)
    assert.ok(
      samples(r, 'rest_client_requests_total').includes(
        'rest_client_requests_total{code="<error>",method="GET"} 1',
      ),
    )
    assert.ok(
      samples(r, 'rest_client_rate_limiter').includes('rest_client_rate_limiter_duration_seconds_sum 0.25'),
    )
    assert.ok(
      samples(r, 'rest_client_rate_limiter').includes(
        'rest_client_rate_limiter_duration_seconds_bucket{le="0.25"} 1',
      ),
    )
  })
})

describe('informer, leader and process gauges', () => {
  test('informer gauges are computed at scrape from the current informers', () => {
    const clock = new ManualClock(10_000)
    const r = new MetricsRegistry()
    const informers = [
      { describe: 'configmaps in a', health: () => ({ synced: true, lastSyncAt: 4_000 }) },
      { describe: 'secrets', health: () => ({ synced: false, lastSyncAt: undefined }) },
    ]
    const remove = informerMetrics(r, () => informers, clock)
    const gauges = (): string[] =>
      samples(r, 'edgeop_informer_').filter((l) => !l.startsWith('edgeop_informer_sync_state'))
    assert.deepEqual(gauges(), [
      'edgeop_informer_last_sync_age_seconds{informer="configmaps in a"} 6',
      'edgeop_informer_synced{informer="configmaps in a"} 1',
      'edgeop_informer_synced{informer="secrets"} 0',
    ])
    clock.jump(1000)
    informers.pop()
    assert.deepEqual(
      samples(r, 'edgeop_informer_sync_state{informer="secrets"'),
      [],
      'gone with its informer',
    )
    assert.deepEqual(gauges(), [
      'edgeop_informer_last_sync_age_seconds{informer="configmaps in a"} 7',
      'edgeop_informer_synced{informer="configmaps in a"} 1',
    ])
    remove()
  })

  test('edgeop_cache_snapshot_serving, _age_seconds, _write_failures and the sync state follow each informer health at scrape', () => {
    const r = new MetricsRegistry()
    let since: number | undefined = 5_000
    const clock = new ManualClock(65_000)
    informerMetrics(
      r,
      () => [
        {
          describe: 'nodeconfigs',
          health: () => ({
            synced: since === undefined,
            syncState: since === undefined ? 'synced' : 'restored',
            lastSyncAt: 1,
            servingFromSnapshotSince: since,
            snapshotTakenAt: since && since - 10_000,
            snapshotWriteFailures: 2,
          }),
        },
        { describe: 'nodes', health: () => ({ synced: true, lastSyncAt: 1 }) },
      ],
      clock,
    )
    assert.deepEqual(samples(r, 'edgeop_informer_sync_state{informer="nodeconfigs"'), [
      'edgeop_informer_sync_state{informer="nodeconfigs",state="restored"} 1',
      'edgeop_informer_sync_state{informer="nodeconfigs",state="synced"} 0',
      'edgeop_informer_sync_state{informer="nodeconfigs",state="unsynced"} 0',
    ])
    assert.deepEqual(samples(r, 'edgeop_cache_snapshot_'), [
      'edgeop_cache_snapshot_age_seconds{informer="nodeconfigs"} 70',
      'edgeop_cache_snapshot_serving{informer="nodeconfigs"} 1',
      'edgeop_cache_snapshot_serving{informer="nodes"} 0',
      'edgeop_cache_snapshot_write_failures{informer="nodeconfigs"} 2',
      'edgeop_cache_snapshot_write_failures{informer="nodes"} 0',
    ])
    since = undefined
    assert.deepEqual(samples(r, 'edgeop_cache_snapshot_age'), [], 'no age once synced')
    assert.deepEqual(samples(r, 'edgeop_informer_sync_state{informer="nodeconfigs",state="synced"'), [
      'edgeop_informer_sync_state{informer="nodeconfigs",state="synced"} 1',
    ])
    assert.deepEqual(samples(r, 'edgeop_cache_snapshot_serving'), [
      'edgeop_cache_snapshot_serving{informer="nodeconfigs"} 0',
      'edgeop_cache_snapshot_serving{informer="nodes"} 0',
    ])
  })

  test('two informer collectors on one registry do not erase each other', () => {
    const r = new MetricsRegistry()
    const clock = new ManualClock()
    informerMetrics(
      r,
      () => [{ describe: 'a', health: () => ({ synced: true, lastSyncAt: undefined }) }],
      clock,
    )
    informerMetrics(
      r,
      () => [{ describe: 'b', health: () => ({ synced: false, lastSyncAt: undefined }) }],
      clock,
    )
    assert.deepEqual(samples(r, 'edgeop_informer_synced'), [
      'edgeop_informer_synced{informer="a"} 1',
      'edgeop_informer_synced{informer="b"} 0',
    ])
  })

  test('leader_election_master_status follows isLeader at each scrape', () => {
    const r = new MetricsRegistry()
    let leading = false
    leaderElectionMetrics(r, 'my-op', () => leading)
    assert.deepEqual(samples(r, 'leader_'), ['leader_election_master_status{name="my-op"} 0'])
    leading = true
    assert.deepEqual(samples(r, 'leader_'), ['leader_election_master_status{name="my-op"} 1'])
  })

  test('process gauges read memory at scrape; event-loop lag when a monitor is given', () => {
    const r = new MetricsRegistry()
    let rss = 100
    processMetrics(r, {
      memoryUsage: () => ({ rss: rss++, heapUsed: 20, heapTotal: 30, external: 7, arrayBuffers: 0 }),
      heapSpaces: () => [
        {
          space_name: 'new_space',
          space_size: 1024,
          space_used_size: 512,
          space_available_size: 0,
          physical_space_size: 1024,
        },
        {
          space_name: 'old_space',
          space_size: 4096,
          space_used_size: 3000,
          space_available_size: 0,
          physical_space_size: 4096,
        },
      ],
      eventLoop: { seconds: () => 0.25 },
    })
    const lines = samples(r, '')
    for (const l of [
      'process_resident_memory_bytes 100',
      'nodejs_heap_size_used_bytes 20',
      'nodejs_heap_size_total_bytes 30',
      'nodejs_external_memory_bytes 7',
      'nodejs_heap_space_size_used_bytes{space="new"} 512',
      'nodejs_heap_space_size_total_bytes{space="new"} 1024',
      'nodejs_heap_space_size_used_bytes{space="old"} 3000',
      'nodejs_heap_space_size_total_bytes{space="old"} 4096',
      'nodejs_eventloop_lag_seconds 0.25',
    ]) {
      assert.ok(lines.includes(l), l)
    }
    const start = Number(lines.find((l) => l.startsWith('process_start_time_seconds '))?.split(' ')[1])
    assert.ok(start > 1.7e9 && start <= Date.now() / 1000, String(start))
    assert.ok(samples(r, 'process_resident').includes('process_resident_memory_bytes 101'))
    const real = new MetricsRegistry()
    processMetrics(real)
    assert.ok(!real.render().includes('nodejs_eventloop_lag_seconds'))
    assert.ok(Number(samples(real, 'process_resident_memory_bytes')[0]?.split(' ')[1]) > 1e6)
    assert.ok(samples(real, 'nodejs_heap_space_size_total_bytes').some((l) => l.includes('{space="old"}')))
  })
})

describe('object, drift and process metrics', () => {
  const obj = (name: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
    ({ metadata: { name, namespace: 'shop', ...meta }, ...extra }) as KubeObject
  const ready = (s: string) => ({ status: { conditions: [{ type: 'Ready', status: s, reason: 'X' }] } })

  test('informer gauges count the cached objects and estimate their JSON bytes', () => {
    const r = new MetricsRegistry()
    const objects = [obj('a'), obj('b'), obj('c')]
    const store = { size: objects.length, list: () => objects }
    informerMetrics(r, () => [{ describe: 'pods', store, health: () => ({ synced: true, lastSyncAt: 0 }) }])
    const bytes = JSON.stringify(objects).length
    assert.ok(samples(r, 'edgeop_informer_objects').includes('edgeop_informer_objects{informer="pods"} 3'))
    assert.ok(
      samples(r, 'edgeop_informer_cache_bytes').includes(
        `edgeop_informer_cache_bytes{informer="pods"} ${bytes}`,
      ),
    )
  })

  test('conditions by type and status per controller, and the oldest deletion held by a finalizer', () => {
    const r = new MetricsRegistry()
    const clock = new ManualClock(Date.parse('2026-01-01T00:10:00Z'))
    let objects = [
      obj('a', ready('True')),
      obj('b', ready('True')),
      obj('c', ready('False'), { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x'] }),
      obj('d', {}, { deletionTimestamp: '2026-01-01T00:05:00Z', finalizers: ['x'] }),
      obj('e', {}, { deletionTimestamp: '2025-01-01T00:00:00Z' }), // no finalizer: not held
    ]
    objectMetrics(
      r,
      () => [{ name: 'app', source: { describe: 'apps', store: { list: () => objects } } }],
      clock,
    )
    assert.deepEqual(samples(r, 'edgeop_controller_'), [
      'edgeop_controller_conditions{controller="app",type="Ready",status="False"} 1',
      'edgeop_controller_conditions{controller="app",type="Ready",status="True"} 2',
      'edgeop_controller_terminating_oldest_seconds{controller="app"} 600',
    ])
    objects = [obj('a', ready('Unknown'))]
    assert.deepEqual(samples(r, 'edgeop_controller_'), [
      'edgeop_controller_conditions{controller="app",type="Ready",status="Unknown"} 1',
      'edgeop_controller_terminating_oldest_seconds{controller="app"} 0',
    ])
  })

  test('drift corrections count per controller and kind, the kinds given at 0 from the start', () => {
    const r = new MetricsRegistry()
    const drift = driftMetrics(r, 'app', ['Service'])
    drift('Deployment')
    drift('Deployment')
    assert.deepEqual(samples(r, 'edgeop_controller_drift'), [
      'edgeop_controller_drift_corrected_total{controller="app",kind="Deployment"} 2',
      'edgeop_controller_drift_corrected_total{controller="app",kind="Service"} 0',
    ])
  })

  test('process CPU seconds and file descriptors follow the Prometheus client names', () => {
    const r = new MetricsRegistry()
    processMetrics(r)
    const value = (name: string) => Number(samples(r, `${name} `)[0]?.split(' ')[1])
    const cpu = value('process_cpu_seconds_total')
    assert.ok(cpu > 0, String(cpu))
    for (let i = 0; i < 1e6; i++) Math.sqrt(i)
    assert.ok(value('process_cpu_seconds_total') > cpu)
    assert.match(r.render(), /# TYPE process_cpu_seconds_total counter/)
    assert.ok(value('process_open_fds') >= 3)
    assert.ok(value('process_max_fds') >= value('process_open_fds'))
    assert.ok(value('process_virtual_memory_bytes') > value('process_resident_memory_bytes'))
  })
})

describe('fit with the components they observe', () => {
  test('the handles match the hooks of Controller, SharedInformer and LeaderElector (checked by tsc)', () => {
    const asObserver = (m: ReturnType<typeof reconcileMetrics>): ControllerObserver => m
    const asSource = (i: SharedInformer): InformerHealthSource & InformerReadiness => i
    const asLeader = (e: LeaderElector): Parameters<typeof leaderCheck>[0] => e
    assert.equal(typeof reconcileMetrics(new MetricsRegistry(), 'x', 1).onReconcile, 'function')
    assert.deepEqual(
      [asObserver, asSource, asLeader].map((f) => typeof f),
      ['function', 'function', 'function'],
    )
  })
})
