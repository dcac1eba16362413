/**
 * @module joined-registration — several handler registrations seen as one (one handler added to
 * several informers, e.g. one per watched namespace).
 */
import type { HandlerRegistration } from './listener.ts'

/**
 * One registration over `regs`: synced when all are (`whenSynced` resolves once every one has, and
 * rejects as soon as one rejects), `pending` is their sum, and `remove` removes them all.
 */
export function joinRegistrations(regs: readonly HandlerRegistration[]): HandlerRegistration {
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
}
