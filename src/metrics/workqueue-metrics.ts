/**
 * @module workqueue-metrics — controller-runtime's `workqueue_*` metrics of one controller's queue.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import type { QueueMetrics } from '../queue/metrics.ts'
import { WORKQUEUE_METRIC_NAMES } from '../queue/metrics.ts'
import type { MetricsRegistry } from './metrics-registry.ts'

/** controller-runtime workqueue buckets `ExponentialBuckets(10e-9, 10, 12)`: 10 ns … 1000 s. */
export const WORKQUEUE_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) => Number(`1e${i - 8}`))

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
