/**
 * @module context — the state one soak run shares between its phases: what was started, what was
 * measured, and what must be cleaned up.
 */
import { randomBytes } from 'node:crypto'
import type { TestEnv } from '../controlplane/env.ts'
import { FaultWindows } from './fault-windows.ts'
import type { Fleet } from './fleet.ts'
import { Invariants } from './invariants.ts'
import type { Plane } from './plane.ts'
import { ResilienceLog } from './resilience.ts'
import type { FaultRecord } from './results.ts'
import { createRng, type Rng } from './rng.ts'
import type { FaultEvent } from './schedule.ts'
import { resolveSettings, type Settings, type SoakOptions } from './settings.ts'
import { Traffic } from './traffic.ts'
import type { Workload } from './workload.ts'

/** Milliseconds spent in each phase. */
export interface Phases {
  setup: number
  chaos: number
  settle: number
  quiet: number
  teardown: number
  total: number
}

/** One soak run. Fields set by a phase stay undefined when an earlier phase failed. */
export interface SoakRun {
  readonly options: SoakOptions
  readonly settings: Settings
  /** Epoch ms the run started. */
  readonly start: number
  /** ms since {@link SoakRun.start}. */
  rel(): number
  readonly log: (line: string) => void
  readonly rng: Rng
  /** Random hex naming this run's cluster objects. */
  readonly run: string
  readonly inv: Invariants
  /** Undone at the end, last first; a failing one does not stop the others. */
  readonly cleanups: (() => Promise<unknown>)[]
  readonly phases: Phases
  readonly traffic: Traffic
  readonly records: FaultRecord[]
  /** Windows of the faults that can hold AppServices up, with their allowances. */
  readonly windows: FaultWindows
  /** The operators' breaker transitions and parked keys. */
  readonly resilience: ResilienceLog
  /** Convergence latencies (ms) the checker measured. */
  readonly latencies: number[]
  /** Aborted when sampling stops; {@link SoakRun.samplerLoops} end then. */
  readonly samplers: AbortController
  readonly samplerLoops: Promise<void>[]
  env?: TestEnv
  plane?: Plane
  /** Where the operators and agents reach the API server when it is not the fault proxy itself (`--link`). */
  serverUrl?: string
  fleet?: Fleet
  workload?: Workload
  /** ms since start when the chaos phase began (0 until it does). */
  chaosStart: number
  plan: FaultEvent[]
  settleMs?: number
  quietPerS?: number
}

/** A fresh run for `options`: nothing started yet. */
export function createRun(options: SoakOptions): SoakRun {
  const log = options.log ?? ((line: string) => process.stderr.write(`soak: ${line}\n`))
  const start = Date.now()
  return {
    options,
    settings: resolveSettings(options),
    start,
    rel: () => Date.now() - start,
    log,
    rng: createRng(options.seed),
    run: randomBytes(3).toString('hex'),
    inv: new Invariants(start, (id, message) => log(`INVARIANT ${id}: ${message}`)),
    cleanups: [],
    phases: { setup: 0, chaos: 0, settle: 0, quiet: 0, teardown: 0, total: 0 },
    traffic: new Traffic(start),
    records: [],
    windows: new FaultWindows(),
    resilience: new ResilienceLog(),
    latencies: [],
    samplers: new AbortController(),
    samplerLoops: [],
    chaosStart: 0,
    plan: [],
  }
}
