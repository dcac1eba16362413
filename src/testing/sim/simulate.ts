/**
 * @module simulate — runs operators against the in-memory API server under one virtual clock and a
 * seeded schedule, injects the seed's faults, and checks invariants after every step.
 */
import { relative } from 'node:path'
import { argv, cwd, env } from 'node:process'
import { KubeClient } from '../../client/kube-client.ts'
import type { ResourceType } from '../../client/resource.ts'
import type { ClusterConfig } from '../../config/cluster-config.ts'
import type { KubeObject } from '../../core/types.ts'
import type { ExchangeResponse } from '../../transport/exchange.ts'
import { ApiServerModel, type Interception, statusResponse } from './api-server-model.ts'
import { ApiStatus } from './api-status.ts'
import { type Fault, planFaults } from './fault-plan.ts'
import { startGarbageCollector } from './garbage-collector.ts'
import { ObjectStore } from './object-store.ts'
import { Prng } from './prng.ts'
import type {
  Invariant,
  ProcessContext,
  SimulatedCluster,
  SimulatedProcess,
  SimulationFailure,
  SimulationOptions,
  SimulationResult,
} from './simulation-options.ts'
import { Trace } from './trace.ts'
import { VirtualClock } from './virtual-clock.ts'

/** Env variable naming the one seed to run instead of a test's range (the replay command sets it). */
export const SEED_ENV = 'EDGEOP_SIM_SEED'
/** Env variable listing fault ids to leave out (the replay command of a minimized failure sets it). */
export const SKIP_ENV = 'EDGEOP_SIM_SKIP'

/** Virtual time a crashed process stays down before it restarts when its fault gives none: 1 s, a kubelet's first restart backoff is 10 s but the simulator wants restarts to overlap work. */
export const DEFAULT_RESTART_MS = 1_000
/**
 * Default liveness bound: 2 virtual minutes after the last fault, for a Lease to expire and be taken
 * (15 s), watches to relist and the last failed keys' retries (800 ms doubling, `defaultRetryPolicy`)
 * to come due; a key backed off past it is reported by the liveness invariants, as it should be.
 */
export const DEFAULT_SETTLE_MS = 120_000

const SIM_CONFIG: ClusterConfig = {
  server: 'https://simulated.invalid',
  tls: { insecureSkipVerify: false },
  namespace: 'default',
  source: 'simulation',
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Runs one seed. Never throws for a failed invariant: see `failure` (and {@link expectSimulation}).
 *
 * Guarantees: the same options give the same run (schedule, faults, requests, trace), as long as
 * the processes take their time from their context's clock. `Math.random` is a seeded generator
 * while the run lasts (the library's jitter defaults to it), so runs must not overlap in one process.
 */
export async function simulate(o: SimulationOptions): Promise<SimulationResult> {
  const wallStart = performance.now()
  const root = new Prng(o.seed)
  const clock = new VirtualClock(root.fork())
  const faultPrng = root.fork()
  const requestPrng = root.fork()
  const processPrng = root.fork()
  const store = new ObjectStore()
  for (const r of o.resources ?? [])
    store.setRules(`${r.type.group}/${r.type.resource}`, {
      statusSubresource: r.statusSubresource ?? true,
      spec: r.spec,
      selectableFields: r.selectableFields,
    })
  const model = new ApiServerModel(clock, store)
  const trace = new Trace()
  const t = (who: string, what: string) => trace.add(clock.elapsed, who, what)
  const settleMs = o.settleMs ?? DEFAULT_SETTLE_MS
  const faultEnd = Math.max(0, o.durationMs - settleMs)
  const skipped = o.skipFaults ?? parseSkip(env[SKIP_ENV])
  const names = o.processes.map((p) => p.name)
  const planned = o.faults === false ? [] : planFaults(faultPrng, names, faultEnd, o.faults)
  const faults = planned.filter((f) => !skipped.includes(f.id))
  const cluster: SimulatedCluster = {
    model,
    store,
    clock,
    list: <T extends KubeObject>(type: ResourceType) => store.list(`${type.group}/${type.resource}`) as T[],
    trace: t,
  }
  // Components default their jitter to Math.random (captured when built): seeded for the run.
  const savedRandom = Math.random
  const jitter = root.fork()
  Math.random = () => jitter.next()
  const stopGc = startGarbageCollector(store, clock)
  o.setup?.(cluster)

  // Fault state per process.
  const down = new Set<string>()
  const partitioned = new Set<string>()
  const armedCrash = new Set<string>()
  const active = new Map<string, Set<'throttle' | 'server-error' | 'conflict'>>()
  const running = new Map<string, { abort: AbortController; client: KubeClient; incarnation: number }>()
  const incarnations = new Map<string, number>()
  let stopping = false

  const start = (
    p: SimulatedProcess | { name: string; run: (ctx: ProcessContext) => unknown },
    faulted: boolean,
  ) => {
    const incarnation = (incarnations.get(p.name) ?? 0) + 1
    incarnations.set(p.name, incarnation)
    const abort = new AbortController()
    const client = new KubeClient(SIM_CONFIG, {
      exchange: model.exchange(p.name),
      clock,
      userAgent: `${p.name}/simulated`,
    })
    running.set(p.name, { abort, client, incarnation })
    t(p.name, incarnation === 1 ? 'start' : `restart (incarnation ${incarnation})`)
    const ctx: ProcessContext = {
      name: p.name,
      incarnation,
      client,
      clock,
      signal: abort.signal,
      random: processPrng.fork(),
      trace: (what) => t(p.name, what),
    }
    void (async () => {
      try {
        await p.run(ctx)
      } catch (err) {
        if (abort.signal.aborted || stopping) return
        t(p.name, `exited: ${(err as Error).message?.split('\n')[0]}`)
      }
      if (abort.signal.aborted || stopping || !faulted) return
      // Exited on its own (lost its Lease, a fatal error): restarted like a pod.
      running.delete(p.name)
      void client.close()
      clock.setTimer(() => {
        if (!stopping && !down.has(p.name) && !running.has(p.name)) start(p, faulted)
      }, DEFAULT_RESTART_MS)
    })()
  }

  const crash = (name: string, forMs: number, why: string) => {
    const r = running.get(name)
    if (!r || down.has(name)) return
    t(name, `crash (${why}); down for ${forMs} ms`)
    down.add(name)
    running.delete(name)
    r.abort.abort(new Error(`${name} crashed`))
    model.cutWatches(name, true)
    void r.client.close()
    clock.setTimer(() => {
      down.delete(name)
      const p = o.processes.find((x) => x.name === name)
      if (p && !stopping) start(p, true)
    }, forMs)
  }

  let failure: SimulationFailure | undefined
  let checks = 0
  model.onWrite = (process, method, target, status) => {
    if (status >= 400) return
    t(
      process,
      `${method} ${target.resource}/${target.name ?? ''}${target.subresource ? `/${target.subresource}` : ''} → ${status}`,
    )
    for (const inv of o.writeSafety ?? []) {
      if (failure) break
      checks++
      const message = inv.check({ process, method, target }, cluster)
      if (message !== undefined) {
        failure = { kind: 'safety', invariant: inv.name, message, at: clock.elapsed }
        t('invariant', `safety ${inv.name} violated: ${message}`)
      }
    }
    if (armedCrash.delete(process)) crash(process, DEFAULT_RESTART_MS, 'right after a write')
  }
  model.interceptor = (process, req, target): Interception => {
    if (partitioned.has(process) || down.has(process))
      return { error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }
    const kinds = active.get(process)
    if (!kinds || !target) return undefined
    const write = req.method !== 'GET'
    if (kinds.has('throttle') && requestPrng.chance(0.5)) {
      t(process, `429 for ${req.method} ${target.resource}`)
      return answer(new ApiStatus(429, 'TooManyRequests', 'the server has received too many requests'), {
        'retry-after': '1',
      })
    }
    if (kinds.has('server-error') && requestPrng.chance(0.3)) {
      t(process, `503 for ${req.method} ${target.resource}`)
      return answer(
        new ApiStatus(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
        {
          'retry-after': '1',
        },
      )
    }
    const apply = (req.headers['content-type'] ?? '').startsWith('application/apply-patch')
    if (kinds.has('conflict') && write && !apply && req.method !== 'POST' && requestPrng.chance(0.5)) {
      t(process, `409 for ${req.method} ${target.resource}/${target.name}`)
      return answer(
        new ApiStatus(
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${target.resource} "${target.name}": the object has been modified; please apply your changes to the latest version and try again`,
        ),
      )
    }
    return undefined
  }

  const inject = (f: Fault) => {
    t('fault', `#${f.id} ${f.kind} ${f.process}${f.forMs ? ` for ${f.forMs} ms` : ''}`)
    const later = (fn: () => void) => clock.setTimer(fn, f.forMs)
    switch (f.kind) {
      case 'crash':
        crash(f.process, f.forMs, 'planned')
        break
      case 'crash-after-write':
        armedCrash.add(f.process)
        break
      case 'partition':
        partitioned.add(f.process)
        model.cutWatches(f.process, true)
        later(() => partitioned.delete(f.process))
        break
      case 'stale-reads':
      case 'coalesce': {
        const view =
          f.kind === 'coalesce'
            ? { lagMs: 2_000, coalesce: true }
            : { lagMs: Math.round(f.forMs / 2), coalesce: false }
        model.views.set(f.process, view)
        later(() => {
          if (model.views.get(f.process) === view) model.views.delete(f.process)
        })
        break
      }
      case 'watch-drop':
        model.cutWatches(f.process, true)
        break
      case 'compact':
        store.compact()
        model.cutWatches(undefined, false)
        break
      default: {
        const kinds = active.get(f.process) ?? new Set()
        kinds.add(f.kind)
        active.set(f.process, kinds)
        later(() => kinds.delete(f.kind as 'throttle'))
      }
    }
  }
  for (const f of faults) clock.setTimer(() => inject(f), f.at)

  for (const p of o.processes) start(p, true)
  if (o.workload) {
    const w = o.workload
    start({ name: 'workload', run: (ctx) => w(ctx) }, false)
  }

  let steps = 0
  const checkAll = (kind: 'safety' | 'liveness', list: readonly Invariant[] | undefined) => {
    for (const inv of list ?? []) {
      checks++
      let message: string | undefined
      try {
        message = inv.check(cluster)
      } catch (err) {
        message = `the check threw: ${(err as Error).message}`
      }
      if (message !== undefined) {
        failure = { kind, invariant: inv.name, message, at: clock.elapsed }
        t('invariant', `${kind} ${inv.name} violated: ${message}`)
        return
      }
    }
  }
  const end = clock.now() + o.durationMs
  for (;;) {
    await settle()
    checkAll('safety', o.safety)
    if (failure) break
    if (!clock.fireNext(end)) break
    steps++
  }
  if (!failure) checkAll('liveness', o.liveness)

  stopping = true
  for (const [, r] of running) {
    r.abort.abort(new Error('simulation ended'))
    void r.client.close()
  }
  model.cutWatches(undefined, false)
  stopGc()
  await settle()
  Math.random = savedRandom
  const file = o.file ?? relative(cwd(), argv[1] ?? '')
  const skipPart = skipped.length ? ` ${SKIP_ENV}=${skipped.join(',')}` : ''
  return {
    seed: o.seed,
    failure,
    virtualMs: clock.elapsed,
    wallMs: performance.now() - wallStart,
    steps,
    requests: model.requests,
    faults,
    checks,
    trace: trace.entries,
    skipped,
    replay: `${SEED_ENV}=${o.seed}${skipPart} node --test ${file}`,
  }
}

function answer(s: ApiStatus, headers: Record<string, string> = {}): { response: ExchangeResponse } {
  return { response: statusResponse(s, headers) }
}

export function parseSkip(v: string | undefined): number[] {
  return (v ?? '')
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number)
}
