/**
 * @module database-api — the external database service the AppService operator provisions into.
 *
 * A small HTTP API (the stand-in in test/standin implements it):
 *   PUT    /v1/databases/{key}  {name, namespace, class}  → 201 created, 200 already there
 *   DELETE /v1/databases/{key}                            → 204 deleted, 404 already gone
 * `key` is an idempotency key derived from the AppService's UID, so retries never
 * create a second entry. Uses Node's built-in fetch: no bytes added to the artifact.
 */
import { EdgeopError } from '../../core/index.ts'

/** Per-call deadline: 10 s (an external API slower than that counts as unavailable). */
export const DATABASE_API_TIMEOUT_MS = 10_000

/** What is sent when an entry is ensured. */
export interface DatabaseEntry {
  name: string
  namespace: string
  class: string
}

/** The operator's view of the external service. */
export interface DatabaseApi {
  ensure(key: string, entry: DatabaseEntry, signal?: AbortSignal): Promise<void>
  remove(key: string, signal?: AbortSignal): Promise<void>
}

/** A client for the service at `baseUrl`. Failures are retryable `EDGEOP_ERR_NETWORK` errors. */
export function databaseApi(baseUrl: string): DatabaseApi {
  const url = (key: string) => `${baseUrl.replace(/\/+$/, '')}/v1/databases/${encodeURIComponent(key)}`
  const call = async (
    method: string,
    key: string,
    ok: number[],
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<void> => {
    const deadline = AbortSignal.timeout(DATABASE_API_TIMEOUT_MS)
    let status: number
    try {
      const res = await fetch(url(key), {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      })
      status = res.status
      await res.arrayBuffer().catch(() => undefined)
    } catch (cause) {
      throw new EdgeopError('EDGEOP_ERR_NETWORK', `database API ${method} ${key}: unreachable`, {
        step: `${method} database entry`,
        retryable: true,
        cause,
      })
    }
    if (!ok.includes(status)) {
      throw new EdgeopError('EDGEOP_ERR_NETWORK', `database API ${method} ${key}: HTTP ${status}`, {
        step: `${method} database entry`,
        retryable: true,
      })
    }
  }
  return {
    ensure: (key, entry, signal) => call('PUT', key, [200, 201], entry, signal),
    remove: (key, signal) => call('DELETE', key, [200, 204, 404], undefined, signal),
  }
}
