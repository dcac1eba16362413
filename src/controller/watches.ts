/**
 * @module watches — what a controller watches (its primary, the objects it owns, related objects) and how
 * their events become request keys.
 */
import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import type { SpanContext } from '../tracing/trace-context.ts'
import { type Predicate, passes, readsMetadata } from './predicates.ts'
import { type ReconcileRequest, requestKey } from './reconciler.ts'

/** Anything that delivers object events (a `SharedInformer` does). */
export interface EventSource<T extends KubeObject = KubeObject> {
  /** Names the source in logs, e.g. `configmaps in shop`. */
  readonly describe: string
  /** The resource whose objects it delivers, when it knows (an informer of the factory does). */
  readonly type?: PrimaryIdentity | undefined
  /**
   * Registers `handler`; the registration reports when the handler has processed the source's
   * initial state ({@link HandlerRegistration.whenSynced}): the server's state, or with
   * `acceptRestored` already a restored cache snapshot (see the cache's `SyncState`).
   */
  addEventHandler(handler: EventHandler<T>, options?: HandlerOptions): HandlerRegistration
}

/** How a handler is registered on an {@link EventSource}. */
export interface HandlerOptions {
  /** The registration syncs on a restored cache snapshot, before the watch caught up with the server. */
  acceptRestored?: boolean
}

/** What owner references of the primary are matched on: its kind, group and scope. */
export interface PrimaryIdentity {
  /** Kind, e.g. `ConfigMap`; a resource type may leave it out. */
  kind?: string | undefined
  /** API group, `''` for core. */
  group: string
  /** Whether its objects are namespaced. */
  namespaced: boolean
}

/**
 * The primary resource: its events enqueue its own key. `kind`, `group` and `namespaced` default to the
 * source's resource type (an informer from the factory carries it); a source that does not know its type
 * needs them when the controller `owns` anything (`EDGEOP_ERR_INVALID` otherwise).
 */
export interface PrimaryWatch<T extends KubeObject = KubeObject> {
  /** Where the primary objects' events come from. */
  source: EventSource<T>
  /** Kind of the primary, e.g. `ConfigMap` (owner references are matched on it). Default: the source's. */
  kind?: string | undefined
  /** API group of the primary, `''` for core (owner references are matched on it). Default: the source's. */
  group?: string | undefined
  /** Whether the primary is namespaced (owned objects map to `namespace/name` or `name`). Default: the source's. */
  namespaced?: boolean | undefined
  /** Events pass only when every predicate passes. */
  predicates?: Predicate<T>[] | undefined
}

/** Objects mapped to their controlling owner of the primary kind through `ownerReferences`. */
export interface OwnedWatch<T extends KubeObject = KubeObject> {
  /** Where the owned objects' events come from. */
  source: EventSource<T>
  /** Events pass only when every predicate passes. */
  predicates?: Predicate<T>[] | undefined
}

/** Arbitrary related objects mapped to requests by a function; `T` is the source's object type. */
export interface MappedWatch<T extends KubeObject = KubeObject> {
  /** Where the related objects' events come from. */
  source: EventSource<T>
  /** The requests an event on `obj` (and, on update, on its old state) enqueues. */
  map(obj: T): ReconcileRequest[]
  /**
   * `metadata`: `map` reads only `apiVersion`, `kind` and the metadata a compact store scans (see
   * `EventHandler.reads`), so with metadata predicates the watch's events are delivered undecoded.
   */
  reads?: 'metadata'
  /** Events pass only when every predicate passes. */
  predicates?: Predicate<T>[] | undefined
}

/**
 * The kind, group and scope of `primary`: its own, else its source's resource type. Throws
 * `EDGEOP_ERR_INVALID` naming controller `name` when neither gives a kind.
 */
export function primaryIdentity(name: string, primary: PrimaryWatch): Required<PrimaryIdentity> {
  const type = primary.source.type
  const kind = primary.kind ?? type?.kind
  const group = primary.group ?? type?.group
  const namespaced = primary.namespaced ?? type?.namespaced
  if (kind === undefined || group === undefined || namespaced === undefined)
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `controller ${JSON.stringify(name)}: for needs kind, group and namespaced`,
      {
        step: 'create controller',
      },
    )
  return { kind, group, namespaced }
}

/** How one watch's events become keys. */
export interface KeyMapping {
  /** Events pass only when every predicate passes. */
  predicates: Predicate[] | undefined
  /** The keys an event on `obj` enqueues (undefined: none). */
  keys(obj: KubeObject): (string | undefined)[]
  /** The primary watch sees each event first (`deleted` for a delete) and returns true when it handled it. */
  primary?(old: KubeObject | undefined, obj: KubeObject, deleted?: boolean): boolean
  /**
   * A change of this watch's objects re-arms the parked keys it maps to (owned and mapped watches:
   * a child deleted, a source relabelled may be what the failure waited for). A resync (an update
   * with the same resourceVersion) is no change.
   */
  rearms?: boolean
  /** `metadata`: `keys` and `primary` read only the scanned metadata (see `EventHandler.reads`). */
  reads?: 'metadata'
}

/** Where the keys go. */
export interface KeySink {
  /**
   * Queues `key` (an undefined key is not queued; a parked one only when `rearm`, which re-arms it);
   * `writer` is the span that wrote the object.
   */
  enqueue(key: string | undefined, writer?: SpanContext, rearm?: boolean): void
  /** The writer's span an event names, when the controller traces (it reads annotations only). */
  writer(obj: KubeObject, old?: KubeObject): SpanContext | undefined
}

/**
 * The event handler of one watch: each event's object (and, on update, its old state) mapped to keys,
 * after predicates. On update, a key the old state mapped to and the new one does not is enqueued too:
 * an owner or mapping may have changed, and the old one must learn (controller-runtime). When the
 * mapping and every predicate read only metadata, so does the handler: a compact store then delivers its
 * entries without decoding them.
 */
export function keyHandler(mapping: KeyMapping, sink: KeySink): EventHandler {
  const preds = mapping.predicates ?? []
  const { keys, primary } = mapping
  // An add, a delete, or an update to a new version (a resync re-delivers the same one).
  const rearms = (old: KubeObject | undefined, obj: KubeObject): boolean =>
    mapping.rearms === true && (!old || old.metadata.resourceVersion !== obj.metadata.resourceVersion)
  const add = (obj: KubeObject, old?: KubeObject): void => {
    const writer = sink.writer(obj, old)
    for (const k of keys(obj)) sink.enqueue(k, writer, rearms(old, obj))
  }
  return {
    ...(mapping.reads === 'metadata' && readsMetadata(preds) ? { reads: 'metadata' as const } : {}),
    onAdd: (obj) => {
      if (!primary?.(undefined, obj) && passes(preds, 'create', obj)) add(obj)
    },
    onUpdate: (old, obj) => {
      if (primary?.(old, obj) || !passes(preds, 'update', old, obj)) return
      add(obj, old)
      for (const k of keys(old)) if (!keys(obj).includes(k)) sink.enqueue(k, undefined, rearms(old, obj))
    },
    onDelete: (obj) => {
      if (!primary?.(undefined, obj, true) && passes(preds, 'delete', obj)) add(obj)
    },
  }
}

/** The key of a primary object: `namespace/name` or `name`. */
export function primaryKey(obj: KubeObject): string {
  return requestKey({ namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' })
}

/** The key of `obj`'s controlling owner if it is of the primary kind. */
export function ownerKey(primary: Required<PrimaryIdentity>, obj: KubeObject): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) => r.controller)
  if (!ref || ref.kind !== primary.kind) return undefined
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.lastIndexOf('/')) : ''
  if (group !== primary.group) return undefined
  return requestKey({ namespace: primary.namespaced ? obj.metadata.namespace : undefined, name: ref.name })
}
