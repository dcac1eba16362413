/**
 * @module soak — the chaos soak: the AppService operator (two leader-elected replicas) and
 * three NodeConfig agents, all the built artifact in their own processes, run against the
 * local control plane through a fault proxy while a driver churns AppServices and
 * NodeConfigs and a seeded schedule injects faults; invariants are checked all along and
 * at the end. {@link runSoak} returns the report; `run.ts` is the command line.
 *
 * Phases: setup (control plane + controllers, CRDs, RBAC, nodes, processes, an initial
 * population) → chaos (driver + fault schedule, `minutes` long) → settle (faults cleared,
 * driver stopped, wait until everything converged) → quiet window (no change, no fault:
 * the request rate must fall to the idle floor) → teardown (delete everything through the
 * operator, check the database and the node roots end empty, SIGTERM every process).
 */
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { leaseRules, operatorRules } from '../../src/operators/appservice/manifests.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { trackTempDir, untrackTempDir } from '../controlplane/cleanup.ts'
import { getTestEnv, type TestEnv } from '../controlplane/env.ts'
import type { FaultHandle, FaultRule, RequestRecord } from '../controlplane/fault-proxy.ts'
import { grantAgentRbac, installNodeConfigCrd } from '../integration/fixtures/nodeconfig-harness.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { ARTIFACT } from '../support/operator-process.ts'
import { Checker, CONVERGED, DATABASE, type Evaluation, NODE_FILES } from './checker.ts'
import { Fleet, type HeapSample, METRICS_INTERVAL_MS, RSS_INTERVAL_MS } from './fleet.ts'
import { type InvariantResult, Invariants } from './invariants.ts'
import { createRng } from './rng.ts'
import { buildSchedule, countByKind, FAULT_KINDS, type FaultEvent, type FaultKind } from './schedule.ts'
import {
  type LeadershipInterval,
  leadershipOverlaps,
  type RssVerdict,
  rssGrowth,
  summary,
  windowRates,
} from './stats.ts'
import { managedFiles, nodeObject, RUN_LABEL, type SoakNode, Workload } from './workload.ts'

/** Deliberate breakage, to show that the soak notices. */
export type Sabotage =
  /** The database stand-in forgets entries on every PUT, so re-ensuring creates duplicates. */
  | 'duplicate-db'
  /** A 503 for every AppService status write stays on after the chaos phase. */
  | 'fault-left-on'

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Length of the chaos phase in minutes (≥ 1). */
  minutes: number
  seed: number
  /** Driver operations per second (default {@link DEFAULT_RATE}). */
  rate?: number
  /** Live AppServices / NodeConfigs the driver aims for. */
  appTarget?: number
  nodeConfigTarget?: number
  /** A change older than this must be reflected everywhere (default {@link DEFAULT_BOUND_MS}). */
  boundMs?: number
  sabotage?: Sabotage
  /** Every process's log is written here (`<process>.log`, JSON lines) when the run fails (or always, with `keepLogs`). */
  logDir?: string
  keepLogs?: boolean
  /** `--log-level` of the operator and agent processes (default info). */
  logLevel?: 'debug' | 'info'
  /** Progress lines (default: stderr). */
  log?: (line: string) => void
}

export const DEFAULT_RATE = 2
export const DEFAULT_APP_TARGET = 30
export const DEFAULT_NODECONFIG_TARGET = 10
/** Convergence bound after the last change to an object (see the report for measured latencies). */
export const DEFAULT_BOUND_MS = 60_000
/** How long a teardown may take to delete everything through the operator and the agents. */
export const TEARDOWN_TIMEOUT_MS = 60_000
/** The quiet window at the end. */
export const QUIET_MS = 15_000
/** The checker reads the world this often during the chaos phase. */
export const CHECK_INTERVAL_MS = 3000
/** Requests per second through the proxy (all five processes), averaged over 10 s, during chaos. */
export const RATE_BOUND = 40
/** Requests per second through the proxy in the quiet window (Lease renewals and little else). */
export const QUIET_RATE_BOUND = 4
/** RSS growth allowed after warm-up. */
export const RSS_GROWTH_BOUND = 0.1
/**
 * Warm-up: 30 s or a tenth of the chaos phase, whichever is longer (V8 sizes its heap over
 * minutes), from the later of chaos start, process start and leadership start.
 */
export const RSS_WARMUP_MS = 30_000
export const RSS_WARMUP_FRACTION = 0.1
export const RSS_WINDOW_MS = 20_000
export const RSS_MIN_SPAN_MS = 45_000
/** Leader election timings of the operator replicas. */
export const LEASE = { durationMs: 10_000, renewMs: 7000, retryMs: 2000 }
/** A second with this many requests through the proxy is broken down in the report. */
const HOT_SECOND = 40

/** First 12 hex digits of the artifact's sha256. */
function artifactDigest(): string {
  try {
    return createHash('sha256').update(readFileSync(ARTIFACT)).digest('hex').slice(0, 12)
  } catch {
    return 'unknown'
  }
}

/** `git rev-parse --short HEAD` of the tree the soak runs from, `+dirty` when src/ has changes. */
function sourceCommit(): string {
  try {
    const cwd = join(import.meta.dirname, '../..')
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', 'src'], { cwd, encoding: 'utf8' }).trim()
    return dirty === '' ? head : `${head}+dirty`
  } catch {
    return 'unknown'
  }
}

/** A request path with namespace and object names replaced by `*`. */
function requestShape(path: string): string {
  return path
    .replace(/\/namespaces\/[^/]+/, '/namespaces/*')
    .replace(/\/(appservices|deployments|services|nodeconfigs|leases|events|nodes)\/[^/]+/, '/$1/*')
}

/** Rule-based faults not consumed within this are cleared. */
const RULE_TTL_MS = 20_000

/** One injected fault. */
export interface FaultRecord {
  kind: FaultKind
  /** ms since the soak started: scheduled, and when it was applied. */
  scheduledMs: number
  atMs: number
  detail: string
  /** Rule-based faults: requests it hit. */
  hits?: number
  /** Restart/compaction call, outage length, stall length (ms). */
  durationMs?: number
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
    /** Seconds with at least {@link HOT_SECOND} requests: what they were. */
    busySeconds: { second: number; requests: number; top: string[] }[]
  }
  convergence: { boundS: number; latencyS: ReturnType<typeof summary>; settleS: number | undefined }
  leadership: { intervals: { process: string; fromS: number; toS: number }[]; failovers: Fleet['failovers'] }
  processes: ProcessReport[]
  rssSeries: { id: string; slot: string; samples: [number, number][] }[]
  invariants: InvariantResult[]
}

const RBAC = 'rbac.authorization.k8s.io'
const rbacType = (resource: string, kind: string, namespaced: boolean): ResourceType => ({
  group: RBAC,
  version: 'v1',
  resource,
  namespaced,
  kind,
})

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = (): void => {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

/** Runs `fn` every `ms` (never overlapping itself) until `signal` aborts. */
async function every(ms: number, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    const t0 = Date.now()
    await fn().catch(() => {})
    await sleep(Math.max(0, ms - (Date.now() - t0)), signal)
  }
}

/**
 * A front for the database stand-in that forgets an entry before every PUT, so the
 * stand-in creates it again: what a service that ignored idempotency keys would do.
 */
async function forgetfulDatabase(db: DatabaseStandin): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const key = decodeURIComponent(/^\/v1\/databases\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '')
      if (req.method === 'PUT' && key) db.entries.delete(key)
      fetch(`${db.url}${req.url}`, {
        method: req.method ?? 'GET',
        headers: { 'content-type': 'application/json' },
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': 'application/json' })
          res.end(Buffer.from(await r.arrayBuffer()))
        })
        .catch(() => {
          res.writeHead(502)
          res.end()
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Runs the soak and returns its report (never throws for an invariant; `report.passed` says). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`soak: ${line}\n`))
  const rate = options.rate ?? DEFAULT_RATE
  const appTarget = options.appTarget ?? DEFAULT_APP_TARGET
  const nodeConfigTarget = options.nodeConfigTarget ?? DEFAULT_NODECONFIG_TARGET
  const boundMs = options.boundMs ?? DEFAULT_BOUND_MS
  const chaosMs = Math.round(options.minutes * 60_000)
  const warmupMs = Math.max(RSS_WARMUP_MS, chaosMs * RSS_WARMUP_FRACTION)
  const start = Date.now()
  const rel = (): number => Date.now() - start
  const rng = createRng(options.seed)
  const run = randomBytes(3).toString('hex')
  const artifact = artifactDigest()
  const commit = sourceCommit()

  const inv = new Invariants(start, (id, message) => log(`INVARIANT ${id}: ${message}`))
  inv.define(
    CONVERGED,
    'Every AppService converges to its spec: status.observedGeneration == generation, Ready=True at that generation, readyReplicas == spec.replicas, Deployment and Service match the spec, Degraded=False (InvalidConfiguration for an invalid spec); a deleted one is gone',
    `${boundMs / 1000} s after its last change (so everything within ${boundMs / 1000} s after the chaos ends)`,
  )
  inv.define(
    DATABASE,
    'The database stand-in holds exactly one entry per live AppService with database.enabled, none for deleted ones; no key is ever created twice; empty after everything is deleted',
    `duplicates: never; missing/leaked: ${boundMs / 1000} s after the last change`,
  )
  inv.define(
    NODE_FILES,
    'Files under each node root match the NodeConfigs selecting that node exactly (content and mode, nothing extra); each NodeConfig reports Applied at its generation for exactly the selected nodes; roots empty after everything is deleted',
    `${boundMs / 1000} s after the last change to the NodeConfig, the node's labels or the file`,
  )
  inv.define(
    'single-leader',
    'Never two operator replicas leading or reconciling at once (leader_election_master_status, controller_runtime_active_workers, reconcile counters of standbys, leadership intervals and reconcile lines in the logs)',
    'never (metrics every second; logs at the end)',
  )
  inv.define(
    'request-rate',
    'API requests through the proxy (all operator and agent processes) stay under a bound: no hot loop',
    `≤ ${RATE_BOUND} req/s over every 10 s window; ≤ ${QUIET_RATE_BOUND} req/s in the ${QUIET_MS / 1000} s quiet window`,
  )
  inv.define(
    'rss-flat',
    'RSS of each operator and agent process stays flat after warm-up',
    `growth < ${RSS_GROWTH_BOUND * 100} % (median of the first ${RSS_WINDOW_MS / 1000} s after a ${Math.round(warmupMs / 1000)} s warm-up vs the last ${RSS_WINDOW_MS / 1000} s; processes observed ≥ ${RSS_MIN_SPAN_MS / 1000} s after warm-up)`,
  )
  inv.define(
    'no-crash',
    'Processes end only when the schedule kills them, when an operator loses its Lease (exit 1, EDGEOP_ERR_LEADER), or on SIGTERM at the end (exit 0)',
    'never otherwise',
  )
  inv.define(
    'faults-injected',
    'Every kind of fault was injected at least once, and none is left on',
    'each kind ≥ 1',
  )

  const cleanups: (() => Promise<unknown>)[] = []
  const phases = { setup: 0, chaos: 0, settle: 0, quiet: 0, teardown: 0, total: 0 }
  const records: FaultRecord[] = []
  const handles = new Map<FaultHandle, FaultRecord>()
  const perSecond: number[] = []
  const byIdentity: Record<string, number> = {}
  const faulted: RequestRecord[] = []
  const busySeconds: SoakReport['requests']['busySeconds'] = []
  const byShape = new Map<string, number>()
  const latencies: number[] = []
  let quietPerS: number | undefined
  let settleMs: number | undefined
  let env: TestEnv | undefined
  let fleet: Fleet | undefined
  let workload: Workload | undefined
  let chaosStart = 0
  let databaseBackAt = Number.NEGATIVE_INFINITY
  let plan: FaultEvent[] = []
  const samplers = new AbortController()
  const samplerLoops: Promise<void>[] = []

  try {
    // ---- setup ----
    log(`setup: seed ${options.seed}, chaos ${options.minutes} min, run ${run}`)
    env = await getTestEnv({ exclusive: true })
    await env.startControllers()
    const a = adminClient(env, env.server)
    cleanups.push(() => a.close())
    await installAppServiceCrd(a)
    await installNodeConfigCrd(a)
    const namespaces = [await env.createNamespace('soak-a'), await env.createNamespace('soak-b')]
    const opNs = await env.createNamespace('soak-op')
    cleanups.push(async () => {
      for (const ns of [...namespaces, opNs])
        await a
          .resource(CORE_TYPES.namespaces)
          .delete(ns)
          .catch(() => {})
    })

    // The operator: deploy/'s ClusterRole and leader-election Role, bound to a client-certificate user.
    const user = `edgeop-soak-${run}`
    const ref = (kind: string, name: string) => ({ apiGroup: RBAC, kind, name })
    await a.resource(rbacType('clusterroles', 'ClusterRole', false)).create({
      metadata: { name: user },
      rules: operatorRules(),
    } as never)
    await a.resource(rbacType('clusterrolebindings', 'ClusterRoleBinding', false)).create({
      metadata: { name: user },
      roleRef: ref('ClusterRole', user),
      subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
    } as never)
    cleanups.push(async () => {
      await a
        .resource(rbacType('clusterrolebindings', 'ClusterRoleBinding', false))
        .delete(user)
        .catch(() => {})
      await a
        .resource(rbacType('clusterroles', 'ClusterRole', false))
        .delete(user)
        .catch(() => {})
    })
    await a
      .resource(rbacType('roles', 'Role', true), opNs)
      .create({ metadata: { name: 'leader' }, rules: leaseRules() } as never)
    await a.resource(rbacType('rolebindings', 'RoleBinding', true), opNs).create({
      metadata: { name: 'leader' },
      roleRef: ref('Role', 'leader'),
      subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
    } as never)
    // The agents: deploy/agent/rbac.yaml, bound to a group.
    const group = `edgeop:soak-agents-${run}`
    const agentBinding = `edgeop-soak-agents-${run}`
    await grantAgentRbac(a, group, agentBinding)
    cleanups.push(async () => {
      await a
        .resource(rbacType('clusterrolebindings', 'ClusterRoleBinding', false))
        .delete(agentBinding)
        .catch(() => {})
      await a
        .resource(rbacType('rolebindings', 'RoleBinding', true), 'default')
        .delete(agentBinding)
        .catch(() => {})
    })

    // Three fake Nodes with different labels, three roots.
    const nodes: SoakNode[] = []
    for (const [slot, labels] of [
      ['a', { role: 'edge', zone: 'north' }],
      ['b', { role: 'edge', zone: 'south' }],
      ['c', { role: 'core', zone: 'south' }],
    ] as const) {
      const name = `soak-${run}-${slot}`
      const root = await realpath(await mkdtemp(join(tmpdir(), `edgeop-soak-${slot}-`)))
      trackTempDir(root)
      cleanups.push(async () => {
        await rm(root, { recursive: true, force: true })
        untrackTempDir(root)
      })
      const node: SoakNode = { slot: `agent-${slot}`, name, root, labels: { [RUN_LABEL]: run, ...labels } }
      await a.resource(CORE_TYPES.nodes).create(nodeObject(node))
      cleanups.push(() =>
        a
          .resource(CORE_TYPES.nodes)
          .delete(name)
          .catch(() => {}),
      )
      nodes.push(node)
    }

    const p = await env.startFaultProxy()
    cleanups.push(() => p.close())
    const d = await startDatabaseStandin()
    cleanups.push(() => d.close())
    let databaseUrl = d.url
    if (options.sabotage === 'duplicate-db') {
      const shim = await forgetfulDatabase(d)
      cleanups.push(() => shim.close())
      databaseUrl = shim.url
      log('SABOTAGE: the database forgets entries before every PUT (duplicates expected)')
    }
    const opIdentity = await env.userKubeconfig(user)
    const opKubeconfig = await env.writeKubeconfig({
      server: p.url,
      credentials: { certPem: opIdentity.certPem, keyPem: opIdentity.keyPem },
    })
    const operatorArgs = [
      'run',
      `--kubeconfig=${opKubeconfig}`,
      ...namespaces.map((ns) => `--namespace=${ns}`),
      '--leader-elect',
      `--leader-election-id=appservice-soak`,
      `--leader-election-namespace=${opNs}`,
      `--leader-election-lease-duration=${LEASE.durationMs}ms`,
      `--leader-election-renew-deadline=${LEASE.renewMs}ms`,
      `--leader-election-retry-period=${LEASE.retryMs}ms`,
      `--database-api=${databaseUrl}`,
      '--qps=50',
      '--burst=100',
      '--shutdown-grace-period=5s',
      `--log-level=${options.logLevel ?? 'info'}`,
    ]
    const agentArgs: Record<string, string[]> = {}
    for (const n of nodes) {
      const id = await env.userKubeconfig(`edgeop-agent:${n.name}`, [group])
      const kubeconfig = await env.writeKubeconfig({
        server: p.url,
        credentials: { certPem: id.certPem, keyPem: id.keyPem },
      })
      agentArgs[n.slot] = [
        'agent',
        `--kubeconfig=${kubeconfig}`,
        `--node-name=${n.name}`,
        `--root=${n.root}`,
        '--recheck-interval=5s',
        '--shutdown-grace-period=5s',
        `--log-level=${options.logLevel ?? 'info'}`,
      ]
    }

    const f = new Fleet({ start, operatorArgs, agentArgs, invariants: inv, log })
    fleet = f
    cleanups.push(() => f.stop(5000))
    await f.start()

    // Samplers: metrics, RSS, proxy traffic.
    const groups = new Map<number, Map<string, number>>()
    const harvest = (): void => {
      const recs = p.requests()
      p.clearLog()
      for (const r of recs) {
        const s = Math.floor((r.startedAt - start) / 1000)
        while (perSecond.length <= s) perSecond.push(0)
        perSecond[s]!++
        const who = r.user?.startsWith('edgeop-agent:') ? 'agents' : r.user === user ? 'operators' : 'other'
        byIdentity[who] = (byIdentity[who] ?? 0) + 1
        if (r.fault !== undefined && faulted.length < 5000) faulted.push(r)
        const g = groups.get(s) ?? new Map<string, number>()
        groups.set(s, g)
        const key = `${who} ${r.method} ${requestShape(r.path)}${r.watch ? ' (watch)' : ''}`
        g.set(key, (g.get(key) ?? 0) + 1)
        byShape.set(key, (byShape.get(key) ?? 0) + 1)
      }
      // Keep what the busiest seconds were made of; forget ordinary seconds.
      for (const [s, g] of groups)
        if (s < Math.floor(rel() / 1000) - 3) {
          if ((perSecond[s] ?? 0) >= HOT_SECOND && busySeconds.length < 50)
            busySeconds.push({
              second: s,
              requests: perSecond[s]!,
              top: [...g]
                .sort((x, y) => y[1] - x[1])
                .slice(0, 6)
                .map(([k, n]) => `${n} × ${k}`),
            })
          groups.delete(s)
        }
    }
    samplerLoops.push(
      every(METRICS_INTERVAL_MS, samplers.signal, () => f.sampleMetrics()),
      every(RSS_INTERVAL_MS, samplers.signal, () => f.sampleRss()),
      every(1000, samplers.signal, async () => harvest()),
    )

    const w = new Workload({
      admin: a,
      namespaces,
      run,
      nodes,
      rng: rng.fork('driver'),
      start,
      appTarget,
      nodeConfigTarget,
      rate,
    })
    workload = w
    await w.populate()
    const firstLeader = await (async () => {
      for (let i = 0; i < 60; i++) {
        const l = await f.leader()
        if (l) return l
        await sleep(500)
      }
      return undefined
    })()
    log(`setup done in ${(rel() / 1000).toFixed(1)} s; leader ${firstLeader?.id ?? 'none yet'}`)
    phases.setup = rel()

    // ---- chaos ----
    const checker = new Checker({
      admin: a,
      db: d,
      workload: w,
      namespaces,
      nodes,
      run,
      start,
      boundMs,
      databaseSettledAt: () => (d.down ? rel() : databaseBackAt),
    })
    let skippedRounds = 0
    const record = (e: Evaluation): void => {
      latencies.push(...e.latencies)
      for (const id of [CONVERGED, DATABASE, NODE_FILES] as const) {
        const problems = e.problems.filter((x) => x.invariant === id)
        inv.pass(id, Math.max(0, e.checked[id] - problems.length))
        for (const x of problems) inv.fail(id, x.message)
      }
    }
    chaosStart = rel()
    plan = buildSchedule(chaosMs, rng.fork('faults'))
    log(`chaos: ${chaosMs / 1000} s, ${plan.length} faults planned ${JSON.stringify(countByKind(plan))}`)
    const chaos = new AbortController()
    const driverDone = w.run(chaos.signal)
    const checking = every(CHECK_INTERVAL_MS, chaos.signal, async () => {
      let e: Evaluation
      try {
        e = await checker.evaluate()
      } catch {
        skippedRounds++ // the apiserver is restarting
        return
      }
      record(e)
      // Request rate over the last complete 10 s.
      const s = Math.floor(rel() / 1000) - 1
      if (s >= 10) {
        const windowRate = perSecond.slice(s - 9, s + 1).reduce((x, y) => x + y, 0) / 10
        inv.check(
          'request-rate',
          windowRate <= RATE_BOUND,
          () => `${windowRate.toFixed(1)} req/s over the 10 s before +${s} s`,
        )
      }
    })
    const inFlight = new Set<Promise<void>>()
    const ruleTimers = new Set<NodeJS.Timeout>()
    const inject = async (ev: FaultEvent): Promise<void> => {
      const rec: FaultRecord = { kind: ev.kind, scheduledMs: chaosStart + ev.atMs, atMs: rel(), detail: '' }
      records.push(rec)
      const addRule = (rule: FaultRule, ttlMs = RULE_TTL_MS): void => {
        const h = p.addFault(rule)
        handles.set(h, rec)
        const t = setTimeout(() => {
          ruleTimers.delete(t)
          rec.hits = h.hits
          h.clear()
          handles.delete(h)
        }, ttlMs)
        ruleTimers.add(t)
      }
      const t0 = Date.now()
      try {
        switch (ev.kind) {
          case 'drop-all':
            p.dropAll()
            break
          case 'drop-next':
            addRule({ times: 1, action: { type: 'drop' } })
            break
          case 'burst-429':
            rec.detail = `429 for ${ev.durationMs} ms, Retry-After ${ev.retryAfterSeconds} s${ev.nonWatchOnly ? ', non-watch only' : ''}`
            addRule(
              {
                ...(ev.nonWatchOnly ? { watch: false } : {}),
                action: { type: 'status', status: 429, retryAfterSeconds: ev.retryAfterSeconds },
              },
              ev.durationMs,
            )
            break
          case 'burst-5xx':
            rec.detail = `${ev.status} for ${ev.durationMs} ms${ev.method ? ` on ${ev.method}` : ''}`
            addRule(
              { ...(ev.method ? { method: ev.method } : {}), action: { type: 'status', status: ev.status } },
              ev.durationMs,
            )
            break
          case 'stall': {
            const nsAlt = namespaces.join('|')
            const target: Record<typeof ev.target, Omit<FaultRule, 'action'>> = {
              'operator-write': {
                method: ['PATCH', 'POST', 'PUT'],
                path: new RegExp(`/namespaces/(${nsAlt})/(appservices|deployments|services)`),
              },
              'agent-status': { method: 'PATCH', path: /\/nodeconfigs\/[^/]+\/status$/ },
              watch: { watch: true, path: /\/(appservices|nodeconfigs|deployments|services|nodes)$/ },
              lease: { path: new RegExp(`/namespaces/${opNs}/leases/`) },
            }
            rec.detail = ev.target
            addRule({ ...target[ev.target], times: 1, action: { type: 'stall' } })
            break
          }
          case 'compact': {
            const revision = await env!.compact()
            rec.detail = `revision ${revision}`
            break
          }
          case 'restart-apiserver':
            await env!.restartApiserver('cached')
            break
          case 'kill-leader': {
            const victim = await f.killLeader()
            rec.detail = victim ?? 'no leader to kill'
            if (victim === undefined) rec.error = 'no leader within 30 s'
            break
          }
          case 'database-outage':
            rec.detail = `${ev.durationMs} ms`
            d.down = true
            await sleep(ev.durationMs)
            d.down = false
            databaseBackAt = rel()
            break
        }
        rec.durationMs = Date.now() - t0
      } catch (err) {
        rec.error = (err as Error).message
        log(`fault ${ev.kind} failed: ${rec.error}`)
      }
      if (!['drop-all', 'drop-next', 'burst-429', 'burst-5xx', 'stall'].includes(ev.kind))
        log(`fault ${ev.kind} ${rec.detail} (${rec.durationMs ?? '?'} ms)`)
    }
    for (const ev of plan) {
      await sleep(chaosStart + ev.atMs - rel())
      const run1 = inject(ev).finally(() => inFlight.delete(run1))
      inFlight.add(run1)
    }
    await sleep(chaosStart + chaosMs - rel())
    chaos.abort()
    await Promise.all([driverDone, checking, ...inFlight])
    for (const t of ruleTimers) clearTimeout(t)
    for (const [h, rec] of handles) {
      rec.hits = h.hits
      h.clear()
    }
    handles.clear()
    d.down = false
    phases.chaos = rel() - chaosStart
    if (skippedRounds > 0)
      inv.note(CONVERGED, `${skippedRounds} check rounds skipped while the apiserver restarted`)
    log(`chaos done: driver ${JSON.stringify(w.stats)}`)

    let leftOn: FaultHandle | undefined
    if (options.sabotage === 'fault-left-on') {
      leftOn = p.addFault({
        method: 'PATCH',
        path: /\/appservices\/[^/]+\/status$/,
        action: { type: 'status', status: 503 },
      })
      log('SABOTAGE: a 503 on every AppService status write stays on')
    }

    // ---- settle ----
    const settleStart = rel()
    let last: Evaluation | undefined
    while (rel() - settleStart < boundMs) {
      last = await checker.evaluate(true).catch(() => undefined)
      if (last !== undefined && last.problems.length === 0) {
        settleMs = rel() - settleStart
        break
      }
      await sleep(CHECK_INTERVAL_MS)
    }
    if (last === undefined) last = await checker.evaluate(true)
    record(last)
    phases.settle = rel() - settleStart
    log(
      settleMs === undefined
        ? `NOT settled within ${boundMs / 1000} s: ${last.problems.length} problems`
        : `settled in ${(settleMs / 1000).toFixed(1)} s`,
    )

    // ---- quiet window ----
    const quietStart = rel()
    harvest()
    const s0 = Math.ceil(quietStart / 1000)
    await sleep(QUIET_MS + 1000)
    harvest()
    const quietCounts = perSecond.slice(s0, s0 + QUIET_MS / 1000)
    quietPerS = quietCounts.reduce((x, y) => x + y, 0) / (QUIET_MS / 1000)
    inv.check(
      'request-rate',
      quietPerS <= QUIET_RATE_BOUND,
      () => `${quietPerS!.toFixed(2)} req/s in the quiet window (nothing changes, no fault)`,
    )
    const faultedInQuiet = faulted.filter((r) => r.startedAt - start >= quietStart).length
    inv.check(
      'faults-injected',
      faultedInQuiet === 0 || leftOn !== undefined,
      () => `${faultedInQuiet} requests hit a fault in the quiet window`,
    )
    if (leftOn !== undefined)
      inv.fail(
        'faults-injected',
        `a fault was left on after the chaos phase (${leftOn.hits} requests hit it)`,
      )
    leftOn?.clear()
    phases.quiet = rel() - quietStart
    await f.sampleRss()

    // ---- end-of-run invariants ----
    const injected = countByKind(records.filter((r) => r.error === undefined))
    for (const kind of FAULT_KINDS)
      inv.check('faults-injected', injected[kind] > 0, () => `no ${kind} fault was injected`)
    const intervals = f.leadershipIntervals()
    for (const [x, y] of leadershipOverlaps(intervals))
      inv.fail(
        'single-leader',
        `${x.process} (${new Date(x.from).toISOString()}–${new Date(x.to).toISOString()}) and ${y.process} (from ${new Date(y.from).toISOString()}) led at the same time`,
      )
    inv.pass('single-leader', intervals.length)
    for (const line of f.workLines()) {
      const inside = intervals.some(
        (i) => i.process === line.process && line.at >= i.from && line.at <= i.to + 1000,
      )
      inv.check('single-leader', inside, () => `${line.process} logged "${line.msg}" while not leading`)
    }
    inv.note(
      'single-leader',
      `${intervals.length} leadership intervals, ${f.failovers.length} kills; failover ${f.failovers.map((x) => (x.ms === undefined ? '—' : `${(x.ms / 1000).toFixed(1)} s`)).join(', ')}`,
    )
    const rates = windowRates(
      perSecond.slice(Math.floor(chaosStart / 1000), Math.floor(quietStart / 1000)),
      10,
    )
    inv.check(
      'request-rate',
      Math.max(0, ...rates) <= RATE_BOUND,
      () =>
        `${Math.max(...rates).toFixed(1)} req/s in the busiest 10 s window of the chaos and settle phases`,
    )
    inv.note(
      'request-rate',
      `10 s windows: p50 ${summary(rates).p50.toFixed(1)}, p99 ${summary(rates).p99.toFixed(1)}, max ${summary(rates).max.toFixed(1)} req/s; quiet ${quietPerS.toFixed(2)} req/s`,
    )
    for (const proc of f.all) {
      const lead = intervals.find((i) => i.process === proc.id)
      const warmEnd =
        Math.max(chaosStart, proc.startedAt, lead === undefined ? 0 : lead.from - start) + warmupMs
      const verdict = rssGrowth(proc.rss, warmEnd, { windowMs: RSS_WINDOW_MS, minSpanMs: RSS_MIN_SPAN_MS })
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

    // ---- teardown: delete everything through the operator and the agents ----
    const teardownStart = rel()
    for (const ns of namespaces)
      await a
        .resource<AppService>(APPSERVICES, ns)
        .deleteCollection({})
        .catch((err) => log(`deleting AppServices in ${ns}: ${(err as Error).message}`))
    await a
      .resource(NODECONFIGS)
      .deleteCollection({ labelSelector: `${RUN_LABEL}=${run}` })
      .catch((err) => log(`deleting NodeConfigs: ${(err as Error).message}`))
    const teardownDeadline = Date.now() + TEARDOWN_TIMEOUT_MS
    let appsLeft = -1
    let filesLeft = -1
    while (Date.now() < teardownDeadline) {
      appsLeft = 0
      for (const ns of namespaces)
        appsLeft += (
          await a
            .resource(APPSERVICES, ns)
            .list()
            .catch(() => ({ items: [1] }))
        ).items.length
      filesLeft = 0
      for (const n of nodes) filesLeft += (await managedFiles(n.root)).length
      if (appsLeft === 0 && filesLeft === 0 && d.entries.size === 0) break
      await sleep(1000)
    }
    inv.check(
      CONVERGED,
      appsLeft === 0,
      () => `${appsLeft} AppServices still there ${TEARDOWN_TIMEOUT_MS / 1000} s after deleting them all`,
    )
    inv.check(
      DATABASE,
      d.entries.size === 0,
      () => `${d.entries.size} database entries left after deleting every AppService`,
    )
    inv.check(
      NODE_FILES,
      filesLeft === 0,
      () => `${filesLeft} files left on the nodes after deleting every NodeConfig`,
    )
    inv.check(
      DATABASE,
      new Set(d.created).size === d.created.length,
      () => 'a database entry was created twice',
    )
    samplers.abort()
    await Promise.all(samplerLoops)
    await f.stop(20_000)
    phases.teardown = rel() - teardownStart
  } finally {
    samplers.abort()
    await Promise.all(samplerLoops)
    for (const c of cleanups.reverse()) await c().catch(() => {})
  }
  phases.total = rel()
  const invariants = inv.results()
  if (
    options.logDir !== undefined &&
    fleet !== undefined &&
    (options.keepLogs || !invariants.every((r) => r.passed))
  ) {
    await mkdir(options.logDir, { recursive: true })
    for (const proc of fleet.all)
      await writeFile(
        join(options.logDir, `${proc.id}.log`),
        proc.proc.logs.map((l) => JSON.stringify(l)).join('\n'),
      )
    log(`process logs written to ${options.logDir}`)
  }

  // ---- report ----
  const rates = windowRates(perSecond, 10)
  const injected = countByKind(records.filter((r) => r.error === undefined))
  const intervals: LeadershipInterval[] = fleet?.leadershipIntervals() ?? []
  const processes: ProcessReport[] = (fleet?.all ?? []).map((proc) => {
    const lead = intervals.find((i) => i.process === proc.id)
    const warmEnd =
      Math.max(chaosStart, proc.startedAt, lead === undefined ? 0 : lead.from - start) + warmupMs
    const kb = proc.rss.map((s) => s.kb)
    return {
      id: proc.id,
      role: proc.role,
      pid: proc.pid,
      startedAtS: proc.startedAt / 1000,
      endedAtS: proc.endedAt === undefined ? undefined : proc.endedAt / 1000,
      exit:
        proc.exit === undefined ? undefined : `${proc.exit.reason} (${proc.exit.code ?? proc.exit.signal})`,
      rss: rssGrowth(proc.rss, warmEnd, { windowMs: RSS_WINDOW_MS, minSpanMs: RSS_MIN_SPAN_MS }),
      rssMiB:
        kb.length === 0
          ? undefined
          : { first: kb[0]! / 1024, max: Math.max(...kb) / 1024, last: kb[kb.length - 1]! / 1024 },
      heapMiB: heapMiB(proc.heap),
    }
  })
  return {
    passed: invariants.every((r) => r.passed),
    startedAt: new Date(start).toISOString(),
    seed: options.seed,
    minutes: options.minutes,
    run,
    sabotage: options.sabotage,
    settings: {
      driverOpsPerS: rate,
      appServiceTarget: appTarget,
      nodeConfigTarget,
      boundS: boundMs / 1000,
      leaseDurationS: LEASE.durationMs / 1000,
      renewDeadlineS: LEASE.renewMs / 1000,
      retryPeriodS: LEASE.retryMs / 1000,
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
      boundPerS: RATE_BOUND,
      quietPerS,
      quietBoundPerS: QUIET_RATE_BOUND,
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
    rssSeries: (fleet?.all ?? []).map((proc) => ({
      id: proc.id,
      slot: proc.slot,
      samples: proc.rss.map((s) => [Math.round(s.t / 100) / 10, s.kb] as [number, number]),
    })),
    invariants,
  }
}
