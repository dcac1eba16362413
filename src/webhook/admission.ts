/**
 * @module admission — the admission.k8s.io/v1 `AdmissionReview` a webhook receives and answers, what a
 * handler returns, and the JSON Patch (RFC 6902) between an object and its mutated copy. Pure.
 */
import type { JsonPatchOp } from '../client/index.ts'
import type { KubeObject } from '../core/index.ts'

/** The `request` of an `AdmissionReview` (admission.k8s.io/v1), as the apiserver sends it. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Echoed in the response. */
  uid: string
  /** The object's group, version and kind. */
  kind: { group: string; version: string; kind: string }
  /** The resource addressed, e.g. `{ group: 'apps', version: 'v1', resource: 'deployments' }`. */
  resource: { group: string; version: string; resource: string }
  /** The subresource, e.g. `status`. */
  subResource?: string
  /** The object's name (empty on a create with `generateName`). */
  name?: string
  /** The object's namespace; absent for cluster-scoped objects. */
  namespace?: string
  /** `CREATE`, `UPDATE`, `DELETE` or `CONNECT`. */
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'
  /** Who is asking. */
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }
  /** The new object (null on DELETE). */
  object?: T | null
  /** The old object (UPDATE and DELETE). */
  oldObject?: T | null
  /** True for a dry-run request: nothing is persisted, so a handler must not cause side effects. */
  dryRun?: boolean
  /** The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`). */
  options?: Record<string, unknown> | null
}

/**
 * A handler's answer. `allowed: false` denies with `message` (the user sees it) and `code` (default 403);
 * `warnings` are shown to the client either way (kubectl prints them). A mutating handler may return
 * `patch` itself; otherwise the patch is computed from its changes to the object it was given.
 */
export interface AdmissionResult {
  /** Default true. */
  allowed?: boolean
  /** Why it was denied. */
  message?: string
  /** HTTP code of a denial; default 403. */
  code?: number
  /** Warnings for the client. */
  warnings?: string[]
  /** Mutating only: the operations to apply, overriding the computed patch. */
  patch?: JsonPatchOp[]
}

/** Escapes a key for a JSON Pointer (RFC 6901 §3). */
const pointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1')
const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * The JSON Patch turning `from` into `to`: `add`, `remove` and `replace` on object keys, recursively;
 * a changed array is replaced whole (its items carry no identity to diff by). Empty when equal.
 * Only own keys count: `constructor`, `toString` and `__proto__` are keys like any other.
 */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOp[] {
  if (!isMap(from) || !isMap(to)) return same(from, to) ? [] : [{ op: 'replace', path, value: to }]
  const ops: JsonPatchOp[] = []
  for (const key of Object.keys(from))
    if (!Object.hasOwn(to, key)) ops.push({ op: 'remove', path: `${path}/${pointer(key)}` })
  for (const [key, value] of Object.entries(to)) {
    const at = `${path}/${pointer(key)}`
    if (!Object.hasOwn(from, key)) ops.push({ op: 'add', path: at, value })
    else ops.push(...jsonPatch(from[key], value, at))
  }
  return ops
}
