/**
 * @module update-rules — what the API server does to an object on an update: the fields it owns,
 * the status subresource, finalizers while deleting, and when generation moves.
 */
import type { KubeObject } from '../../core/types.ts'
import { notFound } from './api-status.ts'

/** A spec schema as zod (and zod/mini) schemas are: `safeParse` returns the defaulted value or an error. */
export interface SpecSchema {
  /** The defaulted value, or why it is refused. */
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { message: string } }
}

/** What the model knows about one resource beyond its objects. */
export interface ResourceRules {
  /** Writes to the object leave `status` alone and `/status` writes only `status` (CRDs with `subresources.status`, most built-ins). */
  statusSubresource: boolean
  /** Validates and defaults `spec` on every write, as a CRD's structural schema would: 422 Invalid when it fails. */
  spec?: SpecSchema | undefined
  /** Field selector paths beyond `metadata.name`/`metadata.namespace` (a CRD's `selectableFields`, e.g. `spec.nodeName`). */
  selectableFields?: readonly string[] | undefined
}

/** The finalizer `propagationPolicy: Foreground` adds; the garbage collector removes it once the dependents are gone. */
export const FOREGROUND = 'foregroundDeletion'
/** The finalizer `propagationPolicy: Orphan` adds; the garbage collector removes it after orphaning the dependents. */
export const ORPHAN = 'orphan'

const clone = <T>(v: T): T => structuredClone(v)
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const stripStatus = (o: KubeObject): unknown => {
  const { status: _s, metadata: _m, ...rest } = o as KubeObject & { status?: unknown }
  return rest
}

/**
 * `body` as the server stores it over `old`: a `status` write keeps everything but status; an
 * object write keeps the status when the resource has a status subresource; name, namespace, uid,
 * creationTimestamp and deletionTimestamp stay; while deleting, finalizers can only go; generation
 * moves when anything but metadata and status changed. @throws ApiStatus 404 for another subresource.
 */
export function updatedObject(
  old: KubeObject,
  body: KubeObject,
  subresource: string | undefined,
  statusSubresource: boolean,
  collection: string,
): KubeObject {
  const next = clone(body) as KubeObject & { status?: unknown }
  if (subresource === 'status') {
    // The status subresource writes status only.
    const status = next.status
    Object.assign(next, clone(old))
    next.status = status
    if (status === undefined) delete next.status
  } else if (subresource !== undefined) {
    throw notFound(`${resourceOf(collection)}/${subresource}`, old.metadata.name ?? '')
  } else if (statusSubresource) {
    if ((old as { status?: unknown }).status === undefined) delete next.status
    else next.status = clone((old as { status?: unknown }).status)
  }
  // Fields the server owns.
  const m = next.metadata ?? {}
  next.metadata = {
    ...m,
    name: old.metadata.name,
    ...(old.metadata.namespace ? { namespace: old.metadata.namespace } : {}),
    uid: old.metadata.uid,
    creationTimestamp: old.metadata.creationTimestamp,
    generation: old.metadata.generation,
    ...(old.metadata.deletionTimestamp ? { deletionTimestamp: old.metadata.deletionTimestamp } : {}),
  }
  delete next.metadata.managedFields
  if (!old.metadata.deletionTimestamp) delete next.metadata.deletionTimestamp
  if (old.metadata.deletionTimestamp) {
    // Finalizers may only be removed while deleting (the API server refuses new ones then).
    const kept = (next.metadata.finalizers ?? []).filter((f) => (old.metadata.finalizers ?? []).includes(f))
    next.metadata.finalizers = kept
  }
  if ((next.metadata.finalizers ?? []).length === 0) delete next.metadata.finalizers
  if (!same(stripStatus(old), stripStatus(next)))
    next.metadata.generation = (old.metadata.generation ?? 0) + 1
  return next
}

/** Whether `next` equals `old` but for resourceVersion and managedFields (the server then writes nothing). */
export function isNoOp(old: KubeObject, next: KubeObject): boolean {
  const { resourceVersion: _a, managedFields: _c, ...oldMeta } = old.metadata
  const { resourceVersion: _b, managedFields: _d, ...newMeta } = next.metadata
  return same({ ...old, metadata: oldMeta }, { ...next, metadata: newMeta })
}

/** `group/resource` of the built-in resources without a status subresource (a PUT writes the whole object). */
export const NO_STATUS = new Set([
  '/configmaps',
  '/secrets',
  '/events',
  '/serviceaccounts',
  '/endpoints',
  'coordination.k8s.io/leases',
  'events.k8s.io/events',
  'rbac.authorization.k8s.io/roles',
  'rbac.authorization.k8s.io/rolebindings',
  'rbac.authorization.k8s.io/clusterroles',
  'rbac.authorization.k8s.io/clusterrolebindings',
])

export const resourceOf = (collection: string): string => collection.slice(collection.indexOf('/') + 1)

/** RFC 3339 at second precision, as metadata timestamps are. */
export function timestamp(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`
}
