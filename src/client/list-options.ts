/**
 * @module list-options — query parameters of list, watch and write calls.
 */

/** `resourceVersionMatch` values (meta/v1 ListOptions). */
export type ResourceVersionMatch = 'NotOlderThan' | 'Exact'

/** Options of a list call (meta/v1 ListOptions). */
export interface ListOptions {
  /** Label selector in apimachinery `labels.Parse` syntax, e.g. `app=web,tier!=db`; unset = every object. */
  labelSelector?: string
  /** Field selector, e.g. `metadata.name=web`; the server refuses (400) fields the resource does not support. */
  fieldSelector?: string
  /** Page size; with `continue` for the next page. */
  limit?: number
  /** The previous page's `metadata.continue`; once compacted away the server answers 410 `Expired` ({@link isResourceExpired}). */
  continue?: string
  /** `''` = most recent (quorum read), `'0'` = any (cache), else the semantics of `resourceVersionMatch`. */
  resourceVersion?: string
  /** How `resourceVersion` is interpreted (apimachinery `ListOptions.ResourceVersionMatch`); the server refuses it without a `resourceVersion`. */
  resourceVersionMatch?: ResourceVersionMatch
  /** Server-side deadline for the call. */
  timeoutSeconds?: number
}

/** Options of a watch call. */
export interface WatchOptions {
  /** Label selector, as for {@link ListOptions.labelSelector}. */
  labelSelector?: string
  /** Field selector, as for {@link ListOptions.fieldSelector}. */
  fieldSelector?: string
  /**
   * Events after this version. Unset or `'0'`: synthetic ADDED events for current objects first.
   * Too old: a 410 `Expired`/`Gone`, often as an `ERROR` event ({@link isGoneOrExpired}).
   */
  resourceVersion?: string
  /** Only together with `sendInitialEvents`, and then it must be `NotOlderThan` (the server refuses anything else). */
  resourceVersionMatch?: ResourceVersionMatch
  /** Server closes the watch after this many seconds. */
  timeoutSeconds?: number
  /** Ask for BOOKMARK events that carry only a newer `resourceVersion`; servers may ignore it. */
  allowWatchBookmarks?: boolean
  /** Streaming list: replay current state as ADDED events, then a `k8s.io/initial-events-end` bookmark. */
  sendInitialEvents?: boolean
}

/** Options shared by create/update/patch. */
export interface WriteOptions {
  /** `dryRun=All`. */
  dryRun?: boolean
  /** Manager recorded in `managedFields` (at most 128 characters); unset = the server derives one from the User-Agent. */
  fieldManager?: string
  /** `Strict` (server rejects unknown/duplicate fields), `Warn`, or `Ignore`. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore'
}

/** Delete options (meta/v1 DeleteOptions), sent as the request body. */
export interface DeleteOptions {
  /** Dependents: `Orphan` keeps them, `Background` deletes them after the owner, `Foreground` before it. Unset = the resource's default. */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground'
  /** Seconds the object gets to terminate (pods); 0 = at once; unset = the object's own default. */
  gracePeriodSeconds?: number
  /** Delete only while `uid` / `resourceVersion` still match; otherwise 409 Conflict ({@link isConflict}). */
  preconditions?: { uid?: string; resourceVersion?: string }
  /** `dryRun=All`: validated, nothing deleted. */
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
