/** @module server — the ops server (probes, metrics, the parked-keys view) and the authorisation of its metrics endpoint. */
export {
  type AccessReviewer,
  bearerToken,
  METRICS_PATH,
  type MetricsAuthDecision,
  MetricsAuthFilter,
  type MetricsAuthFilterOptions,
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
