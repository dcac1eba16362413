/** @module metrics — the metrics registry (Prometheus text format), the runtime metric families every edgeop process exports, and the heap monitor. */
export {
  type ControllerObserver,
  RECONCILE_RESULTS,
  type ReconcileOutcome,
  resultLabel,
} from './controller-observer.ts'
export { type HeapAfterGc, monitorHeapAfterGc } from './heap-after-gc.ts'
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
export {
  driftMetrics,
  type InformerHealthSource,
  informerMetrics,
  leaderElectionMetrics,
  objectMetrics,
  processMetrics,
  RECONCILE_TIME_BUCKETS,
  REST_CLIENT_BUCKETS,
  reconcileMetrics,
  restClientMetrics,
  WORKQUEUE_BUCKETS,
  workqueueMetrics,
} from './runtime-metrics.ts'
