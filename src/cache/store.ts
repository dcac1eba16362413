/**
 * @module store — objects by key, with secondary indexes (client-go `Indexer`).
 */
import { EdgeopError } from '../core/errors.ts'
import { type KubeObject, type ObjectKey, objectKey } from '../core/types.ts'

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

/** Maps an object to the index values it is found under (any number). */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => readonly string[]

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
export const namespaceIndexFunc: IndexFunc = (obj) =>
  obj.metadata?.namespace ? [obj.metadata.namespace] : []

/**
 * The in-memory indexer behind every informer. Writes are the informer's; everyone
 * else reads. Index buckets are updated on every write.
 */
export class MemoryIndexer<T extends KubeObject = KubeObject> implements Indexer<T> {
  readonly #items = new Map<ObjectKey, T>()
  readonly #indexers = new Map<string, IndexFunc<T>>()
  /** index name → value → keys */
  readonly #indices = new Map<string, Map<string, Set<ObjectKey>>>()

  /** An empty store with the namespace index plus `indexers`. */
  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc as IndexFunc<T>, ...indexers })
  }

  /** How many objects the store holds. */
  get size(): number {
    return this.#items.size
  }

  /** The object under `key`, or undefined. */
  get(key: ObjectKey): T | undefined {
    return this.#items.get(key)
  }

  /** Every object, in no particular order. */
  list(): T[] {
    return [...this.#items.values()]
  }

  /** Every key, in no particular order. */
  keys(): ObjectKey[] {
    return [...this.#items.keys()]
  }

  /** Objects whose `index` values include `value`; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  byIndex(index: string, value: string): T[] {
    return this.indexKeys(index, value).map((k) => this.#items.get(k)!)
  }

  /** Keys of the objects whose `index` values include `value`; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  indexKeys(index: string, value: string): ObjectKey[] {
    const idx = this.#indices.get(index)
    if (!idx)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `index ${JSON.stringify(index)} does not exist`, {
        step: 'cache index lookup',
      })
    return [...(idx.get(value) ?? [])]
  }

  /** Every value `index` currently holds; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  indexValues(index: string): string[] {
    const idx = this.#indices.get(index)
    if (!idx)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `index ${JSON.stringify(index)} does not exist`, {
        step: 'cache index lookup',
      })
    return [...idx.keys()]
  }

  /** Objects of one namespace, through the namespace index. */
  listNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace)
  }

  /** Adds indexes and indexes the objects already stored; a name in use throws `EDGEOP_ERR_INVALID` and adds nothing. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const name of Object.keys(indexers)) {
      if (this.#indexers.has(name))
        throw new EdgeopError('EDGEOP_ERR_INVALID', `index ${JSON.stringify(name)} already exists`, {
          step: 'add indexers',
        })
    }
    for (const [name, fn] of Object.entries(indexers)) {
      this.#indexers.set(name, fn)
      const idx = new Map<string, Set<ObjectKey>>()
      this.#indices.set(name, idx)
      for (const [key, obj] of this.#items) for (const v of fn(obj)) bucket(idx, v).add(key)
    }
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj)
    const old = this.#items.get(key)
    if (old) this.#unindex(key, old)
    this.#items.set(key, obj)
    this.#index(key, obj)
    return old
  }

  /** Removes by key; returns the removed object. */
  remove(key: ObjectKey): T | undefined {
    const old = this.#items.get(key)
    if (!old) return undefined
    this.#unindex(key, old)
    this.#items.delete(key)
    return old
  }

  #index(key: ObjectKey, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const idx = this.#indices.get(name)!
      for (const v of fn(obj)) bucket(idx, v).add(key)
    }
  }

  #unindex(key: ObjectKey, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const idx = this.#indices.get(name)!
      for (const v of fn(obj)) {
        const b = idx.get(v)
        if (!b) continue
        b.delete(key)
        if (b.size === 0) idx.delete(v)
      }
    }
  }
}

function bucket(idx: Map<string, Set<ObjectKey>>, value: string): Set<ObjectKey> {
  let b = idx.get(value)
  if (!b) {
    b = new Set()
    idx.set(value, b)
  }
  return b
}
