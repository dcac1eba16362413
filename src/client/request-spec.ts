/**
 * @module request-spec — the shape of one API request and of a streamed response, as the transport takes and returns them.
 */

/** HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** One request. */
export interface RequestSpec {
  method: Method
  /** Path and query, e.g. `/api/v1/namespaces/x/pods?limit=500`. */
  path: string
  /** An object (sent as JSON) or a string. */
  body?: unknown
  contentType?: string
  accept?: string
  /** Overall deadline including retries (ms); 0 = none. Default `DEFAULT_REQUEST_TIMEOUT_MS`; watches: none. */
  timeoutMs?: number
  signal?: AbortSignal
}

/** A watch (long-running, streamed) request. */
export interface StreamSpec extends RequestSpec {
  /** Tear the stream down when no byte arrives for this long (ms); 0 = never. */
  idleTimeoutMs?: number
}

/** A streamed response: consume `body` once; `close()` aborts it early. */
export interface StreamResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: AsyncIterable<Uint8Array>
  close(): void
}

/** The path without its query, for messages (queries may be long; never secret, but noisy). */
export function displayPath(path: string): string {
  const q = path.indexOf('?')
  return q < 0 ? path : path.slice(0, q)
}
