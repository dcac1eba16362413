/**
 * @module undici — the single place edgeop imports undici from.
 *
 * undici's package entry loads everything (fetch, WebSocket, caches, mocks: 736 KB
 * minified) and, being CommonJS without `sideEffects`, cannot be tree-shaken. The
 * client needs only the connection pool, the connector and the request API, so it imports
 * those modules directly (about 240 KB). It uses undici for HTTP/2 only; HTTP/1.1 goes through
 * `node:http` (`http1-dispatcher.ts`), so the artifact stubs undici's HTTP/1.1 client out. These paths are undici internals (undici has no
 * `exports` map): test/transport/undici-layout.test.ts pins the files and shapes used, and
 * runs against both ends of package.json's undici range (test/build/dependency-range.test.ts).
 */
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { buildConnector, Dispatcher, Pool as UndiciPool } from 'undici'
import requestImpl from 'undici/lib/api/api-request.js'
import buildConnectorImpl from 'undici/lib/core/connect.js'
import PoolImpl from 'undici/lib/dispatcher/pool.js'
import { noteConnectTimeout } from './connect-timeout.ts'

export type { Dispatcher }

/**
 * undici's connection pool (`Pool`), used for HTTP/2 only (`allowH2` with {@link stepAwareConnector}).
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

/**
 * `code` of the error {@link stepAwareConnector} fails a TLS connection with when the server did
 * not select h2. Internal: `ConnectionPool` answers it by sending the request over HTTP/1.1
 * (`node:http`); it never reaches a caller.
 */
export const NOT_H2 = 'EDGEOP_NOT_H2'

/**
 * undici's connector (TCP, then TLS) for HTTP/2 only, noting for a connect timeout
 * (`UND_ERR_CONNECT_TIMEOUT`, one timer over both steps) whether the TCP connection had been
 * established, i.e. whether TCP connect or the TLS handshake timed out (read it with
 * `connectTimeoutStep`). With `tunnel`, each connection is first opened through a proxy
 * (`proxy-tunnel.ts`) and TLS runs inside it; the step is then always `tls-handshake`.
 *
 * A connection on which ALPN did not select h2 is closed before undici sees it and fails with
 * {@link NOT_H2}: undici's HTTP/1.1 client is not in the artifact (HTTP/1.1 goes through
 * `node:http`). undici fails the requests queued for that connection with this error, before
 * writing a byte of them, so they are safe to send again.
 */
export function stepAwareConnector(
  options: buildConnector.BuildOptions & { timeout: number },
  tunnel?: (host: string, port: number) => Promise<Duplex>,
): buildConnector.connector {
  const connect = buildConnectorImpl(options)
  const direct: buildConnector.connector = (target, callback) => {
    let tcpConnected = target.httpSocket !== undefined
    const socket = connect(target, (err, s) => {
      if (err === null && (s as { alpnProtocol?: unknown } | null)?.alpnProtocol !== 'h2') {
        s?.destroy()
        return callback(
          Object.assign(new Error('the server did not select h2 (ALPN)'), { code: NOT_H2 }),
          null,
        )
      }
      if (err !== null && (err as { code?: unknown }).code === 'UND_ERR_CONNECT_TIMEOUT')
        noteConnectTimeout(err, tcpConnected ? 'tls-handshake' : 'connect', options.timeout)
      if (err === null) callback(null, s as NonNullable<typeof s>)
      else callback(err, null)
    })
    // A TLSSocket emits 'connect' when its TCP connection is up, 'secureConnect' after the handshake.
    socket?.once('connect', () => {
      tcpConnected = true
    })
  }
  if (!tunnel) return direct
  // Through a proxy: the tunnel first (its own timer), then TLS inside it (undici's `httpSocket`).
  return (target, callback) => {
    tunnel(target.hostname, Number(target.port) || 443).then(
      (stream) => direct({ ...target, httpSocket: stream as Socket }, callback),
      (err: Error) => callback(err, null),
    )
  }
}
