/**
 * @module results — the report of a soak run ({@link SoakReport}): everything it measured, assembled
 * from the run's state once it is over.
 */
import { cpus, totalmem } from 'node:os'
import { ARTIFACT } from '../support/operator-process.ts'
import type { SoakRun } from './context.ts'
import { rssVerdict } from './final-checks.ts'
import type { Fleet, HeapSample } from './fleet.ts'
import type { InvariantResult } from './invariants.ts'
import type { ResilienceReport } from './resilience.ts'
import { countByKind, type FaultKind } from './schedule.ts'
import type { Sabotage } from './settings.ts'
import { type LeadershipInterval, type RssVerdict, summary, windowRates } from './stats.ts'
import type { BusySecond } from './traffic.ts'

/** One injected fault. */
export interface FaultRecord {
  kind: FaultKind
  /** ms since the soak started: scheduled, and when it was applied. */
  scheduledMs: number
  atMs: number
  detail: string
  /** Requests a proxy rule answered; db-timeout-after-commit: writes hung; rbac-revoked: 403s the operators got. */
  hits?: number
  /** Restart/compaction call, outage length, stall length (ms). */
  durationMs?: number
  /** Faults that can hold AppServices up: how long after the fault's end they may still catch up (fault-windows.ts). */
  allowanceMs?: number
  error?: string
}

/** The process summary in the report. */
export interface ProcessReport {
  id: string
  role: string
  pid: number
  startedAtS: number
  endedAtS: number | undefined
  exit: string | undefined
  rss: RssVerdict
  rssMiB: { first: number; max: number; last: number } | undefined
  /**
   * V8 heap used, total and live (used just after the last full GC), and external memory, from
   * the process's own metrics: first and last sample. Tells V8 sizing its heap (total grows,
   * live does not) from live objects growing (live grows).
   */
  heapMiB: { used: FirstLast; total: FirstLast; live: FirstLast; external: FirstLast } | undefined
}

/** A gauge's first and last sample, in MiB. */
export interface FirstLast {
  first: number
  last: number
}

/** The heap summary of a process's samples (undefined without samples). */
function heapMiB(samples: readonly HeapSample[]): ProcessReport['heapMiB'] {
  const first = samples[0]
  const last = samples[samples.length - 1]
  if (first === undefined || last === undefined) return undefined
  const fl = (k: 'used' | 'total' | 'external'): FirstLast => ({
    first: first[k] / 2 ** 20,
    last: last[k] / 2 ** 20,
  })
  // Live: from the first sample after the first full GC (0 before it).
  const firstLive = samples.find((s) => s.live > 0)
  const live = { first: (firstLive?.live ?? 0) / 2 ** 20, last: last.live / 2 ** 20 }
  return { used: fl('used'), total: fl('total'), live, external: fl('external') }
}

/** Everything a run measured. */
export interface SoakReport {
  passed: boolean
  startedAt: string
  seed: number
  minutes: number
  /** Sharded mode: the operators ran with `--shard` (absent in reports made before it existed). */
  sharded?: boolean
  /** Operator replicas at the start. */
  replicas?: number
  /** The link profile between the processes and the API server (`--link`), if any. */
  link?: string
  run: string
  sabotage: Sabotage | undefined
  settings: Record<string, number | string>
  machine: { cpus: number; model: string; memoryGiB: number; node: string; kubernetes: string }
  phasesS: { setup: number; chaos: number; settle: number; quiet: number; teardown: number; total: number }
  /** The chaos phase, in seconds since start. */
  chaosS: { from: number; to: number }
  faults: {
    planned: Record<FaultKind, number>
    injected: Record<FaultKind, number>
    injectedResponses: number
    records: FaultRecord[]
  }
  driver: {
    ops: Record<string, { ok: number; failed: number }>
    appServicesCreated: number
    nodeConfigsCreated: number
    errors: string[]
  }
  requests: {
    total: number
    byIdentity: Record<string, number>
    perSecond: number[]
    window10s: ReturnType<typeof summary>
    boundPerS: number
    quietPerS: number | undefined
    quietBoundPerS: number
    /** Requests by identity, verb and resource over the whole run, most first. */
    byShape: { request: string; count: number }[]
    /** Seconds with at least `HOT_SECOND` (settings.ts) requests: what they were. */
    busySeconds: BusySecond[]
  }
  convergence: { boundS: number; latencyS: ReturnType<typeof summary>; settleS: number | undefined }
  leadership: { intervals: { process: string; fromS: number; toS: number }[]; failovers: Fleet['failovers'] }
  processes: ProcessReport[]
  /** The operators' circuit-breaker transitions and parked keys (absent in reports made before they were measured). */
  resilience?: ResilienceReport
  rssSeries: { id: string; slot: string; samples: [number, number][] }[]
  invariants: InvariantResult[]
}

/** Which build ran: the artifact's digest and the source commit, taken when the run started. */
export interface Provenance {
  artifact: string
  commit: string
}

/** The report of `ctx`, once every phase has run or failed; `invariants` are the ledger's results. */
export function buildReport(ctx: SoakRun, invariants: InvariantResult[], provenance: Provenance): SoakReport {
  const { options, start, run, fleet, workload, phases, chaosStart, traffic, records, plan } = ctx
  const { settleMs, quietPerS, latencies } = ctx
  const { faulted, perSecond, byIdentity, busySeconds, byShape } = traffic
  const { rate, appTarget, nodeConfigTarget, boundMs } = ctx.settings
  const { artifact, commit } = provenance
  const env = ctx.env
  const rates = windowRates(perSecond, 10)
  const injected = countByKind(records.filter((r) => r.error === undefined))
  const intervals = fleet?.leadershipIntervals() ?? []
  const processes = processReports(ctx, fleet, intervals)
  return {
    passed: invariants.every((r) => r.passed),
    startedAt: new Date(start).toISOString(),
    seed: options.seed,
    minutes: options.minutes,
    sharded: ctx.settings.sharded,
    replicas: ctx.settings.replicas,
    ...(options.link ? { link: options.link } : {}),
    run,
    sabotage: options.sabotage,
    settings: {
      driverOpsPerS: rate,
      appServiceTarget: appTarget,
      nodeConfigTarget,
      boundS: boundMs / 1000,
      operators: ctx.settings.sharded
        ? `${ctx.settings.replicas} sharded (--shard)`
        : `${ctx.settings.replicas} leader-elected`,
      leaseDurationS: ctx.settings.lease.durationMs / 1000,
      renewDeadlineS: ctx.settings.lease.renewMs / 1000,
      retryPeriodS: ctx.settings.lease.retryMs / 1000,
      operatorWorkers: ctx.settings.maxConcurrentReconciles,
      operatorQps: 50,
      agentRecheckS: 5,
      artifact: `${ARTIFACT.replace(/.*\/dist\//, 'dist/')} sha256:${artifact}`,
      commit,
    },
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      kubernetes: env?.versions ? JSON.stringify(env.versions) : 'unknown',
    },
    chaosS: { from: chaosStart / 1000, to: (chaosStart + phases.chaos) / 1000 },
    phasesS: Object.fromEntries(
      Object.entries(phases).map(([k, v]) => [k, Math.round(v / 100) / 10]),
    ) as SoakReport['phasesS'],
    faults: {
      planned: countByKind(plan),
      injected,
      injectedResponses: faulted.length,
      records: records.map((r) => {
        if (r.kind !== 'stall') return r
        const stalled = faulted.find((x) => x.fault === 'stall' && x.startedAt - start >= r.atMs)
        return stalled === undefined
          ? r
          : {
              ...r,
              detail: `${r.detail}: ${stalled.method} ${stalled.path} ended ${stalled.outcome ?? 'never'} after ${(((stalled.endedAt ?? Date.now()) - stalled.startedAt) / 1000).toFixed(1)} s`,
            }
      }),
    },
    driver: {
      ops: workload?.stats ?? {},
      appServicesCreated: workload?.apps.size ?? 0,
      nodeConfigsCreated: workload?.nodeConfigs.size ?? 0,
      errors: workload?.errors ?? [],
    },
    requests: {
      total: perSecond.reduce((x, y) => x + y, 0),
      byIdentity,
      perSecond,
      window10s: summary(rates),
      boundPerS: ctx.settings.rateBound,
      quietPerS,
      quietBoundPerS: ctx.settings.quietRateBound,
      busySeconds,
      byShape: [...byShape].sort((x, y) => y[1] - x[1]).map(([request, count]) => ({ request, count })),
    },
    convergence: {
      boundS: boundMs / 1000,
      latencyS: summary(latencies.map((l) => l / 1000)),
      settleS: settleMs === undefined ? undefined : settleMs / 1000,
    },
    leadership: {
      intervals: intervals.map((i) => ({
        process: i.process,
        fromS: (i.from - start) / 1000,
        toS: (i.to - start) / 1000,
      })),
      failovers: fleet?.failovers ?? [],
    },
    processes,
    resilience: ctx.resilience.report(),
    rssSeries: (fleet?.all ?? []).map((proc) => ({
      id: proc.id,
      slot: proc.slot,
      samples: proc.rss.map((s) => [Math.round(s.t / 100) / 10, s.kb] as [number, number]),
    })),
    invariants,
  }
}

/** One {@link ProcessReport} per process the fleet ever started. */
function processReports(
  ctx: SoakRun,
  fleet: Fleet | undefined,
  intervals: readonly LeadershipInterval[],
): ProcessReport[] {
  return (fleet?.all ?? []).map((proc) => {
    const kb = proc.rss.map((s) => s.kb)
    return {
      id: proc.id,
      role: proc.role,
      pid: proc.pid,
      startedAtS: proc.startedAt / 1000,
      endedAtS: proc.endedAt === undefined ? undefined : proc.endedAt / 1000,
      exit:
        proc.exit === undefined ? undefined : `${proc.exit.reason} (${proc.exit.code ?? proc.exit.signal})`,
      rss: rssVerdict(ctx, proc, intervals),
      rssMiB:
        kb.length === 0
          ? undefined
          : { first: kb[0]! / 1024, max: Math.max(...kb) / 1024, last: kb[kb.length - 1]! / 1024 },
      heapMiB: heapMiB(proc.heap),
    }
  })
}
