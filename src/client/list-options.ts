/**
 * @module list-options — query parameters of list, watch and write calls.
 */

/** `resourceVersionMatch` values (meta/v1 ListOptions). */
export type ResourceVersionMatch = 'NotOlderThan' | 'Exact'

/** Options of a list call (meta/v1 ListOptions). */
export interface ListOptions {
  labelSelector?: string
  fieldSelector?: string
  /** Page size; with `continue` for the next page. */
  limit?: number
  continue?: string
  /** `''` = most recent (quorum read), `'0'` = any (cache), else the semantics of `resourceVersionMatch`. */
  resourceVersion?: string
  resourceVersionMatch?: ResourceVersionMatch
  /** Server-side deadline for the call. */
  timeoutSeconds?: number
}

/** Options of a watch call. */
export interface WatchOptions {
  labelSelector?: string
  fieldSelector?: string
  resourceVersion?: string
  resourceVersionMatch?: ResourceVersionMatch
  /** Server closes the watch after this many seconds. */
  timeoutSeconds?: number
  allowWatchBookmarks?: boolean
  /** Streaming list: replay current state as ADDED events, then a `k8s.io/initial-events-end` bookmark. */
  sendInitialEvents?: boolean
}

/** Options shared by create/update/patch. */
export interface WriteOptions {
  /** `dryRun=All`. */
  dryRun?: boolean
  fieldManager?: string
  /** `Strict` (server rejects unknown/duplicate fields), `Warn`, or `Ignore`. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore'
}

/** Delete options (meta/v1 DeleteOptions), sent as the request body. */
export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  gracePeriodSeconds?: number
  preconditions?: { uid?: string; resourceVersion?: string }
  dryRun?: boolean
}

/** Builds a query string (with leading `?`, or `''`) from defined values only. */
export function toQuery(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v))
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}

/** Query parameters of a list call. */
export function listQuery(o: ListOptions = {}): string {
  return toQuery({
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
    limit: o.limit,
    continue: o.continue,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    timeoutSeconds: o.timeoutSeconds,
  })
}

/** Query parameters of a watch call (always `watch=1`). */
export function watchQuery(o: WatchOptions = {}): string {
  return toQuery({
    watch: 1,
    labelSelector: o.labelSelector,
    fieldSelector: o.fieldSelector,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    timeoutSeconds: o.timeoutSeconds,
    allowWatchBookmarks: o.allowWatchBookmarks,
    sendInitialEvents: o.sendInitialEvents,
  })
}

/** Query parameters of a write call. */
export function writeQuery(
  o: WriteOptions = {},
  extra: Record<string, string | boolean | undefined> = {},
): string {
  return toQuery({
    dryRun: o.dryRun ? 'All' : undefined,
    fieldManager: o.fieldManager,
    fieldValidation: o.fieldValidation,
    ...extra,
  })
}
