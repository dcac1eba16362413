/**
 * @module fault-plan — the faults of one run, drawn from its seed: when, which kind, which process, how long.
 *
 * Sieve's three patterns (OSDI '22: crash right after a write and restart with fresh caches;
 * intermediate states a controller never observes; stale reads from a lagging view) and the
 * network's: dropped watches, 429/5xx with Retry-After, conflicts, compaction (410), a process cut off
 * from the server (a partitioned leader).
 */
import type { Prng } from './prng.ts'

/** Every fault kind the simulator injects. */
export const FAULT_KINDS = [
  'crash',
  'crash-after-write',
  'partition',
  'stale-reads',
  'coalesce',
  'watch-drop',
  'compact',
  'throttle',
  'server-error',
  'conflict',
] as const

/** One kind of fault. */
export type FaultKind = (typeof FAULT_KINDS)[number]

/** One planned fault. */
export interface Fault {
  /** Index in the plan, named by the trace and by `skipFaults`. */
  id: number
  /** What happens. */
  kind: FaultKind
  /** Virtual ms since the start. */
  at: number
  /** The process it hits. */
  process: string
  /** How long it lasts (ms; 0 for instant faults). */
  forMs: number
}

/** How many faults a run gets and of which kinds. */
export interface FaultOptions {
  /** Mean virtual ms between two faults. Default {@link DEFAULT_FAULT_INTERVAL_MS}. */
  meanIntervalMs?: number
  /** Kinds to draw from. Default: all of {@link FAULT_KINDS}. */
  kinds?: readonly FaultKind[]
}

/** Mean gap between faults: 20 virtual seconds, so a 10-minute run sees about 30, most of them overlapping a reconcile. */
export const DEFAULT_FAULT_INTERVAL_MS = 20_000
/** Longest a lasting fault (partition, stale reads, throttling) holds: 30 s, longer than a Lease's 15 s duration, so a partitioned leader loses it. */
export const MAX_FAULT_MS = 30_000

/** Draws the faults of `[0, untilMs)` for `processes` from `prng`. */
export function planFaults(
  prng: Prng,
  processes: readonly string[],
  untilMs: number,
  o: FaultOptions = {},
): Fault[] {
  const kinds = o.kinds ?? FAULT_KINDS
  const mean = o.meanIntervalMs ?? DEFAULT_FAULT_INTERVAL_MS
  const out: Fault[] = []
  if (kinds.length === 0 || processes.length === 0) return out
  let at = 0
  for (;;) {
    at += Math.max(1, Math.round(-Math.log(1 - prng.next()) * mean))
    if (at >= untilMs) break
    const kind = prng.pick(kinds)
    const instant = kind === 'crash-after-write' || kind === 'watch-drop' || kind === 'compact'
    const crash = kind === 'crash'
    out.push({
      id: out.length,
      kind,
      at,
      process: prng.pick(processes),
      forMs: instant ? 0 : crash ? 1_000 + prng.int(10_000) : 1_000 + prng.int(MAX_FAULT_MS),
    })
  }
  return out
}
