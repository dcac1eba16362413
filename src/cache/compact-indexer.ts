/**
 * @module compact-indexer — a store that keeps each object as its wire bytes and decodes on demand.
 *
 * Each entry is a {@link EncodedObject}: the object's bytes (JSON of a custom resource, or protobuf of a
 * built-in type) with `managedFields` cut, and the scanned metadata the cache needs for keys, relist
 * diffs and metadata indexes. Reads (`get`, `list`, `byIndex`, `listNamespace`) and handler delivery
 * decode into the same plain objects the eager store holds, deep-frozen unless told otherwise, through
 * a small cache of recently decoded objects. An object given as a plain object is kept as its JSON
 * encoding.
 */
import { jsonCodec } from '../codec/json-codec.ts'
import { type EncodedObject, encodedObject, isEncodedObject, materialize } from '../core/encoded-object.ts'
import { type KubeObject, type ObjectKey, objectKey } from '../core/types.ts'
import type { CacheStore } from './cache-store.ts'
import { IndexTable } from './index-table.ts'
import { type IndexFunc, NAMESPACE_INDEX, namespaceIndexFunc } from './store.ts'
import { deepFreeze } from './transforms.ts'

/**
 * Decoded objects kept by a compact store: 64. Enough for the bursts that read one object several
 * times close together (every handler of one notification, the reconcile that follows it reading the
 * object and its owner, an update's old and new state); small enough that the cache costs at most a few
 * hundred KB for objects of a few KB, so memory stays bytes-sized. A miss costs one decode.
 */
export const DECODED_CACHE_SIZE = 64

/** Options of {@link CompactIndexer}. */
export interface CompactIndexerOptions<T extends KubeObject> {
  /** Secondary indexes by name (the namespace index is always there). */
  indexers?: Record<string, IndexFunc<T>>
  /** Deep-freeze decoded objects. Default true. */
  freeze?: boolean
  /** How many decoded objects to keep. Default 64 ({@link DECODED_CACHE_SIZE}). */
  decodedCacheSize?: number
}

const utf8 = new TextEncoder()

/** The stub of `obj` as it is, or of its JSON encoding. */
export function toEncodedObject<T extends KubeObject>(obj: T): EncodedObject {
  if (isEncodedObject(obj)) return obj
  const type = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
  }
  return encodedObject(utf8.encode(JSON.stringify(obj)), jsonCodec, type)
}

/**
 * An {@link Indexer} over {@link EncodedObject} stubs. Index functions marked `reads: 'metadata'` (the
 * namespace, controller-uid, owner-uid and label indexes) run on the stub; any other decodes.
 * Guarantees: every read returns objects deep-equal to what the eager store would hold for the same
 * input, frozen when `freeze` is on; a read may return a fresh copy of an object it returned before
 * (identity is kept only while the object is among the recently decoded).
 */
export class CompactIndexer<T extends KubeObject = KubeObject> implements CacheStore<T> {
  readonly #items = new Map<ObjectKey, EncodedObject>()
  readonly #table: IndexTable<EncodedObject>
  /** Recently decoded objects by stub, least recently used first. */
  readonly #decoded = new Map<EncodedObject, T>()
  readonly #max: number
  readonly #freeze: boolean

  /** An empty store with the namespace index plus `o.indexers`. */
  constructor(o: CompactIndexerOptions<T> = {}) {
    this.#freeze = o.freeze ?? true
    this.#max = o.decodedCacheSize ?? DECODED_CACHE_SIZE
    this.#table = new IndexTable<EncodedObject>((fn, stub) =>
      fn.reads === 'metadata' ? fn(stub) : fn(this.resolve(stub as unknown as T) as unknown as EncodedObject),
    )
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc as IndexFunc<T>, ...o.indexers })
  }

  /** How many objects the store holds. */
  get size(): number {
    return this.#items.size
  }

  /** The decoded object of a stub (or the object itself when it is not one), through the decoded cache. */
  resolve(entry: T): T {
    if (!isEncodedObject(entry)) return entry
    const hit = this.#decoded.get(entry)
    if (hit) {
      this.#decoded.delete(entry)
      this.#decoded.set(entry, hit)
      return hit
    }
    const obj = materialize(entry) as T
    this.#remember(entry, this.#freeze ? deepFreeze(obj) : obj)
    return obj
  }

  #remember(stub: EncodedObject, obj: T): void {
    if (this.#max <= 0) return
    this.#decoded.set(stub, obj)
    if (this.#decoded.size > this.#max) this.#decoded.delete(this.#decoded.keys().next().value!)
  }

  /** The object under `key`, decoded, or undefined. */
  get(key: ObjectKey): T | undefined {
    const stub = this.#items.get(key)
    return stub && this.resolve(stub as unknown as T)
  }

  /** Every object, decoded, in no particular order. */
  list(): T[] {
    return this.#resolveAll([...this.#items.values()])
  }

  /** Every key, in no particular order. */
  keys(): ObjectKey[] {
    return [...this.#items.keys()]
  }

  /** Objects whose `index` values include `value`, decoded; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  byIndex(index: string, value: string): T[] {
    return this.#resolveAll(this.indexKeys(index, value).map((k) => this.#items.get(k)!))
  }

  /** Keys of the objects whose `index` values include `value`; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  indexKeys(index: string, value: string): ObjectKey[] {
    return this.#table.keys(index, value)
  }

  /** Every value `index` currently holds; throws `EDGEOP_ERR_INVALID` for an unknown index. */
  indexValues(index: string): string[] {
    return this.#table.values(index)
  }

  /** Objects of one namespace, decoded, through the namespace index. */
  listNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace)
  }

  /** Adds indexes and indexes the objects already stored; a name in use throws `EDGEOP_ERR_INVALID` and adds nothing. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    this.#table.add(indexers as unknown as Record<string, IndexFunc<EncodedObject>>, this.#items)
  }

  /**
   * Inserts or replaces `obj` (a stub, or a plain object kept as its JSON encoding); returns the
   * previous stub. A plain object is remembered as the decoded form of its stub.
   */
  upsert(obj: T): T | undefined {
    const stub = toEncodedObject(obj)
    if (stub !== (obj as KubeObject)) this.#remember(stub, this.#freeze ? deepFreeze(obj) : obj)
    const key = objectKey(stub)
    const old = this.#items.get(key)
    if (old) this.#table.unindex(key, old)
    this.#items.set(key, stub)
    this.#table.index(key, stub)
    return old as unknown as T | undefined
  }

  /** Removes by key; returns the removed stub. */
  remove(key: ObjectKey): T | undefined {
    const old = this.#items.get(key)
    if (!old) return undefined
    this.#table.unindex(key, old)
    this.#items.delete(key)
    return old as unknown as T
  }

  /** The stub under `key`. */
  entry(key: ObjectKey): T | undefined {
    return this.#items.get(key) as unknown as T | undefined
  }

  /** Every stub. */
  entries(): T[] {
    return [...this.#items.values()] as unknown as T[]
  }

  #resolveAll(stubs: EncodedObject[]): T[] {
    return stubs.map((s) => this.resolve(s as unknown as T))
  }
}
