/**
 * @module runtime-metrics — the metrics an operator exports, under the names Prometheus users already
 * query: controller-runtime's reconcile and workqueue families, client-go's `rest_client_*`, the
 * leader-election gauge, and process gauges.
 *
 * Each function registers its families on a {@link MetricsRegistry} and returns a small typed handle
 * (or a remover for scrape-time collectors). Calling one twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { getHeapSpaceStatistics, type HeapSpaceInfo } from 'node:v8'
import { type Clock, realClock } from '../core/clock.ts'
import type { KubeObject } from '../core/types.ts'
import type { QueueMetrics } from '../queue/metrics.ts'
import { WORKQUEUE_METRIC_NAMES } from '../queue/metrics.ts'
import type { Method, RequestObserver } from '../transport/transport.ts'
import { type ControllerObserver, RECONCILE_RESULTS, resultLabel } from './controller-observer.ts'
import type { Labels, MetricsRegistry } from './metrics-registry.ts'

/**
 * controller-runtime `controller_runtime_reconcile_time_seconds` buckets
 * (`pkg/internal/controller/metrics/metrics.go`): 5 ms … 60 s, dense below 1 s.
 */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]

/** controller-runtime workqueue buckets `ExponentialBuckets(10e-9, 10, 12)`: 10 ns … 1000 s. */
export const WORKQUEUE_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) => Number(`1e${i - 8}`))

/**
 * client-go request and rate-limiter latency buckets (k8s.io/component-base
 * `metrics/prometheus/restclient/metrics.go`): 5 ms … 60 s.
 */
export const REST_CLIENT_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]

/** The `reason` values of `edgeop_controller_parked_keys` (the controller's `ParkReason`). */
const PARK_REASONS = ['no_retry', 'attempts', 'time_budget'] as const

/**
 * Registers controller-runtime's reconcile metrics for `controller` (label `controller`) and
 * pre-initialises every series to 0, as controller-runtime does at start, so that rates exist before
 * the first error. `controller_runtime_max_concurrent_reconciles` is set to `maxConcurrentReconciles`.
 * As in controller-runtime, a terminal error, a panic or a timeout is also a `result="error"` and
 * counts in `controller_runtime_reconcile_errors_total`. edgeop adds `edgeop_controller_parked_keys`
 * (gauge, labels `controller`, `reason`) and `edgeop_controller_park_overflow_total`. The returned observer has every hook; pass it
 * as a controller's `observer` (the manager does that for every controller it is given).
 *
 * @example
 * const controller = new Controller({ name, ..., observer: reconcileMetrics(registry, name, 1) })
 */
export function reconcileMetrics(
  registry: MetricsRegistry,
  controller: string,
  maxConcurrentReconciles: number,
): Required<ControllerObserver> {
  const c = { controller }
  const labelNames = ['controller']
  const counter = (what: string, help: string) =>
    registry.counter({
      name: `controller_runtime_${what}_total`,
      help: `Total number of ${help} per controller`,
      labelNames,
    })
  const total = registry.counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'],
  })
  const errors = counter('reconcile_errors', 'reconciliation errors')
  const terminal = counter('terminal_reconcile_errors', 'terminal reconciliation errors')
  const panics = counter('reconcile_panics', 'reconciliation panics')
  const timeouts = counter('reconcile_timeouts', 'reconciliation timeouts')
  const time = registry.histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames,
    buckets: RECONCILE_TIME_BUCKETS,
  })
  const active = registry.gauge({
    name: 'controller_runtime_active_workers',
    help: 'Number of currently used workers per controller',
    labelNames,
  })
  registry
    .gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames,
    })
    .set(c, maxConcurrentReconciles)
  for (const result of RECONCILE_RESULTS) total.inc({ controller, result }, 0)
  for (const m of [errors, terminal, panics, timeouts]) m.inc(c, 0)
  active.set(c, 0)
  const parked = registry.gauge({
    name: 'edgeop_controller_parked_keys',
    help: 'Parked keys per controller and reason',
    labelNames: ['controller', 'reason'],
  })
  for (const reason of PARK_REASONS) parked.set({ controller, reason }, 0)
  const overflow = registry.counter({
    name: 'edgeop_controller_park_overflow_total',
    help: 'Keys not parked as the cap was reached',
    labelNames,
  })
  overflow.inc(c, 0)
  return {
    onReconcile(outcome, seconds) {
      const result = resultLabel(outcome)
      time.observe(c, seconds)
      total.inc({ controller, result })
      if (result !== 'error') return
      errors.inc(c)
      if (outcome === 'terminal_error') terminal.inc(c)
      if (outcome === 'panic') panics.inc(c)
      if (outcome === 'timeout') timeouts.inc(c)
    },
    onActiveWorkers: (n) => active.set(c, n),
    onParkedKeys: (reason, n) => parked.set({ controller, reason }, n),
    onParkOverflow: () => overflow.inc(c),
  }
}

/**
 * A {@link QueueMetrics} sink for the queue of controller `name`, under controller-runtime's
 * `workqueue_*` names with labels `name` and `controller` (both the controller name). The two
 * in-flight gauges are read from the queue's probe at scrape time, by a collector that lives as long
 * as the registry (one queue per controller name per process, as controller-runtime requires). Not
 * exported: the `priority` label of controller-runtime's priority queue (edgeop's has no priorities).
 *
 * @example
 * const controller = new Controller({ name, ..., queueMetrics: workqueueMetrics(registry, name) })
 */
export function workqueueMetrics(registry: MetricsRegistry, name: string): QueueMetrics {
  const l = { name, controller: name }
  const labelNames = ['name', 'controller']
  const N = WORKQUEUE_METRIC_NAMES
  const gauge = (n: string, help: string) => registry.gauge({ name: n, help, labelNames })
  const counter = (n: string, help: string) => registry.counter({ name: n, help, labelNames })
  const histogram = (n: string, help: string) =>
    registry.histogram({ name: n, help, labelNames, buckets: WORKQUEUE_BUCKETS })
  const depth = gauge(N.depth, 'Current depth of workqueue')
  const adds = counter(N.adds, 'Total number of adds handled by workqueue')
  const retries = counter(N.retries, 'Total number of retries handled by workqueue')
  const queued = histogram(
    N.queueDuration,
    'How long in seconds an item stays in workqueue before being requested',
  )
  const work = histogram(N.workDuration, 'How long in seconds processing an item from workqueue takes')
  const unfinished = gauge(
    N.unfinishedWork,
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration",
  )
  const longest = gauge(
    N.longestRunningProcessor,
    'How many seconds has the longest running processor for workqueue been running',
  )
  depth.set(l, 0)
  adds.inc(l, 0)
  retries.inc(l, 0)
  return {
    incDepth: () => depth.inc(l),
    decDepth: () => depth.dec(l),
    incAdds: () => adds.inc(l),
    incRetries: () => retries.inc(l),
    observeQueueDuration: (s) => queued.observe(l, s),
    observeWorkDuration: (s) => work.observe(l, s),
    setInFlightProbe(probe) {
      registry.addCollector(() => {
        const w = probe()
        unfinished.set(l, w.unfinishedWorkSeconds)
        longest.set(l, w.longestRunningProcessorSeconds)
      })
    },
  }
}

/**
 * A {@link RequestObserver} for the client's transport, with client-go's names:
 * `rest_client_requests_total{code,method}` (code `<error>` when no response arrived, as client-go),
 * `rest_client_request_duration_seconds{verb}` and `rest_client_rate_limiter_duration_seconds`.
 * client-go's `host` label is left out: one process talks to one apiserver.
 *
 * @example
 * const client = new KubeClient(config, { observer: restClientMetrics(registry) })
 */
export function restClientMetrics(registry: MetricsRegistry): RequestObserver {
  const requests = registry.counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code and method.',
    labelNames: ['code', 'method'],
  })
  const duration = registry.histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb.',
    labelNames: ['verb'],
    buckets: REST_CLIENT_BUCKETS,
  })
  const throttle = registry.histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds.',
    buckets: REST_CLIENT_BUCKETS,
  })
  return {
    onResponse(method: Method, status: number, durationMs: number) {
      requests.inc({ code: status === 0 ? '<error>' : String(status), method })
      duration.observe({ verb: method }, durationMs / 1000)
    },
    onThrottle: (waitedMs) => throttle.observe({}, waitedMs / 1000),
  }
}

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
  }
}

/** Objects whose JSON length {@link informerMetrics} measures per scrape: enough for a stable mean, cheap at any cache size. */
const SIZE_SAMPLE = 32

/**
 * Scrape-time gauges per informer (label `informer`, its description): `edgeop_informer_synced` (0/1)
 * and `edgeop_informer_last_sync_age_seconds` (since the last full list; absent before it); with a
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
  const all = [
    gauge('edgeop_informer_synced', '1 once the first full list is cached, else 0.'),
    gauge('edgeop_informer_last_sync_age_seconds', 'Seconds since the last full list.'),
    gauge('edgeop_cache_snapshot_serving', '1 while serving an unconfirmed cache snapshot.'),
    gauge('edgeop_cache_snapshot_write_failures', 'Failed cache snapshot writes.'),
    gauge('edgeop_informer_objects', 'Cached objects.'),
    gauge('edgeop_informer_cache_bytes', 'Estimated cache bytes.'),
  ] as const
  const [synced, age, serving, failed, objects, bytes] = all
  let shown: { informer: string }[] = []
  return registry.addCollector(() => {
    // Drop only this collector's old series: another factory may report on the same families.
    for (const l of shown) for (const g of all) g.remove(l)
    shown = []
    for (const i of informers()) {
      const h = i.health()
      const l = { informer: i.describe }
      shown.push(l)
      synced.set(l, h.synced ? 1 : 0)
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

/**
 * Process gauges, read at scrape time: `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`,
 * `nodejs_heap_size_total_bytes`, `nodejs_external_memory_bytes`, `nodejs_heap_space_size_used_bytes`
 * and `nodejs_heap_space_size_total_bytes` by V8 `space` (prom-client's names; they tell V8 sizing
 * its young generation apart from live objects growing), `nodejs_heap_size_used_after_major_gc_bytes`
 * when `heapAfterGc` is given (0 until the first full GC, as Go's `go_memstats_last_gc_time_seconds`),
 * `process_start_time_seconds`, `process_cpu_seconds_total`, and from /proc (Linux; 0 elsewhere)
 * `process_open_fds`, `process_max_fds`, `process_virtual_memory_bytes`; `nodejs_eventloop_lag_seconds` when `eventLoop` (the
 * `monitorEventLoopLag` that also feeds the liveness check) is given. Returns a function that
 * removes the collector.
 *
 * @example
 * const lag = monitorEventLoopLag()
 * processMetrics(registry, { eventLoop: lag })
 * healthz.add('eventloop', eventLoopCheck(lag))
 */
export function processMetrics(
  registry: MetricsRegistry,
  options: {
    eventLoop?: { seconds(): number }
    memoryUsage?: () => NodeJS.MemoryUsage
    heapSpaces?: () => readonly HeapSpaceInfo[]
    heapAfterGc?: { bytes(): number | undefined }
  } = {},
): () => void {
  const gauge = (name: string, help: string) => registry.gauge({ name, help })
  const rss = gauge('process_resident_memory_bytes', 'Resident memory size in bytes.')
  const used = gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.')
  const total = gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.')
  const external = gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.')
  const spaceGauge = (name: string, help: string) => registry.gauge({ name, help, labelNames: ['space'] })
  const spaceUsed = spaceGauge(
    'nodejs_heap_space_size_used_bytes',
    'Process heap space size used from Node.js in bytes.',
  )
  const spaceTotal = spaceGauge(
    'nodejs_heap_space_size_total_bytes',
    'Process heap space size total from Node.js in bytes.',
  )
  gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.').set(
    {},
    Math.round(performance.timeOrigin) / 1000,
  )
  const lag =
    options.eventLoop &&
    gauge('nodejs_eventloop_lag_seconds', 'Worst event loop lag of the last 10-20 seconds.')
  const afterGc =
    options.heapAfterGc &&
    gauge('nodejs_heap_size_used_after_major_gc_bytes', 'Heap bytes used after the last full GC.')
  const cpu = registry.counter({
    name: 'process_cpu_seconds_total',
    help: 'CPU seconds.',
  })
  const fds = gauge('process_open_fds', 'Open file descriptors.')
  const maxFds = gauge('process_max_fds', 'Open file descriptor limit.')
  const vm = gauge('process_virtual_memory_bytes', 'Virtual memory bytes.')
  const memoryUsage = options.memoryUsage ?? process.memoryUsage
  const heapSpaces = options.heapSpaces ?? getHeapSpaceStatistics
  return registry.addCollector(() => {
    const u = process.cpuUsage()
    cpu.inc({}, (u.user + u.system) / 1e6 - cpu.get())
    const m = memoryUsage()
    rss.set({}, m.rss)
    used.set({}, m.heapUsed)
    total.set({}, m.heapTotal)
    external.set({}, m.external)
    for (const sp of heapSpaces()) {
      // prom-client's label: `new_space` → `new`.
      const space = sp.space_name.replace(/_space$/, '')
      spaceUsed.set({ space }, sp.space_used_size)
      spaceTotal.set({ space }, sp.space_size)
    }
    const live = options.heapAfterGc?.bytes()
    if (afterGc && live !== undefined) afterGc.set({}, live)
    if (lag) lag.set({}, options.eventLoop!.seconds())
    // Linux only (as the Prometheus clients): elsewhere these throw here and stay 0.
    fds.set({}, readdirSync('/proc/self/fd').length - 1) // minus the one reading the directory
    maxFds.set({}, +/files +(\d+)/.exec(readFileSync('/proc/self/limits', 'latin1'))![1]!)
    vm.set({}, +readFileSync('/proc/self/stat', 'latin1').split(') ')[1]!.split(' ')[20]!) // field 23, vsize
  })
}

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
