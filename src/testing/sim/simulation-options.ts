/**
 * @module simulation-options — what a simulation is given (processes, workload, resources, faults,
 * invariants) and what it reports.
 */
import type { KubeClient } from '../../client/kube-client.ts'
import type { ResourceType } from '../../client/resource.ts'
import type { Clock } from '../../core/clock.ts'
import type { KubeObject } from '../../core/types.ts'
import type { ApiServerModel } from './api-server-model.ts'
import type { Fault, FaultOptions } from './fault-plan.ts'
import type { ObjectStore, SpecSchema } from './object-store.ts'
import type { Prng } from './prng.ts'
import type { RequestTarget } from './request-target.ts'
import type { TraceEntry } from './trace.ts'
import type { VirtualClock } from './virtual-clock.ts'

/** What one incarnation of a simulated process gets. */
export interface ProcessContext {
  /** The process's name (also its User-Agent product, so the default field manager). */
  name: string
  /** 1 for the first start, +1 for each restart. */
  incarnation: number
  /** A real client whose requests the model answers. */
  client: KubeClient
  /** The virtual clock: give it to every component. */
  clock: Clock
  /** Aborted when the process crashes or the run ends. */
  signal: AbortSignal
  /** A generator of this incarnation's own (seeded). */
  random: Prng
  /** Records a step in the run's trace. */
  trace(what: string): void
}

/** A process of the simulated system (an operator replica, a node agent): restarted with fresh state after each crash. */
export interface SimulatedProcess {
  /** Unique among the processes: the trace, faults and the default field manager name it. */
  name: string
  /** Runs one incarnation until `ctx.signal` aborts. A rejection other than the abort is traced and the process restarted (a crash loop, as under a kubelet). */
  run(ctx: ProcessContext): Promise<void> | void
}

/** A property of the cluster: undefined when it holds, else what is wrong. */
export interface Invariant {
  /** Named in the failure report. */
  name: string
  /** Undefined when the property holds, else what is wrong; objects from `cluster` are the store's own (read, never modify). */
  check(cluster: SimulatedCluster): string | undefined
}

/** One successful write, as {@link WriteInvariant}s see it. */
export interface SimulatedWrite {
  /** The simulated process that sent it. */
  process: string
  /** HTTP method. */
  method: string
  /** What it addressed. */
  target: RequestTarget
}

/** A property of every write: undefined when it holds, else what is wrong. */
export interface WriteInvariant {
  /** Named in the failure report. */
  name: string
  /** Checked with the store as the write left it. */
  check(write: SimulatedWrite, cluster: SimulatedCluster): string | undefined
}

/** A resource's rules in the model. */
export interface SimulatedResource {
  /** The resource the rules are for. */
  type: ResourceType
  /** Default true, except for the built-ins without one (ConfigMaps, Secrets, Leases, Events, RBAC). */
  statusSubresource?: boolean
  /** The CRD's spec schema (the operator's own zod schema): validated and defaulted on every write. */
  spec?: SpecSchema
  /** Field selector paths beyond `metadata.name` and `metadata.namespace`, as the CRD's `selectableFields` (e.g. `spec.nodeName`). */
  selectableFields?: readonly string[]
}

/** The simulated cluster, as invariants and setup hooks see it. */
export interface SimulatedCluster {
  /** The API server. */
  readonly model: ApiServerModel
  /** Its objects. */
  readonly store: ObjectStore
  /** The run's clock. */
  readonly clock: VirtualClock
  /** The objects of `type` now: the store's own, read them and never modify them. */
  list<T extends KubeObject = KubeObject>(type: ResourceType): T[]
  /** Records a step in the trace. */
  trace(who: string, what: string): void
}

/** Options of {@link simulate}. */
export interface SimulationOptions {
  /** Chooses the schedule, the faults and every jitter: the same seed, the same run. */
  seed: number
  /** Virtual run length (ms). */
  durationMs: number
  /** Liveness bound: faults stop this long before the end, and liveness invariants must hold at the end. Default {@link DEFAULT_SETTLE_MS}. */
  settleMs?: number
  /** The system under test, started at once; faults hit only these. */
  processes: readonly SimulatedProcess[]
  /** The user's actions (create, update, delete objects): a process of its own that no fault hits. */
  workload?: (ctx: ProcessContext) => Promise<void>
  /** Rules of resources beyond the defaults (status subresource everywhere but the built-ins without one; no schema). */
  resources?: readonly SimulatedResource[]
  /** Fault mix; false for none. Default: every kind, one per 20 virtual s on average. */
  faults?: FaultOptions | false
  /** Checked after every step. */
  safety?: readonly Invariant[]
  /** Checked at the end. */
  liveness?: readonly Invariant[]
  /** Checked at every successful write, before its answer reaches the writer (who may write what, when). */
  writeSafety?: readonly WriteInvariant[]
  /** Fault ids to leave out (a minimized replay). Default: from {@link SKIP_ENV}. */
  skipFaults?: readonly number[]
  /** Runs before any process starts (seed objects, built-in controllers such as {@link deploymentRollouts}). */
  setup?: (cluster: SimulatedCluster) => void
  /** Shown in the replay command; default the running test file. */
  file?: string
}

/** What went wrong in a failed run. */
export interface SimulationFailure {
  /** Which list the invariant was in. */
  kind: 'safety' | 'liveness'
  /** Its name. */
  invariant: string
  /** What it said was wrong. */
  message: string
  /** Virtual ms. */
  at: number
}

/** The outcome of one run. */
export interface SimulationResult {
  /** The seed run. */
  seed: number
  /** The first invariant that failed, or undefined. */
  failure: SimulationFailure | undefined
  /** Virtual ms simulated. */
  virtualMs: number
  /** Wall ms it took. */
  wallMs: number
  /** Timers fired (steps). */
  steps: number
  /** Requests the model (or a fault) answered. */
  requests: number
  /** The faults injected (skipped ones left out). */
  faults: readonly Fault[]
  /** Invariant evaluations. */
  checks: number
  /** The latest steps (bounded: `TRACE_ENTRIES`). */
  trace: readonly TraceEntry[]
  /** Fault ids left out (`skipFaults`). */
  skipped: readonly number[]
  /** The command that replays this run. */
  replay: string
}
