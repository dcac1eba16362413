/**
 * @module merged-source — several informers seen as one event source (one per watched namespace).
 */

import { joinRegistrations } from '../cache/joined-registration.ts'
import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import type { KubeObject } from '../core/types.ts'
import type { EventSource, HandlerOptions } from './watches.ts'

/**
 * Fans a handler out to every source; the registrations are joined into one
 * (`joinRegistrations` in cache: synced when all are, removed together).
 * For one resource in a list of namespaces, `factory.multiNamespaceInformer` also joins the stores.
 */
export function mergeSources<T extends KubeObject>(sources: readonly EventSource<T>[]): EventSource<T> {
  return {
    describe: sources.map((s) => s.describe).join(' + '),
    addEventHandler(handler: EventHandler<T>, options?: HandlerOptions): HandlerRegistration {
      return joinRegistrations(sources.map((s) => s.addEventHandler(handler, options)))
    },
  }
}
