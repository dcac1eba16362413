/**
 * @module undici — the single place edgeop imports undici from.
 *
 * undici's package entry loads everything (fetch, WebSocket, caches, mocks: 736 KB
 * minified) and, being CommonJS without `sideEffects`, cannot be tree-shaken. The
 * client needs only the connection pool, the connector and the request API, so it imports
 * those modules directly (about 240 KB). These paths are undici internals (undici has no
 * `exports` map): test/client/undici-layout.test.ts pins the files and shapes used, and
 * runs against both ends of package.json's undici range (test/build/dependency-range.test.ts).
 */
import type { buildConnector, Dispatcher, Pool as UndiciPool } from 'undici'
import requestImpl from 'undici/lib/api/api-request.js'
import buildConnectorImpl from 'undici/lib/core/connect.js'
import PoolImpl from 'undici/lib/dispatcher/pool.js'

export type { Dispatcher }

/**
 * undici's connection pool (`Pool`), keep-alive, HTTP/1.1 pipelining off, HTTP/2 with `allowH2`.
 * Typed with undici's published `Pool`, so the emitted .d.ts never names the internal module
 * (its types live in undici-internals.d.ts, which consumers do not have).
 */
export const Pool: typeof UndiciPool = PoolImpl
/** A pool instance. */
export type Pool = UndiciPool

/** undici's `dispatcher.request(options)`, applied to `dispatcher`. */
export function request(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  return requestImpl.call(dispatcher, options)
}

/** The step of opening a connection that undici's connect timeout cut short. */
export type ConnectStep = 'connect' | 'tls-handshake'

/** Connect-timeout errors seen by {@link stepAwareConnector}, with the step they interrupted and the limit. */
const timedOut = new WeakMap<object, { step: ConnectStep; timeoutMs: number }>()

/**
 * undici's connector (TCP, then TLS for https), noting for a connect timeout
 * (`UND_ERR_CONNECT_TIMEOUT`, one timer over both steps) whether the TCP connection had been
 * established, i.e. whether TCP connect or the TLS handshake timed out. Read it with
 * {@link connectTimeoutStep}.
 */
export function stepAwareConnector(
  options: buildConnector.BuildOptions & { timeout: number },
): buildConnector.connector {
  const connect = buildConnectorImpl(options)
  return (target, callback) => {
    let tcpConnected = false
    const socket = connect(target, (err, s) => {
      if (err !== null && (err as { code?: unknown }).code === 'UND_ERR_CONNECT_TIMEOUT') {
        const step = target.protocol === 'https:' && tcpConnected ? 'tls-handshake' : 'connect'
        timedOut.set(err, { step, timeoutMs: options.timeout })
      }
      if (err === null) callback(null, s as NonNullable<typeof s>)
      else callback(err, null)
    })
    // A TLSSocket emits 'connect' when its TCP connection is up, 'secureConnect' after the handshake.
    socket?.once('connect', () => {
      tcpConnected = true
    })
  }
}

/** For a connect-timeout error from {@link stepAwareConnector}: the step it interrupted and the limit; else undefined. */
export function connectTimeoutStep(err: unknown): { step: ConnectStep; timeoutMs: number } | undefined {
  return typeof err === 'object' && err !== null ? timedOut.get(err) : undefined
}
