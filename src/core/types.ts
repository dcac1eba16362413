/**
 * @module types — the Kubernetes object shapes the runtime touches. Type-only: no bytes.
 *
 * Field names and optionality follow `k8s.io/apimachinery/pkg/apis/meta/v1` and the
 * `coordination.k8s.io/v1` / `events.k8s.io/v1` APIs. Only the fields edgeop reads
 * or writes are listed; objects keep every other field they arrive with.
 */

/** `metav1.OwnerReference`. */
export interface OwnerReference {
  /** API version of the owner, e.g. `apps/v1`. */
  apiVersion: string
  /** Kind of the owner, e.g. `Deployment`. */
  kind: string
  /** Name of the owner (same namespace as the owned object, or cluster-scoped). */
  name: string
  /** UID of the owner: a reference to a deleted and re-created owner of the same name does not match. */
  uid: string
  /** True on at most one reference: the owner that manages this object. */
  controller?: boolean | undefined
  /** Foreground deletion of the owner waits for this object. Setting it needs `update` on the owner's `finalizers` subresource where `OwnerReferencesPermissionEnforcement` is enabled. */
  blockOwnerDeletion?: boolean | undefined
}

/** `metav1.ManagedFieldsEntry`. */
export interface ManagedFieldsEntry {
  /** Field manager that owns these fields (server-side apply). */
  manager?: string | undefined
  /** `Apply` for server-side apply, `Update` for every other write. */
  operation?: 'Apply' | 'Update' | undefined
  /** API version the field set is expressed in. */
  apiVersion?: string | undefined
  /** When these fields last changed (RFC 3339). */
  time?: string | undefined
  /** Format of `fieldsV1`; always `FieldsV1` today. */
  fieldsType?: string | undefined
  /** The owned field set, in the API server's FieldsV1 encoding. */
  fieldsV1?: unknown | undefined
  /** Subresource the write went through, e.g. `status`. */
  subresource?: string | undefined
}

/**
 * `metav1.ObjectMeta`. Every field also accepts `undefined`, which means absent (JSON drops it), so
 * consumers compiling with `exactOptionalPropertyTypes` can write `{ name, namespace }` with a
 * possibly-undefined namespace.
 */
export interface ObjectMeta {
  /** Unique within its namespace (or the cluster, when cluster-scoped). */
  name?: string | undefined
  /** Prefix from which the server generates a name when `name` is empty on create. */
  generateName?: string | undefined
  /** Namespace of a namespaced object; absent for cluster-scoped objects. */
  namespace?: string | undefined
  /** Server-assigned, unique over time: distinguishes an object from a re-created one with the same name. */
  uid?: string | undefined
  /** Opaque version for optimistic concurrency and watches; compare only for equality. */
  resourceVersion?: string | undefined
  /** Incremented by the server when the spec changes (not on status or metadata-only writes). */
  generation?: number | undefined
  /** When the server created the object (RFC 3339). */
  creationTimestamp?: string | undefined
  /** Set when deletion was requested; the object lives on until its finalizers are removed. */
  deletionTimestamp?: string | undefined
  /** Grace period the deletion was requested with. */
  deletionGracePeriodSeconds?: number | undefined
  /** Identifying key/value pairs, selectable by label selectors. */
  labels?: Record<string, string> | undefined
  /** Non-identifying key/value pairs for tools and controllers. */
  annotations?: Record<string, string> | undefined
  /** Objects this one depends on; the garbage collector deletes it when they are gone. */
  ownerReferences?: OwnerReference[] | undefined
  /** Keys that must all be removed before a deleted object disappears. */
  finalizers?: string[] | undefined
  /** Field ownership of server-side apply; the informer strips it by default. */
  managedFields?: ManagedFieldsEntry[] | undefined
}

/** `metav1.ListMeta`. */
export interface ListMeta {
  /** Version of the collection the list is consistent with; a watch resumes from it. */
  resourceVersion?: string | undefined
  /** Token for the next page of a paginated list; empty on the last page. */
  continue?: string | undefined
  /** Estimate of the items not yet returned, when the server knows it. */
  remainingItemCount?: number | undefined
}

/** Any Kubernetes object. */
export interface KubeObject {
  /** `group/version`, or `v1` for the core group. */
  apiVersion?: string | undefined
  /** The object's kind, e.g. `ConfigMap`. */
  kind?: string | undefined
  /** Standard object metadata. */
  metadata: ObjectMeta
  /** Every other field (`spec`, `status`, `data`, …) as it arrived. */
  [field: string]: unknown
}

/** A list of objects as the API returns it. */
export interface KubeList<T extends KubeObject = KubeObject> {
  /** API version of the list. */
  apiVersion?: string | undefined
  /** Kind of the list, e.g. `PodList`. */
  kind?: string | undefined
  /** List metadata: the collection's resourceVersion and the continue token. */
  metadata: ListMeta
  /** The objects of this page. */
  items: T[]
}

/** `metav1.PartialObjectMetadata`: an object with only its type and metadata. */
export interface PartialObjectMetadata extends KubeObject {
  /** Always `meta.k8s.io/v1`. */
  apiVersion: 'meta.k8s.io/v1'
  /** Always `PartialObjectMetadata`. */
  kind: 'PartialObjectMetadata'
}

/** `metav1.StatusCause`. The cause's type travels as JSON field `reason` (Go field `Type`). */
export interface StatusCause {
  /** Machine-readable cause, e.g. `FieldValueInvalid`. */
  reason?: string | undefined
  /** Human-readable description of the cause. */
  message?: string | undefined
  /** Path of the offending field, e.g. `spec.replicas`. */
  field?: string | undefined
}

/** `metav1.StatusDetails`. */
export interface StatusDetails {
  /** Name of the object the error is about. */
  name?: string | undefined
  /** API group of that object. */
  group?: string | undefined
  /** Kind (or resource) of that object. */
  kind?: string | undefined
  /** UID of that object, when known. */
  uid?: string | undefined
  /** Individual causes, e.g. one per invalid field. */
  causes?: StatusCause[] | undefined
  /** Seconds the client should wait before retrying (429, 5xx). */
  retryAfterSeconds?: number | undefined
}

/** `metav1.Status`: the body of every API error and of watch ERROR events. */
export interface Status {
  /** Always `v1`. */
  apiVersion?: string | undefined
  /** Always `Status`. */
  kind?: 'Status' | undefined
  /** List metadata (rarely set). */
  metadata?: ListMeta | undefined
  /** `Failure` for errors. */
  status?: 'Success' | 'Failure' | undefined
  /** Human-readable description of the error. */
  message?: string | undefined
  /** Machine-readable reason, e.g. `NotFound`, `Conflict`, `Expired`. */
  reason?: string | undefined
  /** Extended data about the reason. */
  details?: StatusDetails | undefined
  /** The HTTP status code. */
  code?: number | undefined
}

/** Watch event types on the wire. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/** One decoded watch event. `object` is a {@link Status} for ERROR events. */
export interface WatchEvent<T extends KubeObject = KubeObject> {
  /** What happened to the object. */
  type: WatchEventType
  /** The object after the change (before deletion for DELETED), or a Status for ERROR. */
  object: T
}

/** `metav1.Condition`. */
export interface Condition {
  /** Condition type in CamelCase, e.g. `Ready`. */
  type: string
  /** `True`, `False` or `Unknown`. */
  status: 'True' | 'False' | 'Unknown'
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number | undefined
  /** When `status` last changed (RFC 3339); unchanged when only reason or message change. */
  lastTransitionTime: string
  /** Machine-readable CamelCase reason for the last transition. */
  reason: string
  /** Human-readable details; may be empty. */
  message: string
}

/** `coordination.k8s.io/v1` LeaseSpec. Times are RFC 3339 with microseconds (MicroTime). */
export interface LeaseSpec {
  /** Identity of the current holder; empty when released. */
  holderIdentity?: string | undefined
  /** How long others wait after the last observed renewal before taking over. */
  leaseDurationSeconds?: number | undefined
  /** When the current holder acquired the Lease (MicroTime). */
  acquireTime?: string | undefined
  /** When the holder last renewed (MicroTime). */
  renewTime?: string | undefined
  /** How many times the holder changed. */
  leaseTransitions?: number | undefined
}

/** `coordination.k8s.io/v1` Lease. */
export interface Lease extends KubeObject {
  /** The lease record. */
  spec?: LeaseSpec | undefined
}

/** `v1.ObjectReference`, as used by events. */
export interface ObjectReference {
  /** API version of the referent. */
  apiVersion?: string | undefined
  /** Kind of the referent. */
  kind?: string | undefined
  /** Name of the referent. */
  name?: string | undefined
  /** Namespace of the referent, when namespaced. */
  namespace?: string | undefined
  /** UID of the referent. */
  uid?: string | undefined
  /** Version of the referent the reference was made at. */
  resourceVersion?: string | undefined
  /** A field within the referent, e.g. a container. */
  fieldPath?: string | undefined
}

/** `events.k8s.io/v1` Event. */
export interface KubeEvent extends KubeObject {
  /** When the event was first observed (MicroTime). */
  eventTime: string
  /** Controller that emitted it, e.g. `example.com/appservice-operator`. */
  reportingController: string
  /** Instance of that controller, e.g. its pod name. */
  reportingInstance: string
  /** What the controller did or failed to do, e.g. `Reconcile`. */
  action: string
  /** Why, in CamelCase, e.g. `DatabaseProvisioned`. */
  reason: string
  /** The object the event is about. */
  regarding: ObjectReference
  /** A second object involved, if any. */
  related?: ObjectReference | undefined
  /** Human-readable description (at most 1 KB). */
  note?: string | undefined
  /** `Normal` or `Warning`. */
  type: 'Normal' | 'Warning'
  /** Set when the same event repeats: how often, and when last. */
  series?: { count: number; lastObservedTime: string } | undefined
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
