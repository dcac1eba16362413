/**
 * @module traffic — what went through the fault proxy: requests per second, by identity and by
 * shape, the ones a fault hit, and what the busiest seconds were made of.
 */
import type { FaultProxy, RequestRecord } from '../controlplane/fault-proxy.ts'
import { HOT_SECOND } from './settings.ts'

/** At most this many faulted requests are kept (for the report's stall details). */
const MAX_FAULTED = 5000
/** At most this many busy seconds are kept. */
const MAX_BUSY_SECONDS = 50
/** A second is summarised once it is this many seconds old (its late requests have arrived). */
const SECOND_SETTLE_S = 3

/** A request path with namespace and object names replaced by `*`. */
export function requestShape(path: string): string {
  return path
    .replace(/\/namespaces\/[^/]+/, '/namespaces/*')
    .replace(/\/(appservices|deployments|services|nodeconfigs|leases|events|nodes)\/[^/]+/, '/$1/*')
}

/** A second with at least {@link HOT_SECOND} requests, and its most frequent requests. */
export interface BusySecond {
  second: number
  requests: number
  top: string[]
}

/** The proxy traffic of one run, from its start. */
export class Traffic {
  /** Requests started in each second since the start. */
  readonly perSecond: number[] = []
  /** Requests by `operators`, `agents` or `other`. */
  readonly byIdentity: Record<string, number> = {}
  /** Requests a fault rule answered (the first {@link MAX_FAULTED}). */
  readonly faulted: RequestRecord[] = []
  /** When (ms since start) the apiserver itself answered an operator 403 (the first {@link MAX_FAULTED}). */
  readonly forbidden: number[] = []
  readonly busySeconds: BusySecond[] = []
  /** Requests by identity, verb and path shape. */
  readonly byShape = new Map<string, number>()
  readonly #start: number
  readonly #groups = new Map<number, Map<string, number>>()

  constructor(start: number) {
    this.#start = start
  }

  /** 403s the apiserver answered the operators from `fromMs` to `toMs` (ms since start, inclusive). */
  forbiddenBetween(fromMs: number, toMs: number): number {
    return this.forbidden.filter((t) => t >= fromMs && t <= toMs).length
  }

  /** Takes (and clears) the proxy's request log; `operatorUser` is the operators' identity. */
  harvest(proxy: FaultProxy, operatorUser: string): void {
    const recs = proxy.requests()
    proxy.clearLog()
    for (const r of recs) {
      const s = Math.floor((r.startedAt - this.#start) / 1000)
      while (this.perSecond.length <= s) this.perSecond.push(0)
      this.perSecond[s]!++
      const who = r.user?.startsWith('edgeop-agent:')
        ? 'agents'
        : r.user === operatorUser
          ? 'operators'
          : 'other'
      this.byIdentity[who] = (this.byIdentity[who] ?? 0) + 1
      if (r.fault !== undefined && this.faulted.length < MAX_FAULTED) this.faulted.push(r)
      if (
        r.fault === undefined &&
        r.status === 403 &&
        who === 'operators' &&
        this.forbidden.length < MAX_FAULTED
      )
        this.forbidden.push(r.startedAt - this.#start)
      const g = this.#groups.get(s) ?? new Map<string, number>()
      this.#groups.set(s, g)
      const key = `${who} ${r.method} ${requestShape(r.path)}${r.watch ? ' (watch)' : ''}`
      g.set(key, (g.get(key) ?? 0) + 1)
      this.byShape.set(key, (this.byShape.get(key) ?? 0) + 1)
    }
    // Keep what the busiest seconds were made of; forget ordinary seconds.
    const now = Math.floor((Date.now() - this.#start) / 1000)
    for (const [s, g] of this.#groups)
      if (s < now - SECOND_SETTLE_S) {
        if ((this.perSecond[s] ?? 0) >= HOT_SECOND && this.busySeconds.length < MAX_BUSY_SECONDS)
          this.busySeconds.push({
            second: s,
            requests: this.perSecond[s]!,
            top: [...g]
              .sort((x, y) => y[1] - x[1])
              .slice(0, 6)
              .map(([k, n]) => `${n} × ${k}`),
          })
        this.#groups.delete(s)
      }
  }
}
