/**
 * @module store — objects by key, with secondary indexes (client-go `Indexer`).
 */
import type { KubeObject, ObjectKey } from '../core/types.ts'

/** Read access to a cache. Objects are shared and read-only (frozen unless the informer was told otherwise). */
export interface Store<T extends KubeObject = KubeObject> {
  /** The object under `namespace/name` (or `name`), or undefined. */
  get(key: ObjectKey): T | undefined
  /** Every object, in no particular order. */
  list(): T[]
  /** Every key, in no particular order. */
  keys(): ObjectKey[]
  /** How many objects the store holds. */
  readonly size: number
}

/**
 * Maps an object to the index values it is found under (any number). A function that reads only
 * `metadata` (name, namespace, uid, resourceVersion, generation, deletionTimestamp, labels,
 * annotations, ownerReferences) says so with `reads: 'metadata'` ({@link metadataIndexFunc}): the
 * compact store then runs it on the scanned metadata without decoding the object. Any other
 * function gets the whole decoded object.
 */
export type IndexFunc<T extends KubeObject = KubeObject> = ((obj: T) => readonly string[]) & {
  readonly reads?: 'metadata'
}

/** Marks `fn` as reading only the scanned metadata (see {@link IndexFunc}); returns it. */
export function metadataIndexFunc<T extends KubeObject = KubeObject>(
  fn: (obj: T) => readonly string[],
): IndexFunc<T> {
  return Object.assign(fn, { reads: 'metadata' as const })
}

/** A store with named secondary indexes. */
export interface Indexer<T extends KubeObject = KubeObject> extends Store<T> {
  /** Objects whose `index` values include `value`. Unknown index: error. */
  byIndex(index: string, value: string): T[]
  /** Keys of those objects. */
  indexKeys(index: string, value: string): ObjectKey[]
  /** Every value the index currently holds. */
  indexValues(index: string): string[]
  /** Objects of one namespace (uses the namespace index). */
  listNamespace(namespace: string): T[]
  /** Adds indexes; existing objects are indexed at once. A name already in use is an error. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void
}

/** Name of the built-in namespace index (client-go `NamespaceIndex`). */
export const NAMESPACE_INDEX = 'namespace'

/** The namespace index function: `[namespace]`, or none for cluster-scoped objects. */
export const namespaceIndexFunc: IndexFunc = metadataIndexFunc((obj) =>
  obj.metadata?.namespace ? [obj.metadata.namespace] : [],
)
