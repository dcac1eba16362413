/**
 * @module final-checks — the invariants judged once the quiet window is over: every fault kind was
 * injected, leadership never overlapped and nobody worked without leading (sharded: no object
 * reconciled by two replicas at once, nobody reconciling outside its membership, every dead
 * member's objects taken over), the request rate held in every window, and RSS stayed flat after
 * warm-up.
 */
import type { SoakRun } from './context.ts'
import type { Fleet, FleetProcess } from './fleet.ts'
import { reconcileOverlaps, SINGLE_OWNER } from './ownership.ts'
import { countByKind, type FaultKind, faultKinds } from './schedule.ts'
import { RSS_GROWTH_BOUND, RSS_MIN_SPAN_MS, RSS_WINDOW_MS } from './settings.ts'
import {
  type LeadershipInterval,
  leadershipOverlaps,
  median,
  type RssVerdict,
  rssGrowth,
  summary,
  windowRates,
} from './stats.ts'
import { NO_ACTION_BEFORE_SYNCED, restoredAtWorkerStart } from './warm-start.ts'

/** A work line within this long after a leadership interval ends still counts as inside it. */
const LEADING_GRACE_MS = 1000
/** A 403 this long after an rbac-revoked fault's restore still counts as its hit (the authorizer's cache catching up). */
const FORBIDDEN_TAIL_MS = 1000
/** Faults that prove nothing unless they hit something: each must hit at least once over the run. */
const MUST_HIT: readonly FaultKind[] = ['db-timeout-after-commit', 'rbac-revoked']

/**
 * `proc`'s RSS verdict: warm-up ends `warmupMs` after the later of the chaos start, the process's
 * start and (for an operator) the start of its leadership.
 */
export function rssVerdict(
  ctx: SoakRun,
  proc: FleetProcess,
  intervals: readonly LeadershipInterval[],
): RssVerdict {
  const lead = intervals.find((i) => i.process === proc.id)
  const warmEnd =
    Math.max(ctx.chaosStart, proc.startedAt, lead === undefined ? 0 : lead.from - ctx.start) +
    ctx.settings.warmupMs
  return rssGrowth(proc.rss, warmEnd, { windowMs: RSS_WINDOW_MS, minSpanMs: RSS_MIN_SPAN_MS })
}

/** Each operator process started warm began its workers only once its restored informers had caught up. */
function checkWarmStarts(ctx: SoakRun, f: Fleet): void {
  let warm = 0
  for (const p of f.all) {
    if (p.role !== 'operator') continue
    const early = restoredAtWorkerStart(p.proc.logs)
    if (early === undefined) continue
    warm++
    ctx.inv.check(
      NO_ACTION_BEFORE_SYNCED,
      early.length === 0,
      () => `${p.id} started its workers while serving a snapshot of ${early.join('; ')}`,
    )
  }
  ctx.inv.note(NO_ACTION_BEFORE_SYNCED, `${warm} operator starts from snapshots whose workers started`)
  if (warm === 0)
    ctx.inv.note(
      NO_ACTION_BEFORE_SYNCED,
      'no warm start to judge: under the soak load a cache is never quiet for 5 s, so its first snapshot is written after SNAPSHOT_MIN_INTERVAL_MS (5 min); run --minutes ≥ 6',
    )
}

/** Judges the end-of-run invariants; `quietStart` is when the quiet window began (ms since start). */
export function checkEndOfRun(ctx: SoakRun, f: Fleet, quietStart: number): void {
  const { inv } = ctx
  for (const r of ctx.records)
    if (r.kind === 'rbac-revoked' && r.durationMs !== undefined)
      r.hits = ctx.traffic.forbiddenBetween(r.atMs, r.atMs + r.durationMs + FORBIDDEN_TAIL_MS)
  const injected = countByKind(ctx.records.filter((r) => r.error === undefined))
  for (const kind of faultKinds(ctx.settings.sharded))
    inv.check('faults-injected', injected[kind] > 0, () => `no ${kind} fault was injected`)
  for (const kind of MUST_HIT) {
    const hits = ctx.records.filter((r) => r.kind === kind).reduce((n, r) => n + (r.hits ?? 0), 0)
    inv.check('faults-injected', hits > 0, () => `${kind} never hit anything (no hung write, no 403)`)
  }
  if (ctx.settings.snapshots) checkWarmStarts(ctx, f)
  const intervals = f.leadershipIntervals()
  if (ctx.settings.sharded) checkSingleOwner(ctx, f, intervals)
  else checkSingleLeader(ctx, f, intervals)
  const rates = windowRates(
    ctx.traffic.perSecond.slice(Math.floor(ctx.chaosStart / 1000), Math.floor(quietStart / 1000)),
    10,
  )
  inv.check(
    'request-rate',
    Math.max(0, ...rates) <= ctx.settings.rateBound,
    () => `${Math.max(...rates).toFixed(1)} req/s in the busiest 10 s window of the chaos and settle phases`,
  )
  inv.note(
    'request-rate',
    `10 s windows: p50 ${summary(rates).p50.toFixed(1)}, p99 ${summary(rates).p99.toFixed(1)}, max ${summary(rates).max.toFixed(1)} req/s; quiet ${ctx.quietPerS?.toFixed(2)} req/s`,
  )
  for (const proc of f.all) {
    const verdict = rssVerdict(ctx, proc, intervals)
    if (verdict.assessed)
      inv.check(
        'rss-flat',
        verdict.growth < RSS_GROWTH_BOUND,
        () =>
          `${proc.id}: RSS ${(verdict.baselineKb / 1024).toFixed(1)} → ${(verdict.finalKb / 1024).toFixed(1)} MiB (+${(verdict.growth * 100).toFixed(1)} %)`,
      )
    inv.note(
      'rss-flat',
      verdict.assessed
        ? `${proc.id}: ${(verdict.baselineKb / 1024).toFixed(1)} → ${(verdict.finalKb / 1024).toFixed(1)} MiB (${verdict.growth >= 0 ? '+' : ''}${(verdict.growth * 100).toFixed(1)} %) over ${((verdict.toMs - verdict.fromMs) / 1000).toFixed(0)} s`
        : `${proc.id}: not assessed (${verdict.reason})`,
    )
  }
}

/** No two leadership intervals overlap, and every work line falls inside its process's leadership. */
function checkSingleLeader(ctx: SoakRun, f: Fleet, intervals: readonly LeadershipInterval[]): void {
  const { inv } = ctx
  for (const [x, y] of leadershipOverlaps(intervals))
    inv.fail(
      'single-leader',
      `${x.process} (${new Date(x.from).toISOString()}–${new Date(x.to).toISOString()}) and ${y.process} (from ${new Date(y.from).toISOString()}) led at the same time`,
    )
  inv.pass('single-leader', intervals.length)
  for (const line of f.workLines()) {
    const inside = intervals.some(
      (i) => i.process === line.process && line.at >= i.from && line.at <= i.to + LEADING_GRACE_MS,
    )
    inv.check('single-leader', inside, () => `${line.process} logged "${line.msg}" while not leading`)
  }
  inv.note(
    'single-leader',
    `${intervals.length} leadership intervals, ${f.failovers.length} kills; failover ${f.failovers.map((x) => (x.ms === undefined ? '—' : `${(x.ms / 1000).toFixed(1)} s`)).join(', ')}`,
  )
}

/**
 * Sharded: no object reconciled by two replicas at once (their `reconciled` lines), every reconcile
 * and work line inside its replica's membership (from taking its Lease to its work stopping), and
 * every killed or removed member's objects taken over.
 */
function checkSingleOwner(ctx: SoakRun, f: Fleet, intervals: readonly LeadershipInterval[]): void {
  const { inv } = ctx
  const spans = f.reconcileSpans()
  inv.check(
    SINGLE_OWNER,
    spans.length > 0,
    () => 'no `reconciled` line logged (operators not at debug level?)',
  )
  const overlaps = reconcileOverlaps(spans)
  const iso = (t: number) => new Date(t).toISOString().slice(11, 23)
  for (const [x, y] of overlaps)
    inv.fail(
      SINGLE_OWNER,
      `${x.object} reconciled by ${x.process} (${iso(x.from)}–${iso(x.to)}) and ${y.process} (${iso(y.from)}–${iso(y.to)}) at once`,
    )
  inv.pass(SINGLE_OWNER, Math.max(0, spans.length - overlaps.length))
  const inside = (process: string, at: number) =>
    intervals.some((i) => i.process === process && at >= i.from && at <= i.to + LEADING_GRACE_MS)
  for (const s of spans)
    inv.check(
      SINGLE_OWNER,
      inside(s.process, s.from),
      () => `${s.process} reconciled ${s.object} outside its membership`,
    )
  for (const line of f.workLines())
    inv.check(
      SINGLE_OWNER,
      inside(line.process, line.at),
      () => `${line.process} logged "${line.msg}" outside its membership`,
    )
  for (const x of f.failovers)
    inv.check(SINGLE_OWNER, x.ms !== undefined, () => `${x.victim}'s objects were not taken over`)
  const ms = f.failovers.flatMap((x) => (x.ms === undefined ? [] : [x.ms / 1000]))
  inv.note(
    SINGLE_OWNER,
    `${spans.length} reconciles of ${new Set(spans.map((s) => s.object)).size} objects by ${new Set(spans.map((s) => s.process)).size} processes, ${overlaps.length} overlapping; ${intervals.length} membership intervals; ${f.failovers.length} members killed or removed, taken over in ${ms.map((x) => `${x.toFixed(1)} s`).join(', ') || '—'}${ms.length ? ` (median ${median(ms).toFixed(1)} s)` : ''}`,
  )
}
