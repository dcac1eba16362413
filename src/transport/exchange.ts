/**
 * @module exchange — one HTTP exchange as both HTTP paths take and return it: undici (HTTP/2) and
 * `node:http` (HTTP/1.1, `http1-dispatcher.ts`).
 *
 * The shapes are the part of undici's `request` options and `ResponseData` the client uses, so
 * undici's own objects fit them as they are.
 */

/** What the transport sends: every limit in ms, 0 = none. */
export interface ExchangeRequest {
  method: string
  /** Path and query. */
  path: string
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string | undefined
  signal: AbortSignal | undefined
  /** Longest wait for the response headers once the request has a connection. */
  headersTimeout: number
  /** Longest gap between two chunks of the body while its reader keeps up. */
  bodyTimeout: number
}

/**
 * A response body: iterate it once or read it whole with `text()`; `destroy()` ends it early. A
 * failure while reading throws the transport error (undici's codes on both paths).
 */
export interface ExchangeBody extends AsyncIterable<unknown> {
  text(): Promise<string>
  destroy(): unknown
}

/** What the transport gets back once the response headers have arrived. */
export interface ExchangeResponse {
  statusCode: number
  /** Names in lower case. */
  headers: Record<string, string | string[] | undefined>
  body: ExchangeBody
}
