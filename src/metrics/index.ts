/** @module metrics — the metrics registry (Prometheus text format), the runtime metric families every edgeop process exports, and the heap monitor. */
export {
  type ControllerObserver,
  RECONCILE_RESULTS,
  type ReconcileOutcome,
  resultLabel,
} from './controller-observer.ts'
export { driftMetrics } from './drift-metrics.ts'
export { type HeapAfterGc, monitorHeapAfterGc } from './heap-after-gc.ts'
export { type InformerHealthSource, informerMetrics } from './informer-metrics.ts'
export { leaderElectionMetrics } from './leader-election-metrics.ts'
export {
  type Collector,
  type Counter,
  type Gauge,
  type Histogram,
  type HistogramOptions,
  type Labels,
  type MetricOptions,
  MetricsRegistry,
  type MetricType,
} from './metrics-registry.ts'
export { objectMetrics } from './object-metrics.ts'
export { processMetrics } from './process-metrics.ts'
export { RECONCILE_TIME_BUCKETS, reconcileMetrics } from './reconcile-metrics.ts'
export { REST_CLIENT_BUCKETS, restClientMetrics } from './rest-client-metrics.ts'
export { WORKQUEUE_BUCKETS, workqueueMetrics } from './workqueue-metrics.ts'
