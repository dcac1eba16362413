/**
 * @module stats — the soak's arithmetic: percentiles, request-rate windows, RSS growth and
 * leadership overlaps. Pure functions, unit-tested in soak.test.ts.
 */

/** The `p`-th percentile (0–100, nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

/** Median of `values`; NaN when empty. */
export const median = (values: readonly number[]): number => percentile(values, 50)

/**
 * Requests per second averaged over every window of `windowS` consecutive seconds, from
 * per-second counts (`counts[i]` = requests that started in second i). Seconds missing
 * from the array count as 0.
 */
export function windowRates(counts: readonly number[], windowS: number): number[] {
  const out: number[] = []
  let sum = 0
  for (let i = 0; i < counts.length; i++) {
    sum += counts[i] ?? 0
    if (i >= windowS) sum -= counts[i - windowS] ?? 0
    if (i >= windowS - 1) out.push(sum / windowS)
  }
  return out
}

/** One RSS sample: ms since the soak started, KiB. */
export interface RssSample {
  t: number
  kb: number
}

/** What {@link rssGrowth} concluded for one process. */
export type RssVerdict =
  | {
      assessed: true
      /** Median RSS (KiB) of the first window after warm-up. */
      baselineKb: number
      /** Median RSS (KiB) of the last window. */
      finalKb: number
      /** finalKb / baselineKb − 1. */
      growth: number
      fromMs: number
      toMs: number
    }
  | { assessed: false; reason: string }

/**
 * RSS growth of one process after warm-up: the median of the samples in the first
 * `windowMs` after `warmEndMs` against the median of the last `windowMs` of samples.
 * Medians, not single samples, so a garbage-collection sawtooth does not count as
 * growth. A process whose assessed span is shorter than `minSpanMs` is not assessed.
 */
export function rssGrowth(
  samples: readonly RssSample[],
  warmEndMs: number,
  options: { windowMs: number; minSpanMs: number },
): RssVerdict {
  const after = samples.filter((s) => s.t >= warmEndMs)
  if (after.length < 4) return { assessed: false, reason: 'too few samples after warm-up' }
  const from = after[0]!.t
  const to = after[after.length - 1]!.t
  if (to - from < options.minSpanMs)
    return {
      assessed: false,
      reason: `lived ${Math.round((to - from) / 1000)} s after warm-up (< ${options.minSpanMs / 1000} s)`,
    }
  const first = after.filter((s) => s.t <= from + options.windowMs).map((s) => s.kb)
  const last = after.filter((s) => s.t >= to - options.windowMs).map((s) => s.kb)
  const baselineKb = median(first)
  const finalKb = median(last)
  return { assessed: true, baselineKb, finalKb, growth: finalKb / baselineKb - 1, fromMs: from, toMs: to }
}

/** A span of time one process held leadership (epoch ms). */
export interface LeadershipInterval {
  process: string
  from: number
  to: number
}

/** Log lines of an operator that end (or follow the end of) its leadership. */
const LEADERSHIP_END_LINES = new Set([
  'leader election lost',
  'stopped leading',
  'released the lease',
  'not the holder any more; nothing to release',
  'failed to release the lease',
  'stopped',
])
/** The elector's line once a leader's work has settled (src/leader/elector.ts). */
const WORK_STOPPED_LINE = 'leader work stopped'

/**
 * Leadership intervals in one operator's JSON log (epoch ms): from "leading: starting controllers"
 * to "leader work stopped" (the elector's line once the work has settled, before it hands the
 * record back); without that line (the work did not settle in its grace period), to the last line
 * that ends leading (lost, Lease released, stopped leading), else to `endOfLife` (the process's
 * SIGKILL, exit, or now). The reconcile lines are checked against these on their own.
 */
export function leadershipFromLog(
  process: string,
  logs: readonly { ts?: unknown; msg?: unknown }[],
  endOfLife: number,
): LeadershipInterval[] {
  const out: LeadershipInterval[] = []
  let from: number | undefined
  let to: number | undefined
  let workStopped: number | undefined
  const close = (): void => {
    if (from !== undefined) out.push({ process, from, to: workStopped ?? to ?? endOfLife })
    from = to = workStopped = undefined
  }
  for (const l of logs) {
    const ts = typeof l.ts === 'string' ? Date.parse(l.ts) : Number.NaN
    if (l.msg === 'leading: starting controllers') {
      close()
      from = ts
    } else if (from !== undefined && l.msg === WORK_STOPPED_LINE) workStopped ??= ts
    else if (from !== undefined && LEADERSHIP_END_LINES.has(String(l.msg))) to = ts
  }
  close()
  return out
}

/** Pairs of intervals of different processes that overlap by more than `toleranceMs`. */
export function leadershipOverlaps(
  intervals: readonly LeadershipInterval[],
  toleranceMs = 0,
): [LeadershipInterval, LeadershipInterval][] {
  const sorted = [...intervals].sort((a, b) => a.from - b.from)
  const out: [LeadershipInterval, LeadershipInterval][] = []
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i]!
      const b = sorted[j]!
      if (b.from >= a.to - toleranceMs) break
      if (a.process !== b.process && Math.min(a.to, b.to) - b.from > toleranceMs) out.push([a, b])
    }
  return out
}

/** Values that occur more than once. */
export function duplicates<T>(values: readonly T[]): T[] {
  const seen = new Set<T>()
  const dup = new Set<T>()
  for (const v of values) {
    if (seen.has(v)) dup.add(v)
    seen.add(v)
  }
  return [...dup]
}

/** A compact summary of a list of numbers. */
export function summary(values: readonly number[]): {
  n: number
  min: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
} {
  const n = values.length
  return {
    n,
    min: n ? Math.min(...values) : Number.NaN,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: n ? Math.max(...values) : Number.NaN,
    mean: n ? values.reduce((s, v) => s + v, 0) / n : Number.NaN,
  }
}
