/**
 * @module secure-metrics-request — fuzz target: raw HTTP/1.1 requests over TLS to the secure metrics
 * address (`startOpsServer` with `secureMetrics`: a self-signed certificate and an authorization filter
 * that admits one token), where `/metrics` and the parked-keys view are answered to authorized scrapers only.
 *
 * Answered: any reply or none, as long as nothing escapes a promise chain (the process would exit) and
 * an authorized scrape is still answered 200 afterwards.
 */
import { HealthChecks } from '../../../src/health/health-checks.ts'
import { MetricsRegistry } from '../../../src/metrics/metrics-registry.ts'
import { startOpsServer } from '../../../src/server/ops-server.ts'
import type { FuzzSession, FuzzTarget } from '../harness.ts'
import { endpoint, serverSession } from '../raw-http.ts'
import { HTTP_DICTIONARY } from './ops-request.ts'

/** The one token the filter admits (a test value, no credential). */
const ADMITTED = 'Bearer fuzz-scraper'

export const secureMetricsRequest: FuzzTarget = {
  name: 'secure-metrics-request',
  entry:
    'startOpsServer with secureMetrics: /metrics and /debug/parked over TLS behind the authorization filter',
  dictionary: [...HTTP_DICTIONARY, `Authorization: ${ADMITTED}\r\n`, 'Authorization: Basic ', 'Bearer '],
  maxBytes: 16 * 1024,
  async open(): Promise<FuzzSession> {
    const registry = new MetricsRegistry()
    registry.counter({ name: 'fuzz_total', help: 'A counter to render.' }).inc()
    const ops = await startOpsServer({
      registry,
      healthz: new HealthChecks('healthz'),
      readyz: new HealthChecks('readyz'),
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      parked: { parked: () => [], retryParked: () => 0 },
      secureMetrics: {
        filter: {
          decide: async (authorization) =>
            authorization === ADMITTED
              ? { status: 200, reason: 'ok', user: 'scraper' }
              : authorization === undefined
                ? { status: 401, reason: 'no bearer token' }
                : { status: 403, reason: 'not allowed to get /metrics' },
        },
      },
    })
    const at = endpoint(ops.metricsAddress!, true)
    return serverSession(
      [at],
      [{ at, request: `GET /metrics HTTP/1.1\r\nHost: a\r\nAuthorization: ${ADMITTED}\r\n\r\n`, want: 200 }],
      () => ops.close(),
    )
  },
}
