/** @module server — the guarded request path every edgeop server takes, the ops server (probes, metrics, the parked-keys view) and the authorisation of its endpoints. */
export type { HttpLimits } from './http-guard.ts'
export {
  type AccessReviewer,
  bearerToken,
  METRICS_ACCESS,
  METRICS_PATH,
  type MetricsAccess,
  type MetricsAuthDecision,
  MetricsAuthFilter,
  type MetricsAuthFilterOptions,
  PARKED_RETRY_ACCESS,
} from './metrics-auth.ts'
export {
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  DEFAULT_METRICS_BIND_ADDRESS,
  METRICS_CONTENT_TYPE,
  type OpsServer,
  type OpsServerOptions,
  parseBindAddress,
  type SecureMetricsOptions,
  startOpsServer,
} from './ops-server.ts'
export type { ParkedKeyInfo, ParkedKeysView } from './parked-keys-view.ts'
