/**
 * @module undici — the single place edgeop imports undici from.
 *
 * undici's package entry loads everything (fetch, WebSocket, caches, mocks: 736 KB
 * minified) and, being CommonJS without `sideEffects`, cannot be tree-shaken. The
 * client needs only the connection pool and the request API, so it imports those two
 * modules directly (about 240 KB). These paths are undici internals: the version is
 * pinned exactly in package.json, and the client's tests fail if the layout moves.
 */
import type { Dispatcher } from 'undici'
import requestImpl from 'undici/lib/api/api-request.js'
import PoolImpl from 'undici/lib/dispatcher/pool.js'

export type { Dispatcher }

/** undici's connection pool (`Pool`), keep-alive, HTTP/1.1 pipelining off, HTTP/2 with `allowH2`. */
export const Pool = PoolImpl
/** A pool instance. */
export type Pool = InstanceType<typeof PoolImpl>

/** undici's `dispatcher.request(options)`, applied to `dispatcher`. */
export function request(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  return requestImpl.call(dispatcher, options)
}
