/**
 * @module stats — medians, spreads and ratios to edgeop computed pair by pair.
 *
 * Each run of a peer is paired with edgeop's run of the same case in the same round (the
 * rounds interleave the peers, so a pair ran minutes apart at most, under similar machine
 * load); the ratio of a pair is peer ÷ edgeop, and the reported ratio is the median of the
 * pairs' ratios. That cancels slow drifts of the machine that a ratio of medians would not.
 */
import type { PeerId } from './peers.ts'

/** One measured run. */
export interface Sample {
  case: string
  peer: PeerId
  /**
   * The row it belongs to, naming the peer's wire format and flags, e.g. `client-go (protobuf)` or
   * `edgeop (JSON, eager, --optimize-for-size)`; the peer's id when unset (results before the wire-format and store rows).
   */
  row?: string
  round: number
  metrics: Record<string, number>
}

/** The row of a sample. */
export const rowOf = (s: Sample): string => s.row ?? s.peer

/** How a metric is shown. */
export interface MetricDef {
  key: string
  label: string
  unit: string
  better: 'lower' | 'higher'
  digits?: number
}

export interface Spread {
  median: number
  min: number
  max: number
  n: number
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  const mid = s.length >> 1
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number
}

export function spread(xs: readonly number[]): Spread | undefined {
  const v = xs.filter((x) => Number.isFinite(x))
  if (v.length === 0) return undefined
  return { median: median(v), min: Math.min(...v), max: Math.max(...v), n: v.length }
}

/** The metric's values for one row (or peer, for results without rows) and case. */
export function values(samples: readonly Sample[], c: string, row: string, key: string): number[] {
  return samples
    .filter((s) => s.case === c && rowOf(s) === row && Number.isFinite(s.metrics[key]))
    .map((s) => s.metrics[key] as number)
}

/**
 * Ratios row ÷ base row, one per round where both ran. `baseCase` names the base's case when it
 * differs (older results compared client-go's protobuf case with edgeop's JSON case); `baseRow` is
 * the edgeop row every other row is compared with (default `edgeop`, the row of older results).
 */
export function pairRatios(
  samples: readonly Sample[],
  c: string,
  row: string,
  key: string,
  baseCase: string = c,
  baseRow = 'edgeop',
): number[] {
  const out: number[] = []
  for (const s of samples) {
    if (s.case !== c || rowOf(s) !== row) continue
    const base = samples.find((b) => b.case === baseCase && rowOf(b) === baseRow && b.round === s.round)
    const a = s.metrics[key]
    const b = base?.metrics[key]
    if (a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b !== 0)
      out.push(a / b)
  }
  return out
}
