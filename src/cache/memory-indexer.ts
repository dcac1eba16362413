/**
 * @module memory-indexer — the eager store: decoded objects in a map, with their secondary indexes.
 */
import { type KubeObject, type ObjectKey, objectKey } from '../core/types.ts'
import type { CacheStore } from './cache-store.ts'
import { IndexTable } from './index-table.ts'
import { type IndexFunc, NAMESPACE_INDEX, namespaceIndexFunc } from './store.ts'

/**
 * The in-memory indexer behind every informer with the eager store. Writes are the informer's;
 * everyone else reads. Index buckets are updated on every write.
 */
export class MemoryIndexer<T extends KubeObject = KubeObject> implements CacheStore<T> {
  readonly #items = new Map<ObjectKey, T>()
  readonly #table: IndexTable<T>

  /** An empty store with the namespace index plus `indexers`. */
  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.#table = new IndexTable<T>((fn, obj) => fn(obj))
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
    return this.#table.keys(index, value)
  }

  /** Every value `index` currently holds; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  indexValues(index: string): string[] {
    return this.#table.values(index)
  }

  /** Objects of one namespace, through the namespace index. */
  listNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace)
  }

  /** Adds indexes and indexes the objects already stored; a name in use throws `EDGEOP_ERR_INVALID` and adds nothing. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.#table.add(indexers, this.#items)
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj)
    const old = this.#items.get(key)
    if (old) this.#table.unindex(key, old)
    this.#items.set(key, obj)
    this.#table.index(key, obj)
    return old
  }

  /** Removes by key; returns the removed object. */
  remove(key: ObjectKey): T | undefined {
    const old = this.#items.get(key)
    if (!old) return undefined
    this.#table.unindex(key, old)
    this.#items.delete(key)
    return old
  }

  /** The stored entries are the objects themselves. */
  entry(key: ObjectKey): T | undefined {
    return this.#items.get(key)
  }

  /** Every stored entry. */
  entries(): T[] {
    return this.list()
  }

  /** An entry is already the object. */
  resolve(entry: T): T {
    return entry
  }
}
