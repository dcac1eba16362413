/**
 * @module factory — one informer per collection, started together, synced together.
 */

import type { KubeClient } from '../client/kube-client.ts'
import type { ResourceType } from '../client/resource.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { listerWatcher, type Selectors } from '../watch/lister-watcher.ts'
import { type InformerOptions, SharedInformer } from './informer.ts'

/** What identifies an informer: resource, scope and selectors. */
export interface InformerSpec extends Selectors {
  type: ResourceType
  /** Undefined: all namespaces (or cluster-scoped). */
  namespace?: string
}

/** Default wait for caches to sync: 2 minutes (controller-runtime's CacheSyncTimeout). */
export const DEFAULT_SYNC_TIMEOUT_MS = 120_000

/**
 * Creates and deduplicates informers: asking twice for the same resource, scope and
 * selectors returns the same informer (one list/watch, many handlers).
 */
export class InformerFactory {
  readonly #client: KubeClient
  readonly #defaults: InformerOptions<KubeObject>
  readonly #informers = new Map<string, SharedInformer<KubeObject>>()
  readonly #specs = new Map<SharedInformer<KubeObject>, InformerSpec>()
  readonly #running = new Map<SharedInformer<KubeObject>, Promise<void>>()

  constructor(client: KubeClient, defaults: InformerOptions<KubeObject> = {}) {
    this.#client = client
    this.#defaults = defaults
  }

  /** The informer for `spec`, created on first request. Options apply only on creation. */
  informer<T extends KubeObject = KubeObject>(
    spec: InformerSpec,
    options: InformerOptions<T> = {},
  ): SharedInformer<T> {
    const key = specKey(spec)
    let inf = this.#informers.get(key)
    if (!inf) {
      const rc = this.#client.resource<T>(spec.type, spec.namespace)
      const created = new SharedInformer<T>(listerWatcher(rc, spec), {
        ...(this.#defaults as unknown as InformerOptions<T>),
        ...options,
      })
      inf = created as unknown as SharedInformer<KubeObject>
      this.#informers.set(key, inf)
      this.#specs.set(inf, spec)
    }
    return inf as unknown as SharedInformer<T>
  }

  /** Every informer created so far. */
  get informers(): SharedInformer<KubeObject>[] {
    return [...this.#informers.values()]
  }

  /** The resource types watched by the informers created so far, each once. */
  get types(): ResourceType[] {
    const seen = new Map<string, ResourceType>()
    for (const { type } of this.#specs.values())
      seen.set(`${type.group}/${type.version}/${type.resource}`, type)
    return [...seen.values()]
  }

  /** Starts every informer not yet running (call again after creating more). */
  start(signal: AbortSignal): void {
    for (const inf of this.#informers.values()) {
      if (this.#running.has(inf)) continue
      this.#running.set(inf, inf.run(signal))
    }
  }

  /** Resolves when every started informer finished (after the signal aborted). */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.#running.values())
  }

  /**
   * Waits until every informer has synced. Rejects with `EDGEOP_ERR_SYNC` naming the
   * informers that did not sync within `timeoutMs`, with their last error. When `signal`
   * aborts first it resolves without checking (the caller is stopping, not timing out).
   */
  async waitForSync(timeoutMs = DEFAULT_SYNC_TIMEOUT_MS, signal?: AbortSignal): Promise<void> {
    const deadline = AbortSignal.timeout(timeoutMs)
    const both = signal ? AbortSignal.any([signal, deadline]) : deadline
    const all = this.informers
    await Promise.all(all.map((i) => i.waitForSync(both)))
    if (signal?.aborted) return
    const missing = all.filter((i) => !i.hasSynced())
    if (missing.length === 0) return
    const what = missing.map((i) => {
      const h = i.health()
      return `${i.describe}${h.lastError ? ` (last error: ${h.lastError})` : ''}`
    })
    throw new EdgeopError(
      'EDGEOP_ERR_SYNC',
      `caches did not sync within ${timeoutMs} ms: ${what.join('; ')}`,
      {
        step: 'wait for cache sync',
        retryable: true,
      },
    )
  }
}

function specKey(s: InformerSpec): string {
  return JSON.stringify([
    s.type.group,
    s.type.version,
    s.type.resource,
    s.namespace ?? '',
    s.labelSelector ?? '',
    s.fieldSelector ?? '',
    !!s.metadataOnly,
  ])
}
