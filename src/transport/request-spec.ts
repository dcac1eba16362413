/**
 * @module request-spec — the shape of one API request and of a streamed response, as the transport takes and returns them.
 */

/** HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** One request. */
export interface RequestSpec {
  /** HTTP method; only GET is retried after a lost connection (429/5xx with `Retry-After` retry any method). */
  method: Method
  /** Path and query, e.g. `/api/v1/namespaces/x/pods?limit=500`. */
  path: string
  /** An object (sent as JSON) or a string. */
  body?: unknown
  /** Content-Type of `body`, sent only with a body. Default `application/json`. */
  contentType?: string
  /** Accept header. Default `application/json`. */
  accept?: string
  /** Decodes a protobuf `Status` error answer (set when `accept` offers protobuf; see `KindSchema.decoders`). */
  decodeStatus?: (bytes: Uint8Array) => object
  /** Overall deadline including retries (ms); 0 = none. Default `DEFAULT_REQUEST_TIMEOUT_MS`; watches: none. */
  timeoutMs?: number
  /** Aborting it ends the request at any stage, including a retry wait, with `EDGEOP_ERR_ABORTED`. */
  signal?: AbortSignal
}

/** A watch (long-running, streamed) request. */
export interface StreamSpec extends RequestSpec {
  /** Tear the stream down when no byte arrives for this long (ms); 0 = never. */
  idleTimeoutMs?: number
}

/** A streamed response: consume `body` once; `close()` aborts it early. */
export interface StreamResponse {
  /** HTTP status, always below 400 (a refusal is thrown instead). */
  status: number
  /** Response headers, names in lower case. */
  headers: Record<string, string | string[] | undefined>
  /** The body's chunks; a failure mid-stream throws an `ApiError` (network, timeout or abort). */
  body: AsyncIterable<Uint8Array>
  /** Destroys the body; safe to call more than once. */
  close(): void
}

/** The path without its query, for messages (queries may be long; never secret, but noisy). */
export function displayPath(path: string): string {
  const q = path.indexOf('?')
  return q < 0 ? path : path.slice(0, q)
}
