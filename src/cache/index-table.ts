/**
 * @module index-table — named secondary indexes over keyed objects, shared by both stores.
 */
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject, ObjectKey } from '../core/types.ts'
import type { IndexFunc } from './store.ts'

/** Named indexes over keyed objects: index name → value → keys. */
export class IndexTable<T extends KubeObject> {
  readonly #fns = new Map<string, IndexFunc<T>>()
  readonly #indices = new Map<string, Map<string, Set<ObjectKey>>>()
  readonly #evaluate: (fn: IndexFunc<T>, obj: T) => readonly string[]

  /** `evaluate` runs an index function on a stored object (the compact store decodes when the function needs it). */
  constructor(evaluate: (fn: IndexFunc<T>, obj: T) => readonly string[]) {
    this.#evaluate = evaluate
  }

  /** Adds indexes over `items`; a name in use throws `EDGEOP_ERR_INVALID` and adds nothing. */
  add(indexers: Record<string, IndexFunc<T>>, items: ReadonlyMap<ObjectKey, T>): void {
    for (const name of Object.keys(indexers)) {
      if (this.#fns.has(name))
        throw new EdgeopError('EDGEOP_ERR_INVALID', `index ${JSON.stringify(name)} already exists`, {
          step: 'add indexers',
        })
    }
    for (const [name, fn] of Object.entries(indexers)) {
      this.#fns.set(name, fn)
      const idx = new Map<string, Set<ObjectKey>>()
      this.#indices.set(name, idx)
      for (const [key, obj] of items) for (const v of this.#evaluate(fn, obj)) bucket(idx, v).add(key)
    }
  }

  #index(name: string): Map<string, Set<ObjectKey>> {
    const idx = this.#indices.get(name)
    if (!idx)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `index ${JSON.stringify(name)} does not exist`, {
        step: 'cache index lookup',
      })
    return idx
  }

  /** Keys under `value` of index `name`. */
  keys(name: string, value: string): ObjectKey[] {
    return [...(this.#index(name).get(value) ?? [])]
  }

  /** Values index `name` holds. */
  values(name: string): string[] {
    return [...this.#index(name).keys()]
  }

  /** Indexes `obj` under `key` in every index. */
  index(key: ObjectKey, obj: T): void {
    for (const [name, fn] of this.#fns) {
      const idx = this.#indices.get(name)!
      for (const v of this.#evaluate(fn, obj)) bucket(idx, v).add(key)
    }
  }

  /** Removes `key` from the buckets `obj` is indexed under. */
  unindex(key: ObjectKey, obj: T): void {
    for (const [name, fn] of this.#fns) {
      const idx = this.#indices.get(name)!
      for (const v of this.#evaluate(fn, obj)) {
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
