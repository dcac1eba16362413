/**
 * @module rest-client-metrics — client-go's `rest_client_*` metrics of the client's requests.
 *
 * Registers its families on a {@link MetricsRegistry}; calling it twice for the same registry reuses the
 * families (the registry returns what is registered).
 */
import type { Method, RequestObserver } from '../transport/transport.ts'
import type { MetricsRegistry } from './metrics-registry.ts'

/**
 * client-go request and rate-limiter latency buckets (k8s.io/component-base
 * `metrics/prometheus/restclient/metrics.go`): 5 ms … 60 s.
 */
export const REST_CLIENT_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]

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
