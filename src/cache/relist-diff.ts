/**
 * @module relist-diff — what a fresh list changes in a cache: tombstone deletes, adds, real updates.
 *
 * A pure function of (cached contents, listed objects). The informer applies its deltas
 * to the store in order and notifies handlers; nothing here touches the store.
 */
import { type KubeObject, type ObjectKey, objectKey } from '../core/types.ts'
import type { Store } from './store.ts'

/**
 * One change a relist makes to a cache.
 *
 * - `delete`: cached but not listed; `obj` is the last state the cache saw, possibly
 *   stale (a tombstone, client-go `DeletedFinalStateUnknown`).
 * - `add`: listed but not cached.
 * - `update`: cached with another resourceVersion.
 * - `unchanged`: cached with the same resourceVersion. The listed object still replaces
 *   the cached one, but handlers are not told (kubernetes/kubernetes#87957); only resync re-delivers it.
 */
export type RelistDelta<T extends KubeObject> =
  | { kind: 'delete'; key: ObjectKey; obj: T }
  | { kind: 'add'; key: ObjectKey; obj: T }
  | { kind: 'update'; key: ObjectKey; old: T; obj: T }
  | { kind: 'unchanged'; key: ObjectKey; old: T; obj: T }

/**
 * The deltas that turn `cached` into `listed`: every delete first (in `cached.keys()`
 * order), then one delta per listed object in list order.
 *
 * Guarantees: applying the deltas in order (remove on `delete`, insert or replace
 * otherwise) leaves the store holding exactly the listed objects; `cached` is only read.
 * A key listed twice (the apiserver never does this) compares its second occurrence
 * with its first, as sequential upserts would.
 */
export function relistDiff<T extends KubeObject>(
  cached: Pick<Store<T>, 'get' | 'keys'>,
  listed: readonly T[],
): RelistDelta<T>[] {
  const deltas: RelistDelta<T>[] = []
  const listedKeys = new Set<ObjectKey>()
  for (const obj of listed) listedKeys.add(objectKey(obj))
  for (const key of cached.keys()) {
    if (!listedKeys.has(key)) deltas.push({ kind: 'delete', key, obj: cached.get(key)! })
  }
  /** Objects already taken from this list, so a repeated key compares with its earlier occurrence. */
  const taken = new Map<ObjectKey, T>()
  for (const obj of listed) {
    const key = objectKey(obj)
    const old = taken.get(key) ?? cached.get(key)
    taken.set(key, obj)
    if (!old) deltas.push({ kind: 'add', key, obj })
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
      deltas.push({ kind: 'update', key, old, obj })
    else deltas.push({ kind: 'unchanged', key, old, obj })
  }
  return deltas
}
