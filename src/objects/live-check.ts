/**
 * @module live-check — confirms that a cached object is the live one before a side effect
 * the apiserver cannot guard.
 *
 * An informer's cache may lag the apiserver. For writes *to the API* that is harmless: they
 * are guarded by resourceVersion or are declarative, and the next event corrects them. A
 * write to a system outside Kubernetes has no such guard. The case that bites is a
 * fail-over: a standby keeps a warm cache (as controller-runtime does), its watch may be
 * reconnecting when it becomes leader, and it then acts on an older spec than its
 * predecessor did — re-creating an external entry the predecessor removed, or creating one
 * for an object that has already been deleted and whose finalizer has already run, which then
 * leaks for ever. The same class of defect: kuberay#715, scylla-operator#2492; KEP-5647
 * ("stale controller mitigation", Kubernetes 1.36) adds the same kind of check to
 * kube-controller-manager for a controller's own writes.
 *
 * {@link LiveCheck} reads the object from the API (a quorum read: no resourceVersion) and
 * compares resourceVersions by equality (they are opaque; only equality is meaningful to a
 * client). It remembers, per key, the resourceVersion last confirmed, so an unchanged cached
 * object costs one read per process, not one per reconcile. That memo is sound because a
 * process's cache only moves forward and no other replica acts while this one leads: once
 * `rv` was live during this process's leadership, every side effect since was computed from
 * `rv` or later. It is kept per process, so use one `LiveCheck` per leadership term (the
 * operator exits when it loses its Lease).
 */

import type { ResourceClient } from '../client/resource-client.ts'
import type { KubeObject } from '../core/types.ts'
import { isNotFound } from '../transport/api-error.ts'

/** What {@link LiveCheck.confirm} found. */
export interface LiveCheckOutcome<T> {
  /**
   * The version to act on: the object given when it is the live one, else the live object
   * as the API returned it (remembered, so it is trusted once the cache shows it), or
   * undefined when the object is gone. Never the cached object when the cache is behind.
   */
  object: T | undefined
  /**
   * True when the cache is behind the API. Acting on `object` is then what the cache will
   * ask for once it catches up; requeueing instead must reckon with predicates that may
   * drop the event bringing it up to date, and with a rate-limited backoff that grows for
   * as long as the cache stays behind.
   */
  behind: boolean
}

/** Confirms cached objects against the API; see the module comment for when it is needed. */
export class LiveCheck<T extends KubeObject> {
  readonly #confirmed = new Map<string, string>()

  /** Number of keys remembered (one per object confirmed and not yet forgotten). */
  get size(): number {
    return this.#confirmed.size
  }

  /**
   * Confirms `obj` (as the cache holds it, or as a write of ours just returned it): at once
   * when its resourceVersion was confirmed before, otherwise with one GET. The cache is
   * behind when the API holds another version, no object of that name, or a new object
   * with another UID. Other API errors reject.
   */
  async confirm(client: ResourceClient<T>, obj: T, signal?: AbortSignal): Promise<LiveCheckOutcome<T>> {
    const key = keyOf(obj)
    const rv = obj.metadata.resourceVersion
    if (rv !== undefined && this.#confirmed.get(key) === rv) return { object: obj, behind: false }
    let current: T
    try {
      current = await client.get(obj.metadata.name!, {
        namespace: obj.metadata.namespace,
        signal,
      })
    } catch (err) {
      if (!isNotFound(err)) throw err
      this.#confirmed.delete(key)
      return { object: undefined, behind: true }
    }
    this.remember(current)
    const same =
      rv !== undefined && current.metadata.resourceVersion === rv && current.metadata.uid === obj.metadata.uid
    return same ? { object: obj, behind: false } : { object: current, behind: true }
  }

  /**
   * Records that `obj` is live without reading it: for an object a write of ours has just
   * returned (that answer is, by definition, the live version).
   */
  remember(obj: T): void {
    const rv = obj.metadata.resourceVersion
    if (rv !== undefined) this.#confirmed.set(keyOf(obj), rv)
  }

  /** Forgets `namespace/name` (call when the object is gone, so the memo stays bounded). */
  forget(key: string): void {
    this.#confirmed.delete(key)
  }
}

function keyOf(obj: KubeObject): string {
  const { namespace, name } = obj.metadata
  return namespace ? `${namespace}/${name}` : `${name}`
}
