/**
 * @module ops-server — the HTTP endpoints a platform scrapes and probes: `/metrics` (and the
 * dead-letter view `/debug/parked`) on the metrics bind address, `/healthz` and `/readyz` on the
 * health-probe bind address (controller-runtime's two
 * addresses; `"0"` or `""` disables one; the same non-zero address serves both). With
 * `secureMetrics`, the metrics address is HTTPS and each request to it is authenticated and authorized; the probes
 * stay plain HTTP on their own address, as the kubelet probes them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { Clock } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import type { HealthChecks } from '../health/health-checks.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'
import { type CertWatcher, watchCertificate } from '../tls/cert-watcher.ts'
import { selfSignedCertificate } from '../tls/self-signed-cert.ts'
import { createHardenedServer, type HttpLimits, hardenedLimits } from './http-guard.ts'
import { type MetricsAccess, type MetricsAuthDecision, PARKED_RETRY_ACCESS } from './metrics-auth.ts'
import type { ParkedKeysView } from './parked-keys-view.ts'

/** controller-runtime `metricsserver.DefaultBindAddress`: `:8080` (all interfaces, plain HTTP). */
export const DEFAULT_METRICS_BIND_ADDRESS = ':8080'
/**
 * `:8081`, the `--health-probe-bind-address` default of every kubebuilder-scaffolded `cmd/main.go`
 * (controller-runtime's own default is `""`, disabled; operators almost always set this).
 */
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ':8081'
/** Scrapes and probes are tiny: a client that takes 10 s to send its request is broken or hostile. */
export const OPS_REQUEST_TIMEOUT_MS = 10_000

/** The Prometheus text format's content type. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** Options of {@link startOpsServer}. */
export interface OpsServerOptions {
  /** Default {@link DEFAULT_METRICS_BIND_ADDRESS}; `"0"` or `""` disables `/metrics`. */
  metricsBindAddress?: string
  /** Default {@link DEFAULT_HEALTH_PROBE_BIND_ADDRESS}; `"0"` or `""` disables the probes. */
  healthProbeBindAddress?: string
  /** Served at `/metrics` in the Prometheus text format. */
  registry: MetricsRegistry
  /** Served at `/healthz`, `/healthz/<check>`. */
  healthz: HealthChecks
  /** Served at `/readyz`, `/readyz/<check>`. */
  readyz: HealthChecks
  /**
   * Served beside `/metrics`: `GET /debug/parked` (JSON array of `ParkedKeyInfo`) and
   * `POST /debug/parked/<key>/retry` (the key URL-encoded or not; 404 when no controller has it parked).
   * Absent: both 404. With `secureMetrics`, reading the list needs the same authorization as `/metrics`;
   * a retry, an action, needs its own: `create` on the non-resource URL `/debug/parked` (`PARKED_RETRY_ACCESS`).
   */
  parked?: ParkedKeysView
  /** Serve `/metrics` over HTTPS to authorized scrapers only. Absent: plain HTTP, no authentication (controller-runtime's library default). */
  secureMetrics?: SecureMetricsOptions
  /** Handler failures (at error, once per request) and refused requests (at debug). Default: none. */
  logger?: Logger
  /** Overrides of the connection, header and timeout limits (see `hardenedLimits`); the request timeout defaults to {@link OPS_REQUEST_TIMEOUT_MS}. */
  limits?: Partial<HttpLimits>
}

/** HTTPS and access control for `/metrics` (controller-runtime `SecureServing` with `filters.WithAuthenticationAndAuthorization`). */
export interface SecureMetricsOptions {
  /** Decides each request: a `MetricsAuthFilter` over the operator's client; `access` absent means `get /metrics`. */
  filter: { decide(authorization: string | undefined, access?: MetricsAccess): Promise<MetricsAuthDecision> }
  /** Directory with the certificate and key, re-read when they change. Absent: a self-signed certificate made at start. */
  certDir?: string
  /** Certificate file name in `certDir`; default `tls.crt`. */
  certName?: string
  /** Key file name in `certDir`; default `tls.key`. */
  keyName?: string
  /** How often `certDir` is re-read; default `CERT_RELOAD_INTERVAL_MS`. */
  reloadIntervalMs?: number
  /** Time source of the reload polling. Default: real time. */
  clock?: Clock
  /** Certificate reloads and review failures. Default: none. */
  logger?: Logger
}

/** The running endpoints. */
export interface OpsServer {
  /** Where `/metrics` listens (`host:port`, IPv6 in brackets), or undefined when disabled. */
  readonly metricsAddress: string | undefined
  /** Where the probes listen, or undefined when disabled. */
  readonly healthProbeAddress: string | undefined
  /** Stops accepting, ends every connection (keep-alive ones too) and resolves when the sockets are closed. */
  close(): Promise<void>
}

/**
 * Parses a Go-style bind address: `:8080` (all interfaces), `127.0.0.1:8080`, `[::1]:8080`. Returns
 * undefined for `"0"` and `""` (disabled).
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` for anything else.
 */
export function parseBindAddress(address: string): { host: string | undefined; port: number } | undefined {
  if (address === '' || address === '0') return undefined
  const i = address.lastIndexOf(':')
  const host = address.slice(0, Math.max(0, i)).replace(/^\[(.*)\]$/, '$1')
  const port = Number(address.slice(i + 1))
  if (i < 0 || !/^\d{1,5}$/.test(address.slice(i + 1)) || port > 65535 || /[[\]\s/]/.test(host)) {
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `bind address ${JSON.stringify(address)} is not [host]:port or "0"`,
      {
        step: 'parse bind address',
      },
    )
  }
  return { host: host === '' ? undefined : host, port }
}

/**
 * Starts the metrics and probe servers. Resolves once every enabled one listens.
 *
 * Guarantees: only `GET` and `HEAD` (405 otherwise), but `POST` for a parked key's retry; unknown paths 404; responses are never cached
 * (`cache-control: no-store`); a port in use rejects with `EDGEOP_ERR_CONFIG` naming the address,
 * after closing any server already started.
 *
 * @example
 * const ops = await startOpsServer({ registry, healthz, readyz, metricsBindAddress: ':8080' })
 * signal.addEventListener('abort', () => void ops.close())
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const metricsAt = options.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS
  const probesAt = options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS
  const metrics = parseBindAddress(metricsAt)
  const probes = parseBindAddress(probesAt)
  const shared = metrics && probes && metrics.port !== 0 && metricsAt === probesAt
  const secure = options.secureMetrics
  if (secure && shared) {
    throw new EdgeopError(
      'EDGEOP_ERR_CONFIG',
      `secure metrics need their own address: the probes (plain HTTP for the kubelet) are also on ${metricsAt}`,
      { step: 'start ops server' },
    )
  }
  const servers: Server[] = []
  let watcher: CertWatcher | undefined
  const start = async (address: string, routes: { metrics: boolean; probes: boolean }): Promise<string> => {
    const limits = hardenedLimits({ requestTimeoutMs: OPS_REQUEST_TIMEOUT_MS, ...options.limits })
    const route = (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> =>
      handle(options, routes, req, res, url)
    const name = routes.metrics ? 'metrics' : 'probes'
    const log = options.logger ?? secure?.logger
    let server: Server
    if (secure && routes.metrics) {
      const { certDir, certName, keyName, reloadIntervalMs, clock, logger } = secure
      if (certDir !== undefined) {
        watcher = await watchCertificate(
          {
            dir: certDir,
            certName: certName || undefined,
            keyName: keyName || undefined,
            intervalMs: reloadIntervalMs || undefined,
            clock,
            logger,
          },
          (next) => tls.setSecureContext(next),
        )
      }
      const tls = createHardenedServer(route, {
        name,
        limits,
        tls: watcher?.current ?? selfSignedCertificate(),
        ...(log ? { logger: log } : {}),
      }) as HttpsServer
      server = tls
    } else server = createHardenedServer(route, { name, limits, ...(log ? { logger: log } : {}) })
    servers.push(server)
    return listen(server, address, 'start ops server')
  }
  const close = async (): Promise<void> => {
    watcher?.stop()
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve())
            s.closeAllConnections()
          }),
      ),
    )
  }
  try {
    const metricsAddress = metrics && (await start(metricsAt, { metrics: true, probes: !!shared }))
    const healthProbeAddress = shared
      ? metricsAddress
      : probes && (await start(probesAt, { metrics: false, probes: true }))
    return { metricsAddress, healthProbeAddress, close }
  } catch (err) {
    await close()
    throw err
  }
}

/**
 * Listens on `address` (see {@link parseBindAddress}; not disabled); resolves with where it listens
 * (`host:port`, IPv6 in brackets).
 *
 * @throws EdgeopError `EDGEOP_ERR_CONFIG` naming the address, at `step`, when it cannot listen.
 */
export async function listen(server: Server, address: string, step: string): Promise<string> {
  const at = parseBindAddress(address)!
  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) =>
      reject(
        new EdgeopError('EDGEOP_ERR_CONFIG', `cannot listen on ${address}: ${(cause as Error).message}`, {
          step,
          cause,
        }),
      ),
    )
    server.listen({ host: at.host, port: at.port }, resolve)
  })
  const a = server.address() as AddressInfo
  return `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
}

async function handle(
  options: OpsServerOptions,
  routes: { metrics: boolean; probes: boolean },
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const reply = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
    res.writeHead(status, {
      'content-type': type,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    res.end(body)
  }
  const path = url.pathname
  const retry = routes.metrics && options.parked && /^\/debug\/parked\/(.+)\/retry$/.exec(path)
  if (
    (req.method !== 'GET' && req.method !== 'HEAD' && !(req.method === 'POST' && retry)) ||
    (retry && req.method !== 'POST')
  ) {
    res.setHeader('allow', retry ? 'POST' : 'GET, HEAD')
    return reply(405, 'method not allowed\n')
  }
  const onMetricsAddress =
    routes.metrics && (path === '/metrics' || (options.parked && path.startsWith('/debug/parked')))
  if (onMetricsAddress) {
    // With secure metrics, everything on the metrics address needs an authorized bearer token:
    // reading (`/metrics`, `GET /debug/parked`) the scraper's `get /metrics`, re-arming a key its own grant.
    const d = await options.secureMetrics?.filter.decide(
      req.headers.authorization,
      retry ? PARKED_RETRY_ACCESS : undefined,
    )
    if (d && d.status !== 200) {
      if (d.status === 401) res.setHeader('www-authenticate', 'Bearer')
      return reply(d.status, `${d.reason}\n`)
    }
  }
  if (retry) {
    let key: string
    try {
      key = decodeURIComponent(retry[1]!)
    } catch {
      return reply(400, 'malformed key\n')
    }
    const n = options.parked!.retryParked(key)
    return n > 0 ? reply(200, `re-armed in ${n} controller(s)\n`) : reply(404, 'not parked\n')
  }
  if (onMetricsAddress && path === '/debug/parked')
    return reply(200, `${JSON.stringify(options.parked!.parked())}\n`, 'application/json')
  if (routes.metrics && path === '/metrics')
    return reply(200, options.registry.render(), METRICS_CONTENT_TYPE)
  if (routes.probes) {
    for (const checks of [options.healthz, options.readyz]) {
      const base = `/${checks.endpoint}`
      if (path === base || path.startsWith(`${base}/`)) {
        const r = await checks.respond(path.slice(base.length), url.searchParams)
        return reply(r.status, r.body)
      }
    }
  }
  reply(404, 'not found\n')
}
