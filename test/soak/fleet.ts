/**
 * @module fleet — the soak's processes: two leader-elected operator replicas (sharded: three, or
 * as many as asked, each owning a share) and three node agents, all the built artifact
 * (dist/edgeop.cjs), kept running the way a Deployment and a DaemonSet would (a process that exits
 * is replaced, unless it was removed on purpose), and sampled: metrics every second (leadership,
 * active workers, reconciles, objects owned, breaker transitions and parked keys), RSS from /proc
 * every two seconds.
 */
import { readFile } from 'node:fs/promises'
import type { ParkedKeyInfo } from '../../src/server/parked-keys-view.ts'
import { trackPid, untrackPid } from '../controlplane/cleanup.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import type { Invariants } from './invariants.ts'
import type { ReconcileSpan } from './ownership.ts'
import { type ResilienceLog, type ResilienceScrape, resilienceOf } from './resilience.ts'
import type { Rng } from './rng.ts'
import { type LeadershipInterval, leadershipFromLog, type RssSample } from './stats.ts'

/** How long a replacement waits before it starts (a Deployment's new pod, a container restart). */
export const RESTART_DELAY_MS = 1000
/** Metrics are scraped this often. */
export const METRICS_INTERVAL_MS = 1000
/** RSS is sampled this often. */
export const RSS_INTERVAL_MS = 2000

export type Role = 'operator' | 'agent'
/** Why a process ended. */
export type ExitReason = 'chaos-kill' | 'lost-leadership' | 'shutdown' | 'crash'

/** One process (one instance of a slot; a replacement is a new instance). */
export interface FleetProcess {
  /** `operator-1`, `operator-1.2` (second instance of slot operator-1), `agent-a`… */
  readonly id: string
  readonly slot: string
  readonly role: Role
  readonly pid: number
  /** ms since the soak started. */
  readonly startedAt: number
  endedAt: number | undefined
  exit: { code: number | null; signal: string | null; reason: ExitReason; detail: string } | undefined
  readonly proc: OperatorProcess
  readonly rss: RssSample[]
  /** V8 heap used, total and live (after full GC), and external memory (bytes), from the process's own metrics, with ms since start. */
  readonly heap: HeapSample[]
  /** Last scraped values (operators). */
  master: number | undefined
  reconciles: number | undefined
  /** Sharded: `edgeop_shard_objects` at the last scrape. */
  owned: number | undefined
  /** When SIGKILL was sent by the fault schedule (ms since start). */
  killedAt: number | undefined
  stopping: boolean
}

/** One scrape of a process's memory gauges (bytes). */
export interface HeapSample {
  t: number
  used: number
  total: number
  external: number
  /** Heap used just after the last full GC (0 before the first). */
  live: number
}

/** Scraped values of one process. */
interface Scrape {
  master: number | undefined
  active: number | undefined
  reconciles: number | undefined
  owned: number | undefined
  heap: Omit<HeapSample, 't'> | undefined
  resilience: ResilienceScrape
}

function heapOf(text: string): Omit<HeapSample, 't'> | undefined {
  const used = metricSum(text, 'nodejs_heap_size_used_bytes')
  const total = metricSum(text, 'nodejs_heap_size_total_bytes')
  const external = metricSum(text, 'nodejs_external_memory_bytes')
  const live = metricSum(text, 'nodejs_heap_size_used_after_major_gc_bytes')
  return used === undefined || total === undefined
    ? undefined
    : { used, total, external: external ?? 0, live: live ?? 0 }
}

/** Sum of every sample of metric `name` whose labels include `labels` (undefined when none). */
export function metricSum(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let sum: number | undefined
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue
    const v = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (Number.isFinite(v)) sum = (sum ?? 0) + v
  }
  return sum
}

/** VmRSS of `pid` in KiB, or undefined when the process is gone. */
export async function rssKb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
    return kb === undefined ? undefined : Number(kb)
  } catch {
    return undefined
  }
}

/** Options of {@link Fleet}. */
export interface FleetOptions {
  /** Epoch ms the soak started (sample times are relative to it). */
  start: number
  /** Artifact arguments of an operator replica (`run …`). */
  operatorArgs: readonly string[]
  /** Artifact arguments of each agent, by slot (`agent …`). */
  agentArgs: Readonly<Record<string, readonly string[]>>
  invariants: Invariants
  /** Where the operators' breaker transitions and parked keys go. */
  resilience?: ResilienceLog
  log: (line: string) => void
  /** Operator replicas (default 2). */
  replicas?: number
  /**
   * Sharded: the assignment label (`shard.edgeop.io/<ring>`). Every replica then leads its own
   * membership, so the single-leader samples are not taken.
   */
  shardLabel?: string
  /** With snapshots: the cache directory of a slot (`--cache-dir`), the same for each of its restarts. */
  cacheDir?: (slot: string) => Promise<string>
}

/** The processes. Call {@link Fleet.start}, then {@link Fleet.stop} at the end. */
export class Fleet {
  readonly all: FleetProcess[] = []
  readonly #o: FleetOptions
  readonly #seq = new Map<string, number>()
  /** Slots removed on purpose: not replaced. */
  readonly #retired = new Set<string>()
  /** Operator slots made so far. */
  #slots = 0
  #stopping = false
  #timers = new Set<NodeJS.Timeout>()
  #pending = new Set<Promise<unknown>>()
  /** Failovers after a chaos kill: ms from SIGKILL to a new leader reporting master. */
  readonly failovers: { victim: string; successor: string | undefined; ms: number | undefined }[] = []
  /** Leadership samples where more than one replica reported leading or working. */
  samples = 0

  constructor(options: FleetOptions) {
    this.#o = options
  }

  get #now(): number {
    return Date.now() - this.#o.start
  }

  /** Live processes (not exited). */
  live(role?: Role): FleetProcess[] {
    return this.all.filter((p) => p.endedAt === undefined && (role === undefined || p.role === role))
  }

  /** Starts the operator replicas and every agent; resolves when all serve. */
  async start(): Promise<void> {
    await Promise.all([
      ...Array.from({ length: this.#o.replicas ?? 2 }, () =>
        this.#spawn(`operator-${++this.#slots}`, 'operator'),
      ),
      ...Object.keys(this.#o.agentArgs).map((slot) => this.#spawn(slot, 'agent')),
    ])
  }

  /** Sharded: one more operator replica, in a new slot; resolves when it serves. Returns its id. */
  async addReplica(): Promise<string | undefined> {
    const slot = `operator-${++this.#slots}`
    await this.#spawn(slot, 'operator')
    return this.all.find((p) => p.slot === slot)?.id
  }

  /**
   * Sharded: SIGTERMs a random live operator replica (`rng`) and does not replace it, unless that
   * would leave fewer than `min`; resolves when it has exited. Returns it, or undefined.
   */
  async removeReplica(rng: Rng, min: number): Promise<FleetProcess | undefined> {
    const ops = this.live('operator').filter((p) => !p.stopping && p.killedAt === undefined)
    if (ops.length <= min) return undefined
    const p = rng.pick(ops)
    this.#retired.add(p.slot)
    p.stopping = true
    p.proc.kill('SIGTERM')
    await p.proc.exited
    return p
  }

  /** Sharded: SIGKILLs a random live operator replica (`rng`; replaced after {@link RESTART_DELAY_MS}). */
  killReplica(rng: Rng): FleetProcess | undefined {
    const ops = this.live('operator').filter((p) => !p.stopping && p.killedAt === undefined)
    if (ops.length === 0) return undefined
    const p = rng.pick(ops)
    p.killedAt = this.#now
    p.proc.kill('SIGKILL')
    return p
  }

  /** Sharded: `p`'s member id, from the selector of the informers it logged (`<label>=<id>`). */
  memberId(p: FleetProcess): string | undefined {
    const label = this.#o.shardLabel
    if (label === undefined) return undefined
    for (const l of p.proc.logs)
      if (l.msg === 'watching') {
        const m = String(l.informer).match(new RegExp(`${label.replace(/[./]/g, '\\$&')}=([0-9a-f]+)`))
        if (m) return m[1]
      }
    return undefined
  }

  async #spawn(slot: string, role: Role): Promise<void> {
    const n = (this.#seq.get(slot) ?? 0) + 1
    this.#seq.set(slot, n)
    const id = n === 1 ? slot : `${slot}.${n}`
    const args = role === 'operator' ? [...this.#o.operatorArgs] : [...this.#o.agentArgs[slot]!]
    if (this.#o.cacheDir) args.push(`--cache-dir=${await this.#o.cacheDir(slot)}`)
    // The Lease holder identity and the event instance come from $HOSTNAME, as in a pod.
    // spawn() reads the environment synchronously, before startOperator's first await.
    const saved = process.env.HOSTNAME
    process.env.HOSTNAME = id
    const starting = startOperator(id, args)
    if (saved === undefined) delete process.env.HOSTNAME
    else process.env.HOSTNAME = saved
    let proc: OperatorProcess
    try {
      proc = await starting
    } catch (err) {
      this.#o.invariants.fail('no-crash', `${id} did not start: ${(err as Error).message}`)
      if (!this.#stopping) this.#later(() => this.#spawn(slot, role), RESTART_DELAY_MS * 5)
      return
    }
    const p: FleetProcess = {
      id,
      slot,
      role,
      pid: proc.child.pid!,
      startedAt: this.#now,
      endedAt: undefined,
      exit: undefined,
      proc,
      rss: [],
      heap: [],
      master: undefined,
      reconciles: undefined,
      owned: undefined,
      killedAt: undefined,
      stopping: false,
    }
    this.all.push(p)
    trackPid(p.pid) // SIGKILLed if this process exits first
    this.#o.log(`${id} started (pid ${p.pid})`)
    void proc.exited.then((code) => this.#exited(p, code))
  }

  #exited(p: FleetProcess, code: number | null): void {
    p.endedAt = this.#now
    untrackPid(p.pid)
    const signal = p.proc.child.signalCode
    let reason: ExitReason
    let detail = ''
    const errorLine = p.proc.logs.findLast((l) => l.msg === 'edgeop stopped with an error')
    if (p.killedAt !== undefined && signal === 'SIGKILL') reason = 'chaos-kill'
    else if (p.stopping && code === 0) reason = 'shutdown'
    else if (p.role === 'operator' && code === 1 && errorLine?.code === 'EDGEOP_ERR_LEADER') {
      reason = 'lost-leadership'
      detail = String(errorLine.error ?? '')
    } else {
      reason = 'crash'
      detail =
        errorLine === undefined
          ? `last lines: ${JSON.stringify(p.proc.logs.slice(-3))}`
          : `${String(errorLine.code)}: ${String(errorLine.error)}`
    }
    p.exit = { code, signal, reason, detail }
    this.#o.log(`${p.id} exited (${reason}${code === null ? `, ${signal}` : `, code ${code}`}) ${detail}`)
    if (reason !== 'crash') this.#o.invariants.pass('no-crash')
    else
      this.#o.invariants.fail(
        'no-crash',
        `${p.id} exited with ${code ?? signal}${p.stopping ? ' on SIGTERM' : ''}: ${detail}`,
      )
    if (!this.#stopping && !this.#retired.has(p.slot))
      this.#later(() => this.#spawn(p.slot, p.role), RESTART_DELAY_MS)
  }

  #later(fn: () => Promise<void>, ms: number): void {
    const t = setTimeout(() => {
      this.#timers.delete(t)
      const run = fn().finally(() => this.#pending.delete(run))
      this.#pending.add(run)
    }, ms)
    this.#timers.add(t)
  }

  async #scrape(p: FleetProcess): Promise<Scrape | undefined> {
    try {
      const text = await fetch(p.proc.metricsUrl, { signal: AbortSignal.timeout(2000) }).then((r) => r.text())
      return {
        master: metricSum(text, 'leader_election_master_status'),
        active: metricSum(text, 'controller_runtime_active_workers', { controller: 'appservice' }),
        reconciles: metricSum(text, 'controller_runtime_reconcile_total', { controller: 'appservice' }),
        owned: metricSum(text, 'edgeop_shard_objects'),
        heap: heapOf(text),
        resilience: resilienceOf(text),
      }
    } catch {
      return undefined
    }
  }

  /**
   * One round of metrics: every live process scraped at once. Operators: at most one may
   * report holding the Lease, at most one may have a reconcile in flight, and a replica
   * that was a standby at the previous scrape and still is must not have reconciled. Sharded, every
   * replica leads its own membership and works on its share: only the objects each owns are kept.
   */
  async sampleMetrics(): Promise<void> {
    const procs = this.live()
    const scrapes = await Promise.all(procs.map((p) => this.#scrape(p)))
    const t = this.#now
    const ops: { p: FleetProcess; s: Scrape }[] = []
    for (const [i, p] of procs.entries()) {
      const s = scrapes[i]
      if (s === undefined || p.endedAt !== undefined) continue
      if (s.heap !== undefined) p.heap.push({ t, ...s.heap })
      if (p.role === 'operator') {
        ops.push({ p, s })
        this.#o.resilience?.observe(p.id, t, s.resilience)
      }
    }
    if (ops.length === 0) return
    if (this.#o.shardLabel !== undefined) {
      for (const { p, s } of ops) [p.master, p.reconciles, p.owned] = [s.master, s.reconciles, s.owned]
      return
    }
    this.samples++
    const inv = this.#o.invariants
    const leaders = ops.filter((o) => o.s.master === 1).map((o) => o.p.id)
    inv.check('single-leader', leaders.length <= 1, () => `${leaders.join(' and ')} both report leading`)
    const working = ops.filter((o) => (o.s.active ?? 0) > 0).map((o) => o.p.id)
    inv.check('single-leader', working.length <= 1, () => `${working.join(' and ')} both have active workers`)
    for (const { p, s } of ops) {
      if (p.master === 0 && s.master === 0 && p.reconciles !== undefined && s.reconciles !== undefined)
        inv.check(
          'single-leader',
          s.reconciles === p.reconciles,
          () => `${p.id} reconciled ${s.reconciles! - p.reconciles!} times while a standby`,
        )
      p.master = s.master
      p.reconciles = s.reconciles
    }
  }

  /** One round of RSS samples from /proc. */
  async sampleRss(): Promise<void> {
    const t = this.#now
    await Promise.all(
      this.live().map(async (p) => {
        const kb = await rssKb(p.pid)
        if (kb !== undefined && p.endedAt === undefined) p.rss.push({ t, kb })
      }),
    )
  }

  /** `GET /debug/parked` of `p` (beside its /metrics). Throws when it cannot be read. */
  async parked(p: FleetProcess): Promise<ParkedKeyInfo[]> {
    const url = p.proc.metricsUrl.replace(/\/metrics$/, '/debug/parked')
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
    if (!res.ok) throw new Error(`GET /debug/parked of ${p.id}: HTTP ${res.status}`)
    return (await res.json()) as ParkedKeyInfo[]
  }

  /** The live operator that reports holding the Lease now (scraped fresh), if any. */
  async leader(): Promise<FleetProcess | undefined> {
    const ops = this.live('operator')
    const scrapes = await Promise.all(ops.map((p) => this.#scrape(p)))
    return ops.find((p, i) => scrapes[i]?.master === 1 && p.endedAt === undefined)
  }

  /**
   * SIGKILLs the leader (waiting up to `waitMs` for there to be one) and, in the
   * background, measures how long until another replica leads. Returns the victim's id.
   */
  async killLeader(waitMs = 30_000): Promise<string | undefined> {
    const until = Date.now() + waitMs
    let victim: FleetProcess | undefined
    while (victim === undefined && Date.now() < until && !this.#stopping) {
      victim = await this.leader()
      if (victim === undefined) await new Promise((r) => setTimeout(r, 500))
    }
    if (victim === undefined) return undefined
    const killedAt = Date.now()
    victim.killedAt = this.#now
    victim.proc.kill('SIGKILL')
    const record: (typeof this.failovers)[number] = { victim: victim.id, successor: undefined, ms: undefined }
    this.failovers.push(record)
    const watch = (async () => {
      while (Date.now() - killedAt < 120_000 && !this.#stopping) {
        const next = await this.leader()
        if (next !== undefined && next !== victim) {
          record.successor = next.id
          record.ms = Date.now() - killedAt
          return
        }
        await new Promise((r) => setTimeout(r, 250))
      }
    })().finally(() => this.#pending.delete(watch))
    this.#pending.add(watch)
    return victim.id
  }

  /** Every operator's leadership intervals (epoch ms), as {@link leadershipFromLog} reads its log. */
  leadershipIntervals(): LeadershipInterval[] {
    const out: LeadershipInterval[] = []
    for (const p of this.all) {
      if (p.role !== 'operator') continue
      const endOfLife = p.endedAt === undefined ? Date.now() : this.#o.start + (p.killedAt ?? p.endedAt)
      out.push(...leadershipFromLog(p.id, p.proc.logs, endOfLife))
    }
    return out
  }

  /** Sharded: every operator's `reconciled` debug lines (the Shard guard's, one per reconcile), epoch ms. */
  reconcileSpans(): ReconcileSpan[] {
    const out: ReconcileSpan[] = []
    for (const p of this.all)
      if (p.role === 'operator')
        for (const l of p.proc.logs)
          if (l.msg === 'reconciled')
            out.push({ process: p.id, object: String(l.object), from: Number(l.from), to: Number(l.to) })
    return out
  }

  /** Log lines of reconciles (work only a leader does), with their process and epoch ms. */
  workLines(): { process: string; at: number; msg: string }[] {
    const out: { process: string; at: number; msg: string }[] = []
    for (const p of this.all)
      if (p.role === 'operator')
        for (const l of p.proc.logs)
          if (
            l.msg === 'deployment applied' ||
            l.msg === 'reconcile failed; will retry' ||
            l.msg === 'starting workers'
          )
            out.push({ process: p.id, at: Date.parse(String(l.ts)), msg: l.msg })
    return out
  }

  /** SIGTERM everything, wait (SIGKILL after `graceMs`), stop replacing. */
  async stop(graceMs = 20_000): Promise<void> {
    this.#stopping = true
    for (const t of this.#timers) clearTimeout(t)
    this.#timers.clear()
    await Promise.allSettled([...this.#pending])
    const live = this.live()
    for (const p of live) {
      p.stopping = true
      p.proc.kill('SIGTERM')
    }
    await Promise.all(
      live.map(async (p) => {
        const timer = setTimeout(() => p.proc.kill('SIGKILL'), graceMs)
        await p.proc.exited
        clearTimeout(timer)
      }),
    )
  }
}
