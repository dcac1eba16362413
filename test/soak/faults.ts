/**
 * @module faults — injects the fault schedule: proxy rules (drops, 429/5xx bursts, stalls), control
 * plane actions (compaction, apiserver restart), killing the leader, database outages, hung and slow
 * database answers, and revoking an RBAC rule of the operators; each injection becomes a
 * {@link FaultRecord}, and each fault that can hold an AppService up opens a window in
 * `ctx.windows` (fault-windows.ts).
 */
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import type { FaultHandle, FaultRule } from '../controlplane/fault-proxy.ts'
import type { SoakRun } from './context.ts'
import { allowanceMs } from './fault-windows.ts'
import type { Fleet, FleetProcess } from './fleet.ts'
import { sleep } from './pace.ts'
import type { Plane } from './plane.ts'
import { REVOKED_RULE, restoreOperatorRules, revokeOperatorRule } from './plane.ts'
import type { FaultRecord } from './results.ts'
import type { Rng } from './rng.ts'
import type { FaultEvent, StallTarget } from './schedule.ts'
import { MIN_SHARDED_REPLICAS, RULE_TTL_MS, SHARD_LABEL } from './settings.ts'

/** Kinds that only add a proxy rule: too many and too small to log one line each. */
const RULE_KINDS: readonly string[] = ['drop-all', 'drop-next', 'burst-429', 'burst-5xx', 'stall']
/** How often an armed db-timeout-after-commit looks whether its writes have come. */
const HANG_POLL_MS = 250
/** An RBAC change that fails (the apiserver restarting) is tried again this often … */
const RBAC_RETRY_MS = 500
/** … for this long (longer than an apiserver restart takes). */
const RBAC_RETRY_FOR_MS = 60_000
/** Sharded: a dead or removed member's objects are looked for this often … */
const TAKEOVER_POLL_MS = 500
/** … for at most this long (the 10 s Lease, a 2 s pass, an apiserver restart on the way). */
const TAKEOVER_WAIT_MS = 60_000

/** Plays a fault schedule against one run's plane and fleet. */
export class FaultInjector {
  readonly #ctx: SoakRun
  readonly #plane: Plane
  readonly #fleet: Fleet
  readonly #handles = new Map<FaultHandle, FaultRecord>()
  readonly #ruleTimers = new Set<NodeJS.Timeout>()
  readonly #inFlight = new Set<Promise<void>>()
  /** Sharded: which replica is killed or removed. */
  readonly #victims: Rng

  constructor(ctx: SoakRun, plane: Plane, fleet: Fleet) {
    this.#ctx = ctx
    this.#plane = plane
    this.#fleet = fleet
    this.#victims = ctx.rng.fork('replicas')
  }

  /** Starts each event of `plan` at `chaosStart + atMs` (ms since start), without waiting for it to end. */
  async play(plan: readonly FaultEvent[], chaosStart: number): Promise<void> {
    for (const ev of plan) {
      await sleep(chaosStart + ev.atMs - this.#ctx.rel())
      const run1 = this.inject(ev).finally(() => this.#inFlight.delete(run1))
      this.#inFlight.add(run1)
    }
  }

  /** Resolves when the injections started so far have ended. */
  idle(): Promise<unknown> {
    return Promise.all(this.#inFlight)
  }

  /** Injects one fault and records it; a failure to inject is recorded, not thrown. */
  async inject(ev: FaultEvent): Promise<void> {
    const { rel, log } = this.#ctx
    const rec: FaultRecord = {
      kind: ev.kind,
      scheduledMs: this.#ctx.chaosStart + ev.atMs,
      atMs: rel(),
      detail: '',
    }
    this.#ctx.records.push(rec)
    const t0 = Date.now()
    try {
      await this.#apply(ev, rec)
      rec.durationMs = Date.now() - t0
    } catch (err) {
      rec.error = (err as Error).message
      log(`fault ${ev.kind} failed: ${rec.error}`)
    }
    if (!RULE_KINDS.includes(ev.kind)) log(`fault ${ev.kind} ${rec.detail} (${rec.durationMs ?? '?'} ms)`)
  }

  /** Clears every rule still on (recording its hits) and ends every database fault. */
  clearAll(): void {
    for (const t of this.#ruleTimers) clearTimeout(t)
    for (const [h, rec] of this.#handles) {
      rec.hits = h.hits
      h.clear()
    }
    this.#handles.clear()
    const { db } = this.#plane
    db.down = false
    db.slowMs = 0
    db.commitThenHang(0)
  }

  /** Runs `fn` with a window of `ev`'s kind open in `ctx.windows`, closed when it ends. */
  async #window(ev: FaultEvent, rec: FaultRecord, fn: () => Promise<void>): Promise<void> {
    const { windows, rel } = this.#ctx
    rec.allowanceMs = allowanceMs(ev)
    const w = windows.open(ev.kind, rel(), rec.allowanceMs)
    try {
      await fn()
    } finally {
      windows.close(w, rel())
    }
  }

  async #apply(ev: FaultEvent, rec: FaultRecord): Promise<void> {
    const { proxy, db, env } = this.#plane
    switch (ev.kind) {
      case 'drop-all':
        proxy.dropAll()
        break
      case 'drop-next':
        this.#addRule(rec, { times: 1, action: { type: 'drop' } })
        break
      case 'burst-429':
        rec.detail = `429 for ${ev.durationMs} ms, Retry-After ${ev.retryAfterSeconds} s${ev.nonWatchOnly ? ', non-watch only' : ''}`
        this.#addRule(
          rec,
          {
            ...(ev.nonWatchOnly ? { watch: false } : {}),
            action: { type: 'status', status: 429, retryAfterSeconds: ev.retryAfterSeconds },
          },
          ev.durationMs,
        )
        break
      case 'burst-5xx':
        rec.detail = `${ev.status} for ${ev.durationMs} ms${ev.method ? ` on ${ev.method}` : ''}`
        this.#addRule(
          rec,
          { ...(ev.method ? { method: ev.method } : {}), action: { type: 'status', status: ev.status } },
          ev.durationMs,
        )
        break
      case 'stall':
        rec.detail = ev.target
        this.#addRule(rec, { ...this.#stallTarget(ev.target), times: 1, action: { type: 'stall' } })
        break
      case 'compact': {
        const revision = await env.compact()
        rec.detail = `revision ${revision}`
        break
      }
      case 'restart-apiserver':
        await env.restartApiserver('cached')
        break
      case 'kill-leader': {
        const victim = await this.#fleet.killLeader()
        rec.detail = victim ?? 'no leader to kill'
        if (victim === undefined) rec.error = 'no leader within 30 s'
        break
      }
      case 'kill-replica': {
        const victim = this.#fleet.killReplica(this.#victims)
        if (victim === undefined) throw new Error('no replica to kill')
        await this.#takenOver(victim, rec)
        break
      }
      case 'add-replica':
        rec.detail = (await this.#fleet.addReplica()) ?? 'did not start'
        break
      case 'remove-replica': {
        const victim = await this.#fleet.removeReplica(this.#victims, MIN_SHARDED_REPLICAS)
        if (victim === undefined) throw new Error(`${MIN_SHARDED_REPLICAS} replicas or fewer: none removed`)
        await this.#takenOver(victim, rec)
        break
      }
      case 'database-outage':
        rec.detail = `${ev.durationMs} ms`
        await this.#window(ev, rec, async () => {
          db.down = true
          await sleep(ev.durationMs).finally(() => {
            db.down = false
          })
        })
        break
      case 'db-timeout-after-commit':
        await this.#window(ev, rec, async () => {
          db.commitThenHang(ev.writes)
          const until = Date.now() + ev.armMs
          while (db.hangsLeft > 0 && Date.now() < until) await sleep(HANG_POLL_MS)
          const hung = ev.writes - db.hangsLeft
          db.commitThenHang(0)
          rec.hits = hung
          rec.detail = `${hung} of ${ev.writes} writes committed and never answered${hung < ev.writes ? ` (no more writes within ${ev.armMs / 1000} s)` : ''}`
        })
        break
      case 'db-slow':
        rec.detail = `answers delayed ${ev.delayMs} ms for ${ev.durationMs} ms`
        await this.#window(ev, rec, async () => {
          db.slowMs = ev.delayMs
          await sleep(ev.durationMs).finally(() => {
            db.slowMs = 0
          })
        })
        break
      case 'rbac-revoked': {
        const { verb, resource } = REVOKED_RULE
        rec.detail = `${verb} on ${resource} revoked for ${ev.durationMs} ms`
        await retrying(() => revokeOperatorRule(this.#plane))
        await this.#window(ev, rec, async () => {
          try {
            await sleep(ev.durationMs)
          } finally {
            await retrying(() => restoreOperatorRules(this.#plane))
          }
        })
        break
      }
    }
  }

  /**
   * Sharded: waits until no AppService is labelled with `victim`'s member id any more (its share
   * taken over by the others), and records how long that took since it was stopped (a failover).
   */
  async #takenOver(victim: FleetProcess, rec: FaultRecord): Promise<void> {
    const { admin, namespaces } = this.#plane
    const member = this.#fleet.memberId(victim)
    if (member === undefined) throw new Error(`${victim.id} logged no member id`)
    const t0 = Date.now()
    const failover: Fleet['failovers'][number] = { victim: victim.id, successor: undefined, ms: undefined }
    this.#fleet.failovers.push(failover)
    const owned = async () => {
      let n = 0
      for (const ns of namespaces)
        n += (await admin.resource(APPSERVICES, ns).list({ labelSelector: `${SHARD_LABEL}=${member}` })).items
          .length
      return n
    }
    const first = await owned().catch(() => undefined)
    while (Date.now() - t0 < TAKEOVER_WAIT_MS) {
      if ((await owned().catch(() => undefined)) === 0) {
        failover.ms = Date.now() - t0
        failover.successor = `${first ?? '?'} objects taken over`
        break
      }
      await sleep(TAKEOVER_POLL_MS)
    }
    rec.detail = `${victim.id} (member ${member}, ${first ?? '?'} objects): ${failover.ms === undefined ? `not taken over within ${TAKEOVER_WAIT_MS / 1000} s` : `taken over in ${failover.ms} ms`}`
  }

  /** The requests a stall of `target` catches. */
  #stallTarget(target: StallTarget): Omit<FaultRule, 'action'> {
    const nsAlt = this.#plane.namespaces.join('|')
    const targets: Record<StallTarget, Omit<FaultRule, 'action'>> = {
      'operator-write': {
        method: ['PATCH', 'POST', 'PUT'],
        path: new RegExp(`/namespaces/(${nsAlt})/(appservices|deployments|services)`),
      },
      'agent-status': { method: 'PATCH', path: /\/nodeconfigreports\/[^/]+$/ },
      watch: {
        watch: true,
        path: /\/(appservices|nodeconfigs|nodeconfigreports|deployments|services|nodes)$/,
      },
      lease: { path: new RegExp(`/namespaces/${this.#plane.opNs}/leases/`) },
    }
    return targets[target]
  }

  /** Adds `rule` to the proxy for `ttlMs`, then clears it and records its hits. */
  #addRule(rec: FaultRecord, rule: FaultRule, ttlMs = RULE_TTL_MS): void {
    const h = this.#plane.proxy.addFault(rule)
    this.#handles.set(h, rec)
    const t = setTimeout(() => {
      this.#ruleTimers.delete(t)
      rec.hits = h.hits
      h.clear()
      this.#handles.delete(h)
    }, ttlMs)
    this.#ruleTimers.add(t)
  }
}

/** Runs `fn` until it succeeds, every {@link RBAC_RETRY_MS} for {@link RBAC_RETRY_FOR_MS} (then throws its error). */
async function retrying(fn: () => Promise<unknown>): Promise<void> {
  const until = Date.now() + RBAC_RETRY_FOR_MS
  for (;;) {
    try {
      await fn()
      return
    } catch (err) {
      if (Date.now() >= until) throw err
      await sleep(RBAC_RETRY_MS)
    }
  }
}
