/**
 * @module informers — helpers for informer integration tests.
 */
import { type InformerOptions, SharedInformer } from '../../src/cache/informer.ts'
import type { EventHandler } from '../../src/cache/listener.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { listerWatcher, type Selectors } from '../../src/watch/lister-watcher.ts'
import { assertPlain, storeOptions } from './stores.ts'

/** A running informer plus a model of the cache rebuilt only from its notifications. */
export interface WatchedInformer {
  informer: SharedInformer
  /** key → resourceVersion, maintained from add/update/delete notifications alone. */
  seen: Map<string, string>
  deletes: string[]
  stop(): Promise<void>
}

/** Starts an informer on `type` in `namespace` and records what its handler is told. */
export function watchInformer(
  client: KubeClient,
  type: ResourceType,
  namespace: string | undefined,
  options: InformerOptions<KubeObject> = {},
  selectors: Selectors = {},
): WatchedInformer {
  // The running test's store (see stores.ts); a compact store gets bytes off the wire, as the factory does.
  const o = { ...storeOptions(), ...options }
  const keepBytes = o.store === 'compact' && (o.stripManagedFields ?? true)
  const informer = new SharedInformer(
    listerWatcher(client.resource(type, namespace), selectors, keepBytes ? { keepBytes } : {}),
    o,
  )
  const seen = new Map<string, string>()
  const deletes: string[] = []
  const key = (o: KubeObject) => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`
  const handler: EventHandler = {
    onAdd: (o) => assertPlain(o) ?? void seen.set(key(o), o.metadata.resourceVersion ?? ''),
    onUpdate: (a, b) => assertPlain(a, b) ?? void seen.set(key(b), b.metadata.resourceVersion ?? ''),
    onDelete: (o) => {
      assertPlain(o)
      seen.delete(key(o))
      deletes.push(key(o))
    },
  }
  informer.addEventHandler(handler)
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  return {
    informer,
    seen,
    deletes,
    async stop() {
      ac.abort()
      await done
    },
  }
}

/** key → resourceVersion of a fresh list, for comparing a cache with the server. */
export async function serverState(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for await (const page of client.resource(type, namespace).listPages({ limit: 500 })) {
    for (const o of page.items) out.set(`${namespace}/${o.metadata.name}`, o.metadata.resourceVersion ?? '')
  }
  return out
}
