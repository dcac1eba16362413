/**
 * @module kube-request — the harness's own minimal HTTPS client for the apiserver.
 *
 * Used for readiness polls, namespaces and fake nodes. It deliberately does not use
 * the project's client (which is under test) and keeps no connections open
 * (`agent: false`), so nothing here holds a process alive.
 */
import { request } from 'node:https'
import { EdgeopError } from '../core/errors.ts'

/** Credentials of the harness's requests. */
export interface TlsIdentity {
  /** CA that signed the server certificate. */
  caPem: string
  certPem?: string
  keyPem?: string
  /** Skip server verification (only for the self-signed health ports of kcm and the scheduler). */
  insecure?: boolean
}

/** A buffered response. */
export interface KubeResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** Per-request timeout: every harness request is small and goes to loopback. */
export const KUBE_REQUEST_TIMEOUT_MS = 15_000

/**
 * Sends one request to `server` (`https://127.0.0.1:port`) and buffers the response.
 * `body` is JSON-encoded when given. Rejects on network errors and timeouts only;
 * HTTP error statuses resolve.
 */
export function kubeRequest(
  server: string,
  identity: TlsIdentity,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = KUBE_REQUEST_TIMEOUT_MS,
): Promise<KubeResponse> {
  const url = new URL(path, server)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: false,
        ca: identity.insecure ? undefined : identity.caPem,
        rejectUnauthorized: !identity.insecure,
        cert: identity.certPem,
        key: identity.keyPem,
        timeout: timeoutMs,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
      },
    )
    req.on('timeout', () =>
      req.destroy(
        new EdgeopError(
          'EDGEOP_ERR_TIMEOUT',
          `${method} ${url.pathname}: no response within ${timeoutMs} ms`,
          {
            step: `${method} ${url.pathname}`,
            retryable: true,
          },
        ),
      ),
    )
    req.on('error', reject)
    req.end(payload)
  })
}

/** Like {@link kubeRequest} but rejects unless the status is 2xx (or one of `okStatuses`); returns parsed JSON. */
export async function kubeJson<T = unknown>(
  server: string,
  identity: TlsIdentity,
  method: string,
  path: string,
  body?: unknown,
  okStatuses: readonly number[] = [],
): Promise<T> {
  const res = await kubeRequest(server, identity, method, path, body)
  if ((res.status < 200 || res.status > 299) && !okStatuses.includes(res.status)) {
    throw new EdgeopError(
      'EDGEOP_ERR_API',
      `${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 500)}`,
      {
        step: `${method} ${path}`,
        retryable: res.status >= 500 || res.status === 429,
      },
    )
  }
  return (res.body === '' ? undefined : JSON.parse(res.body)) as T
}
