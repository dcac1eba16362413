/**
 * @module garbage-collector — kube-controller-manager's garbage collector in the model: dependents of
 * a removed owner are deleted (background), dependents of an owner deleted in the foreground go
 * first, and `orphan` dependents lose their owner reference.
 */
import type { Clock } from '../../core/clock.ts'
import type { KubeObject } from '../../core/types.ts'
import type { ObjectStore, StoreEvent } from './object-store.ts'
import { FOREGROUND, ORPHAN } from './update-rules.ts'

/** Virtual delay between a change and the collector acting on it: 100 ms, a busy kube-controller-manager's typical lag behind its informers. */
export const GC_DELAY_MS = 100

const GC_MANAGER = 'generic-garbage-collector'

/**
 * Runs the collector on `store`: after any DELETED event or a deletionTimestamp, one pass
 * {@link GC_DELAY_MS} later (several changes share one pass). Returns the function that stops it.
 */
export function startGarbageCollector(store: ObjectStore, clock: Clock): () => void {
  let pending: (() => void) | undefined
  const unsubscribe = store.subscribe((e: StoreEvent) => {
    if (pending) return
    if (e.type !== 'DELETED' && !e.object.metadata.deletionTimestamp) return
    pending = clock.setTimer(() => {
      pending = undefined
      collect(store, clock)
    }, GC_DELAY_MS)
  })
  return () => {
    pending?.()
    unsubscribe()
  }
}

/** One pass of the collector. */
export function collect(store: ObjectStore, clock: Clock): void {
  const byUid = new Map<string, [string, KubeObject]>()
  for (const [c, o] of store.all()) if (o.metadata.uid) byUid.set(o.metadata.uid, [c, o])
  const ctx = { manager: GC_MANAGER, now: clock.now() }
  for (const [c, o] of [...store.all()]) {
    const refs = o.metadata.ownerReferences ?? []
    if (refs.length === 0 || o.metadata.deletionTimestamp) continue
    const owners = refs.map((r) => byUid.get(r.uid))
    const ns = o.metadata.namespace
    const name = o.metadata.name ?? ''
    if (owners.some((w) => w?.[1].metadata.finalizers?.includes(ORPHAN))) {
      const keep = refs.filter((_, i) => !owners[i]?.[1].metadata.finalizers?.includes(ORPHAN))
      const next = { ...o, metadata: { ...o.metadata, ownerReferences: keep } }
      store.update(c, ns, name, next, undefined, ctx)
      continue
    }
    // Background: every owner gone. Foreground: an owner being deleted in the foreground.
    const gone = owners.every((w) => w === undefined)
    const foreground = owners.some((w) => w?.[1].metadata.finalizers?.includes(FOREGROUND))
    if (gone || foreground) store.delete(c, ns, name, { propagationPolicy: 'Background' }, ctx)
  }
  // Owners waiting on their dependents: done when none is left.
  for (const [c, o] of [...store.all()]) {
    const fin = o.metadata.finalizers ?? []
    if (!o.metadata.deletionTimestamp || !(fin.includes(FOREGROUND) || fin.includes(ORPHAN))) continue
    const uid = o.metadata.uid
    let blocked = false
    for (const [, d] of store.all())
      if (
        d.metadata.ownerReferences?.some(
          (r) => r.uid === uid && (fin.includes(ORPHAN) || r.blockOwnerDeletion),
        )
      )
        blocked = true
    if (blocked) continue
    const next = {
      ...o,
      metadata: { ...o.metadata, finalizers: fin.filter((f) => f !== FOREGROUND && f !== ORPHAN) },
    }
    store.update(c, o.metadata.namespace, o.metadata.name ?? '', next, undefined, ctx)
  }
}
