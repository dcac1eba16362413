/**
 * @module process-metrics — the process's memory, heap, CPU, file descriptors and event-loop lag, under prom-client's names.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { getHeapSpaceStatistics, type HeapSpaceInfo } from 'node:v8'
import type { MetricsRegistry } from './metrics-registry.ts'

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
