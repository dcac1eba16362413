/**
 * @module multi-namespace-informer — one collection watched in a list of namespaces, seen as one informer.
 *
 * An operator told to watch `--namespace=a,b` needs one list/watch per namespace (the
 * API has no "these namespaces" selector), yet its controller wants one event source and
 * one store. This joins the per-namespace informers: a handler is registered on each,
 * and a key is looked up in the informer of its namespace (controller-runtime's
 * `multiNamespaceCache` plays the same part behind `cache.Options.DefaultNamespaces`).
 */
import type { ResourceType } from '../client/resource.ts'
import { EdgeopError } from '../core/errors.ts'
import { type KubeObject, type ObjectKey, splitObjectKey } from '../core/types.ts'
import type { SharedInformer } from './informer.ts'
import { joinRegistrations } from './joined-registration.ts'
import type { EventHandler, HandlerRegistration } from './listener.ts'
import type { Store } from './store.ts'

/**
 * Informers of one collection in several namespaces (or one informer for all of them),
 * read as one. Guarantees: a handler sees every event of every namespace, in order per
 * namespace; its registration has synced only when every namespace's has; `store.get`
 * finds an object only in the informer of its own namespace.
 */
export class MultiNamespaceInformer<T extends KubeObject = KubeObject> {
  /** The informers, one per namespace; a single cluster-wide one when `namespaces` is empty. */
  readonly informers: readonly SharedInformer<T>[]
  /** The namespaces watched; empty: all of them. */
  readonly namespaces: readonly string[]
  /** Read access to every namespace's cache; keys are `namespace/name`. */
  readonly store: Store<T>
  readonly #byNamespace: ReadonlyMap<string, SharedInformer<T>>

  /**
   * `informers[i]` watches `namespaces[i]`; with `namespaces` empty, `informers` is the one
   * informer of the whole cluster. Throws `EDGEOP_ERR_INVALID` when the lengths disagree.
   */
  constructor(namespaces: readonly string[], informers: readonly SharedInformer<T>[]) {
    if (informers.length !== Math.max(namespaces.length, 1))
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `${informers.length} informers for ${namespaces.length} namespaces`,
        { step: 'join namespace informers' },
      )
    this.namespaces = namespaces
    this.informers = informers
    this.#byNamespace = new Map(namespaces.map((ns, i) => [ns, informers[i]!]))
    this.store = this.#joinedStore()
  }

  /** The resource it caches, when its informers know it. */
  get type(): ResourceType | undefined {
    return this.informers[0]?.type
  }

  /** Names the collections, e.g. `deployments in a + deployments in b`. */
  get describe(): string {
    return this.informers.map((i) => i.describe).join(' + ')
  }

  /** Every informer holds its first full state. */
  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced())
  }

  /** Registers `handler` on every informer (`acceptRestored`: see {@link SharedInformer.addEventHandler}); one registration removes, counts and syncs them all. */
  addEventHandler(handler: EventHandler<T>, options?: { acceptRestored?: boolean }): HandlerRegistration {
    return joinRegistrations(this.informers.map((i) => i.addEventHandler(handler, options)))
  }

  /** The informer that caches `namespace`; undefined when it is not watched. */
  informerFor(namespace: string | undefined): SharedInformer<T> | undefined {
    if (this.namespaces.length === 0) return this.informers[0]
    return namespace === undefined ? undefined : this.#byNamespace.get(namespace)
  }

  #joinedStore(): Store<T> {
    const all = this.informers
    return {
      get: (key: ObjectKey) => this.informerFor(splitObjectKey(key).namespace)?.store.get(key),
      list: () => all.flatMap((i) => i.store.list()),
      keys: () => all.flatMap((i) => i.store.keys()),
      get size() {
        return all.reduce((n, i) => n + i.store.size, 0)
      },
    }
  }
}
