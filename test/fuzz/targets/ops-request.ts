/**
 * @module ops-request — fuzz target: raw HTTP/1.1 request heads (and small bodies) sent to the ops server
 * (`startOpsServer`: `/metrics`, `/debug/parked`, `/healthz`, `/readyz` on one plain-HTTP loopback address).
 *
 * Answered: any reply or none, as long as nothing escapes a promise chain (the process would exit) and
 * a well-formed `GET /healthz` is still answered 200 afterwards.
 */
import { HealthChecks, ping } from '../../../src/health/health-checks.ts'
import { MetricsRegistry } from '../../../src/metrics/metrics-registry.ts'
import { startOpsServer } from '../../../src/server/ops-server.ts'
import type { FuzzSession, FuzzTarget } from '../harness.ts'
import { endpoint, serverSession } from '../raw-http.ts'

/** The request-line and header syntax of RFC 9112, and the ops server's paths. */
export const HTTP_DICTIONARY: readonly string[] = [
  'GET ', 'POST ', 'HEAD ', 'OPTIONS ', 'CONNECT ', ' HTTP/1.1\r\n', ' HTTP/1.0\r\n', ' HTTP/2.0\r\n', '\r\n', '\r\n\r\n', '\n',
  'Host: a\r\n', 'Content-Length: ', 'Transfer-Encoding: chunked\r\n', 'Expect: 100-continue\r\n',
  'Connection: keep-alive\r\n', 'Authorization: Bearer ', 'Content-Type: application/json\r\n', ': ', '0\r\n\r\n',
  'http://', 'https://', '*', '//', '/..', '%', '%00', '%zz', '?', '#', '@', '[::1]', ':', '65536', '99999', '-1',
  '/metrics', '/healthz', '/readyz', '/healthz/ping', '/readyz?verbose', '/debug/parked', '/retry', '?exclude=',
] // biome-ignore format: a word list

/** A key parked in the view, so `/debug/parked/<key>/retry` has something to find. */
const PARKED = 'ns/parked'

export const opsRequest: FuzzTarget = {
  name: 'ops-request',
  entry: 'startOpsServer: metrics, parked keys and probes on 127.0.0.1, raw bytes over TCP',
  dictionary: HTTP_DICTIONARY,
  maxBytes: 16 * 1024,
  async open(): Promise<FuzzSession> {
    const registry = new MetricsRegistry()
    registry.counter({ name: 'fuzz_total', help: 'A counter to render.' }).inc()
    const healthz = new HealthChecks('healthz')
    healthz.add('ping', ping)
    const readyz = new HealthChecks('readyz')
    readyz.add('informers', () => 'configmaps: not synced')
    const ops = await startOpsServer({
      registry,
      healthz,
      readyz,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      parked: {
        parked: () => [],
        retryParked: (key) => (key === PARKED ? 1 : 0),
      },
    })
    const metrics = endpoint(ops.metricsAddress!, false)
    const probes = endpoint(ops.healthProbeAddress!, false)
    return serverSession(
      [metrics, probes],
      [
        { at: probes, request: 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n', want: 200 },
        { at: metrics, request: 'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n', want: 200 },
      ],
      () => ops.close(),
    )
  },
}
