/**
 * @module types — the Kubernetes object shapes the runtime touches. Type-only: no bytes.
 *
 * Field names and optionality follow `k8s.io/apimachinery/pkg/apis/meta/v1` and the
 * `coordination.k8s.io/v1` / `events.k8s.io/v1` APIs. Only the fields edgeop reads
 * or writes are listed; objects keep every other field they arrive with.
 */

/** `metav1.OwnerReference`. */
export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

/** `metav1.ManagedFieldsEntry`. */
export interface ManagedFieldsEntry {
  manager?: string
  operation?: 'Apply' | 'Update'
  apiVersion?: string
  time?: string
  fieldsType?: string
  fieldsV1?: unknown
  subresource?: string
}

/** `metav1.ObjectMeta`. */
export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  finalizers?: string[]
  managedFields?: ManagedFieldsEntry[]
}

/** `metav1.ListMeta`. */
export interface ListMeta {
  resourceVersion?: string
  continue?: string
  remainingItemCount?: number
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [field: string]: unknown
}

/** A list of objects as the API returns it. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string
  kind?: string
  metadata: ListMeta
  items: T[]
}

/** `metav1.PartialObjectMetadata`: an object with only its type and metadata. */
export interface PartialObjectMetadata extends KubeObject {
  apiVersion: 'meta.k8s.io/v1'
  kind: 'PartialObjectMetadata'
}

/** `metav1.StatusCause`. The cause's type travels as JSON field `reason` (Go field `Type`). */
export interface StatusCause {
  reason?: string
  message?: string
  field?: string
}

/** `metav1.StatusDetails`. */
export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

/** `metav1.Status`: the body of every API error and of watch ERROR events. */
export interface Status {
  apiVersion?: string
  kind?: 'Status'
  metadata?: ListMeta
  status?: 'Success' | 'Failure'
  message?: string
  reason?: string
  details?: StatusDetails
  code?: number
}

/** Watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/** One decoded watch event. `object` is a {@link Status} for ERROR events. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType
  object: T
}

/** `metav1.Condition`. */
export interface Condition {
  type: string
  status: 'True' | 'False' | 'Unknown'
  observedGeneration?: number
  lastTransitionTime: string
  reason: string
  message: string
}

/** `coordination.k8s.io/v1` LeaseSpec. Times are RFC 3339 with microseconds (MicroTime). */
export interface LeaseSpec {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions?: number
}

/** `coordination.k8s.io/v1` Lease. */
export interface Lease extends KubeObject {
  spec?: LeaseSpec
}

/** `v1.ObjectReference`, as used by events. */
export interface ObjectReference {
  apiVersion?: string
  kind?: string
  name?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  fieldPath?: string
}

/** `events.k8s.io/v1` Event. */
export interface KubeEvent extends KubeObject {
  eventTime: string
  reportingController: string
  reportingInstance: string
  action: string
  reason: string
  regarding: ObjectReference
  related?: ObjectReference
  note?: string
  type: 'Normal' | 'Warning'
  series?: { count: number; lastObservedTime: string }
}

/** Identity of an object in a cache or queue: `namespace/name`, or `name` for cluster-scoped objects. */
export type ObjectKey = string

/** The cache key of an object (client-go `MetaNamespaceKeyFunc`). */
export function objectKey(obj: { metadata?: ObjectMeta }): ObjectKey {
  const ns = obj.metadata?.namespace
  const name = obj.metadata?.name ?? ''
  return ns ? `${ns}/${name}` : name
}

/** Splits a key from {@link objectKey} into namespace (undefined when cluster-scoped) and name. */
export function splitObjectKey(key: ObjectKey): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/')
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) }
}
