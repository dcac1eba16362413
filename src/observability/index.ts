/** @module observability — how a process is seen from outside: the metrics registry and runtime metrics, health checks, the ops server, the structured logger. */

export {
  CERT_RELOAD_INTERVAL_MS,
  type CertWatcher,
  type CertWatcherOptions,
  DEFAULT_CERT_NAME,
  DEFAULT_KEY_NAME,
  watchCertificate,
} from './cert-watcher.ts'
export {
  type ControllerObserver,
  RECONCILE_RESULTS,
  type ReconcileOutcome,
  resultLabel,
} from './controller-observer.ts'
export {
  type CheckResult,
  DEFAULT_EVENT_LOOP_RESOLUTION_MS,
  DEFAULT_EVENT_LOOP_STALL_MS,
  DEFAULT_EVENT_LOOP_WINDOW_MS,
  DEFAULT_WATCH_FAILURE_THRESHOLD,
  type DelayHistogram,
  type EventLoopLag,
  type EventLoopLagOptions,
  eventLoopCheck,
  type HealthCheck,
  HealthChecks,
  type HealthResponse,
  type InformerReadiness,
  informersCheck,
  leaderCheck,
  monitorEventLoopLag,
  ping,
} from './health-checks.ts'
export { type HeapAfterGc, monitorHeapAfterGc } from './heap-after-gc.ts'
export {
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_KEEP_ALIVE_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_MAX_HEADER_BYTES,
  HTTP_TIMEOUT_CHECK_INTERVAL_MS,
  type HttpLimits,
  TLS_HANDSHAKE_TIMEOUT_MS,
} from './http-guard.ts'
export {
  createLogger,
  DEFAULT_LIBRARY_LOG_LEVEL,
  DEFAULT_LOG_FORMAT,
  DEFAULT_LOG_LEVEL,
  defaultLogger,
  type LogFormat,
  type LoggerOptions,
  type LogStream,
} from './logger.ts'
export { type ConsoleLike, consoleLogger, type PinoLike, pinoLogger } from './logger-adapters.ts'
export {
  type AccessReviewer,
  bearerToken,
  MAX_AUTHORIZATION_HEADER,
  METRICS_ACCESS,
  METRICS_AUTH_ALLOWED_TTL_MS,
  METRICS_AUTH_CACHE_SIZE,
  METRICS_AUTH_DENIED_TTL_MS,
  METRICS_AUTH_MAX_IN_FLIGHT,
  METRICS_AUTH_REVIEW_TIMEOUT_MS,
  METRICS_PATH,
  type MetricsAccess,
  type MetricsAuthDecision,
  MetricsAuthFilter,
  type MetricsAuthFilterOptions,
  PARKED_RETRY_ACCESS,
} from './metrics-auth.ts'
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
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  DEFAULT_METRICS_BIND_ADDRESS,
  METRICS_CONTENT_TYPE,
  OPS_REQUEST_TIMEOUT_MS,
  type OpsServer,
  type OpsServerOptions,
  parseBindAddress,
  type SecureMetricsOptions,
  startOpsServer,
} from './ops-server.ts'
export type { ParkedKeyInfo, ParkedKeysView } from './parked-keys-view.ts'
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
export {
  type CertificateOptions,
  type CertificatePair,
  issueCertificate,
  SELF_SIGNED_BACKDATE_MS,
  SELF_SIGNED_HOSTS,
  SELF_SIGNED_VALIDITY_MS,
  selfSignedCertificate,
} from './self-signed-cert.ts'
