/**
 * @module merged-source — several informers seen as one event source (one per watched namespace).
 */

import type { EventHandler, HandlerRegistration } from '../cache/listener.ts'
import type { KubeObject } from '../core/types.ts'
import type { EventSource } from './controller.ts'

/**
 * Fans a handler out to every source; the registration is synced when all are (`whenSynced`
 * resolves once every source's registration has, and rejects as soon as one rejects).
 * Used when an operator watches a list of namespaces instead of the whole cluster.
 */
export function mergeSources<T extends KubeObject>(sources: readonly EventSource<T>[]): EventSource<T> {
  return {
    describe: sources.map((s) => s.describe).join(' + '),
    addEventHandler(handler: EventHandler<T>): HandlerRegistration {
      const regs = sources.map((s) => s.addEventHandler(handler))
      return {
        hasSynced: () => regs.every((r) => r.hasSynced()),
        whenSynced: async (signal) => {
          await Promise.all(regs.map((r) => r.whenSynced(signal)))
        },
        get pending() {
          return regs.reduce((n, r) => n + r.pending, 0)
        },
        remove: () => {
          for (const r of regs) r.remove()
        },
      }
    },
  }
}
