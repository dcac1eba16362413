/**
 * @module cache-store — what the informer writes to, whichever store keeps the objects.
 */
import type { KubeObject, ObjectKey } from '../core/types.ts'
import type { Indexer } from './store.ts'

/**
 * What the informer writes to: an {@link Indexer} plus its entries as stored (the objects
 * themselves in the eager store, stubs of their bytes in the compact store) and the way from an entry
 * to the object handlers get. Notifications carry entries and are resolved at delivery, so a handler's
 * backlog holds what the store holds.
 */
export interface CacheStore<T extends KubeObject = KubeObject> extends Indexer<T> {
  /** Inserts or replaces; returns the previous entry. */
  upsert(obj: T): T | undefined
  /** Removes by key; returns the removed entry. */
  remove(key: ObjectKey): T | undefined
  /** The entry under `key` (its metadata is the object's). */
  entry(key: ObjectKey): T | undefined
  /** Every entry. */
  entries(): T[]
  /** The object an entry stands for, as handlers get it. */
  resolve(entry: T): T
}
