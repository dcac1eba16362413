/**
 * @module replay — seeds from the environment, and a failed run's report: the command that replays
 * it and the trace of a minimized run.
 */
import { env } from 'node:process'
import { SEED_ENV, simulate } from './simulate.ts'
import type { SimulationOptions, SimulationResult } from './simulation-options.ts'
import { formatTrace } from './trace.ts'

/** Faulted runs re-run to minimize a failure, at most (each drops one fault). */
export const MAX_MINIMIZE_RUNS = 40

/**
 * The seeds a test runs: `count` seeds from `first`, or only the one in {@link SEED_ENV} when it is
 * set (the replay command).
 */
export function simulationSeeds(first: number, count: number): number[] {
  const one = env[SEED_ENV]
  if (one !== undefined && one !== '') return [Number(one)]
  return Array.from({ length: count }, (_, i) => first + i)
}

/**
 * Runs `o` and throws when an invariant fails: the error names the invariant, prints the command
 * that replays the run and the trace of a minimized run (faults left out one by one while the same
 * invariant still fails, at most {@link MAX_MINIMIZE_RUNS} re-runs).
 */
export async function expectSimulation(o: SimulationOptions): Promise<SimulationResult> {
  const first = await simulate(o)
  if (!first.failure) return first
  let best = first
  let skip = [...first.skipped]
  let runs = 0
  for (const f of first.faults) {
    if (runs++ >= MAX_MINIMIZE_RUNS) break
    const attempt = await simulate({ ...o, skipFaults: [...skip, f.id] })
    if (attempt.failure?.invariant === first.failure.invariant) {
      best = attempt
      skip = [...skip, f.id]
    }
  }
  throw new Error(failureReport(best))
}

/** The report of a failed run: invariant, replay command, faults and the trace's last steps. */
export function failureReport(r: SimulationResult, lastSteps = 40): string {
  const f = r.failure
  if (!f) return `seed ${r.seed}: no failure`
  const faultLines = formatTrace(
    r.faults.map((x) => ({
      at: x.at,
      who: 'fault',
      what: `#${x.id} ${x.kind} ${x.process}${x.forMs ? ` for ${x.forMs} ms` : ''}`,
    })),
  )
  return [
    `seed ${r.seed}: ${f.kind} invariant "${f.invariant}" failed at ${(f.at / 1000).toFixed(3)} virtual s: ${f.message}`,
    `replay: ${r.replay}`,
    `faults (${r.faults.length}):`,
    faultLines || '  none',
    `last ${lastSteps} steps:`,
    formatTrace(r.trace.slice(-lastSteps)),
  ].join('\n')
}
