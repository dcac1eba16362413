/**
 * @module database-api — the external database service the AppService operator provisions into.
 *
 * A small HTTP API (the stand-in in test/standin implements it):
 *   POST   /v1/databases        {key, name, namespace, class} → 201 ready | 202 provisioning {task}
 *   GET    /v1/databases/{key}  → 200 {state, task?} | 404
 *   GET    /v1/tasks/{id}       → 200 {state: running | succeeded, progress} | 404
 *   DELETE /v1/databases/{key}  → 204 deleted | 404 already gone
 * `key` is an idempotency key derived from the AppService's UID, by which an entry is read back;
 * the service does not deduplicate creates, so the caller reads back before creating again
 * whenever the outcome of a create is unknown. Writes carry a `fencing-token` header when given
 * one; the service refuses one lower than it has seen (409). Uses Node's built-in fetch: no
 * bytes added to the artifact. Inside a traced reconcile each call is a client span
 * `database-api <method>` and carries its `traceparent`.
 */
import { EdgeopError } from '../../core/index.ts'
import { activeSpan, type Span } from '../../tracing/index.ts'

/** Per-call deadline: 10 s (an external API slower than that counts as unavailable). */
export const DATABASE_API_TIMEOUT_MS = 10_000

/** What is sent when an entry is created. */
export interface DatabaseEntry {
  name: string
  namespace: string
  class: string
}

/** An entry as the service reports it. */
export interface DatabaseRecord {
  state: 'provisioning' | 'ready'
  /** The provisioning task, while `provisioning`. */
  task?: string
}

/** A provisioning task. */
export interface DatabaseTask {
  state: 'running' | 'succeeded'
  /** Percent done, 0–100. */
  progress: number
}

/** Per-call options. */
export interface DatabaseCallOptions {
  signal?: AbortSignal
  /** Sent with writes; the service refuses a token lower than the highest it has seen. */
  fencingToken?: number | undefined
}

/**
 * The operator's view of the external service. Unavailability (no answer, 5xx, 429) is a
 * retryable `EDGEOP_ERR_NETWORK` error (`EDGEOP_ERR_TIMEOUT` after the deadline: the request may
 * have been applied); a fenced write is a non-retryable `EDGEOP_ERR_LEADER` error.
 */
export interface DatabaseApi {
  /** Submits a new entry. Not idempotent: read back by `key` first when an earlier create's outcome is unknown. */
  create(key: string, entry: DatabaseEntry, o?: DatabaseCallOptions): Promise<DatabaseRecord>
  /** The entry of `key`, undefined when there is none. */
  get(key: string, o?: DatabaseCallOptions): Promise<DatabaseRecord | undefined>
  /** A provisioning task, undefined when the service does not know it. */
  task(id: string, o?: DatabaseCallOptions): Promise<DatabaseTask | undefined>
  /** Removes the entry of `key` (done when it is already gone). */
  remove(key: string, o?: DatabaseCallOptions): Promise<void>
}

/** A client for the service at `baseUrl`; `timeoutMs` is the per-call deadline. */
export function databaseApi(baseUrl: string, timeoutMs = DATABASE_API_TIMEOUT_MS): DatabaseApi {
  const base = `${baseUrl.replace(/\/+$/, '')}/v1/`
  const call = async (method: string, path: string, o: DatabaseCallOptions = {}, body?: unknown) => {
    const span = activeSpan()?.child(`database-api ${method}`, {
      kind: 'client',
      attributes: { 'http.request.method': method, 'url.full': base + path },
    })
    try {
      return await send(method, path, o, body, span)
    } catch (err) {
      span?.fail(err)
      throw err
    } finally {
      span?.end()
    }
  }
  const send = async (
    method: string,
    path: string,
    o: DatabaseCallOptions,
    body: unknown,
    span: Span | undefined,
  ) => {
    const step = `${method} ${path}`
    const fail = (
      code: 'EDGEOP_ERR_NETWORK' | 'EDGEOP_ERR_TIMEOUT' | 'EDGEOP_ERR_API',
      what: string,
      cause?: unknown,
    ) =>
      new EdgeopError(code, `database API ${step}: ${what}`, {
        step,
        retryable: code !== 'EDGEOP_ERR_API',
        cause,
      })
    const deadline = AbortSignal.timeout(timeoutMs)
    const headers: Record<string, string> = {}
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (o.fencingToken !== undefined) headers['fencing-token'] = String(o.fencingToken)
    if (span) headers.traceparent = span.traceparent
    let res: Response
    let text: string
    try {
      res = await fetch(base + path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: o.signal ? AbortSignal.any([o.signal, deadline]) : deadline,
      })
      text = await res.text()
    } catch (cause) {
      throw deadline.aborted
        ? fail('EDGEOP_ERR_TIMEOUT', `no answer within ${timeoutMs} ms`, cause)
        : fail('EDGEOP_ERR_NETWORK', 'unreachable', cause)
    }
    const s = res.status
    span?.set('http.response.status_code', s)
    if (s === 404 && method !== 'POST') return undefined
    if (s === 409 && text.includes('"fenced"'))
      throw new EdgeopError('EDGEOP_ERR_LEADER', `database API ${step}: fenced`, {
        step,
      })
    if (s >= 500 || s === 429) throw fail('EDGEOP_ERR_NETWORK', `HTTP ${s}`)
    if (s >= 300) throw fail('EDGEOP_ERR_API', `HTTP ${s}`)
    return text ? JSON.parse(text) : {}
  }
  const db = (key: string) => `databases/${encodeURIComponent(key)}`
  return {
    create: (key, entry, o) => call('POST', 'databases', o, { key, ...entry }),
    get: (key, o) => call('GET', db(key), o),
    task: (id, o) => call('GET', `tasks/${encodeURIComponent(id)}`, o),
    remove: async (key, o) => {
      await call('DELETE', db(key), o)
    },
  }
}
