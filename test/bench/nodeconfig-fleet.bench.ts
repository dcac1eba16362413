/**
 * @module nodeconfig-fleet.bench — one NodeConfig rollout to N agents, a script, never a test.
 *
 * For each fleet size (default 10, 100, 1,000) and design, N Node objects (no kubelet, as KWOK's
 * are; KWOK's heartbeats are left out, so the apiserver sees only the agents) and N agents (the new
 * design's in child processes, test/bench/lib/fleet-agents.ts, one per {@link AGENTS_PER_PROCESS};
 * the old design's emulated ones in this process), each with its own client certificate (user `edgeop-agent:<node>` in a group bound to
 * deploy/agent/rbac.yaml), its own KubeClient and so its own connections; then one NodeConfig
 * selecting all of them. Measured from the apply until every node is counted as applied:
 * apiserver requests (`apiserver_request_total`, the driver's own polls included), watch events
 * and their bytes for platform.example.com (`apiserver_watch_events_total`, `…_sizes_sum`), the
 * apiserver's and etcd's CPU time (/proc/<pid>/stat) and RSS after, and the largest object.
 *
 * - `new`: the shipped agent (`nodeConfigAgent`) and the aggregator, with the NodeConfig's default
 *   rollout (10 % waves). Each agent keeps its files on a disk in memory (0–5 ms per operation,
 *   test/support/memory-node-files.ts): on a real disk the agents of one process share libuv's four
 *   file threads, and at 1,000 agents a file read waited past the agent's 10 s read limit, so nodes
 *   reported Failed and the default `maxFailures: 0` stopped the rollout; a real node has its own disk.
 * - `old`: the first design's traffic, emulated: each agent watches every NodeConfig and, on a new
 *   generation, server-side applies its entry of `status.nodes[]` under its own field manager (what
 *   the first agent sent); no files, no Node watch. "Applied" is N entries at the generation.
 *
 * What differs from real nodes: up to 1,000 agents share one process and one event loop (a slow
 * agent delays the others), loopback network, one machine shared by the apiserver, etcd and the
 * agents. Each agent process reports its progress every 30 s with the TCP states of the apiserver's
 * client connections, so a stall shows whether connections sit half-closed.
 *
 * At 5,000 agents: certificates (one `openssl` each), Nodes and deletions go {@link SETUP_CONCURRENCY}
 * at a time; each agent holds one HTTP/2 connection (so 5,000 descriptors here and at the apiserver:
 * `ulimit -n` must exceed N plus a margin, checked first); the caches' sync waits up to the timeout.
 *
 *   npm run bench:fleet [-- --sizes 10,100 --designs new,old --timeout 120 --json rows.jsonl]
 */
import { type ChildProcess, fork } from 'node:child_process'
import { appendFile, readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { NODECONFIGREPORTS } from '../../src/operators/nodeconfig/report-api.ts'
import { fieldManagerFor, nextEntry, statusApplyBody } from '../../src/operators/nodeconfig/status.ts'
import { kubeRequest } from '../../src/testing/kube-request.ts'
import { getTestEnv } from '../controlplane/env.ts'
import {
  grantAgentRbac,
  installNodeConfigCrd,
  RBAC,
  startAggregator,
} from '../integration/fixtures/nodeconfig-harness.ts'
import { metricSum } from '../soak/fleet.ts'
import { serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { tcpStates } from '../support/tcp-table.ts'
import {
  type FleetAgentSpec,
  type FleetAgentsCommand,
  type FleetAgentsReport,
  identityOf,
} from './lib/fleet-agents.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10,100,1000' },
    designs: { type: 'string', default: 'new,old' },
    timeout: { type: 'string', default: '120' },
    /** `cert`: one client certificate per agent (an `openssl` run each); `token`: one ServiceAccount and bound token per agent (two API calls, for 5,000). */
    identity: { type: 'string', default: 'cert' },
    /** Appends each row as one JSON line to this file (for the chart: test/bench/nodeconfig-fleet-chart.ts). */
    json: { type: 'string' },
    /** Child processes hosting the new design's agents (default: one per {@link AGENTS_PER_PROCESS}). */
    'agent-processes': { type: 'string' },
  },
})
const SIZES = values.sizes.split(',').map(Number)
const DESIGNS = values.designs.split(',') as ('new' | 'old')[]
const TIMEOUT_MS = Number(values.timeout) * 1000
const IDENTITY = values.identity as 'cert' | 'token'
const run = Math.random().toString(16).slice(2, 8)
const group = `edgeop:fleet-bench-${run}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** Certificates, Nodes and deletions in flight at once: enough to keep both cores busy with `openssl` and the apiserver, few enough to stay under its max-requests-inflight (400). */
const SETUP_CONCURRENCY = 16
/** How often a long run says how far it got (a run cut short still tells). */
const PROGRESS_EVERY_MS = 30_000
/** Agents started before waiting for their caches: 1,000 at once synced in 42 s on the loaded machine, 5,000 not at all. */
const START_GROUP = 500
/** Descriptors besides one per agent: the control plane's clients, files, the driver. */
const FD_MARGIN = 512
/**
 * Agents per child process by default: 1,000 in one process finished a rollout (76.9 s), 5,000 in
 * one did not (their event handling in one event loop, with the apiserver on the same two cores),
 * so 5,000 run in five processes. Up to 1,000 the rows stay comparable with earlier one-process runs.
 */
const AGENTS_PER_PROCESS = 1000

/** Runs `f` over `items`, {@link SETUP_CONCURRENCY} at a time, results in order. */
async function inBatches<T, R>(items: readonly T[], f: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < items.length; i += SETUP_CONCURRENCY)
    out.push(...(await Promise.all(items.slice(i, i + SETUP_CONCURRENCY).map((x, j) => f(x, i + j)))))
  return out
}

/** The soft limit on open files, from /proc (no shell needed). */
async function openFileLimit(): Promise<number> {
  const line = (await readFile('/proc/self/limits', 'utf8'))
    .split('\n')
    .find((l) => l.startsWith('Max open files'))
  return Number(line?.split(/\s+/)[3] ?? Number.POSITIVE_INFINITY)
}
const fdLimit = await openFileLimit()
for (const n of SIZES)
  if (n + FD_MARGIN > fdLimit)
    throw new Error(
      `${n} agents need about ${n + FD_MARGIN} open files, more than ulimit -n (${fdLimit}): raise it`,
    )

const env = await getTestEnv()
const admin = adminClient(env, env.server)
await installNodeConfigCrd(admin)
await grantAgentRbac(admin, group, `edgeop-fleet-bench-${run}`)
/** With `--identity token`, each agent is ServiceAccount `<node>` of this namespace, whose group is bound like `group`. */
const saNamespace = `fleet-bench-${run}`
const saGroup = `system:serviceaccounts:${saNamespace}`
const SERVICE_ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true } as const
if (IDENTITY === 'token') {
  await admin.resource(CORE_TYPES.namespaces).create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: saNamespace },
  })
  await grantAgentRbac(admin, saGroup, `edgeop-fleet-bench-sa-${run}`)
}
// The old design's one extra permission: its own entry of a NodeConfig's status.
await admin.resource(RBAC.clusterRoles).apply(
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `edgeop-fleet-bench-old-${run}` },
    rules: [{ apiGroups: ['platform.example.com'], resources: ['nodeconfigs/status'], verbs: ['patch'] }],
  } as never,
  { fieldManager: 'edgeop-bench', force: true },
)
await admin.resource(RBAC.clusterRoleBindings).apply(
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `edgeop-fleet-bench-old-${run}` },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: `edgeop-fleet-bench-old-${run}`,
    },
    subjects: [group, saGroup].map((name) => ({
      kind: 'Group',
      name,
      apiGroup: 'rbac.authorization.k8s.io',
    })),
  } as never,
  { fieldManager: 'edgeop-bench', force: true },
)

/** The pids of the (cached) apiserver and etcd. */
const procs = async () => {
  const all = (await env.stats()).processes
  const apiserver = all.find((p) => p.name.includes('apiserver') && !p.name.includes('uncached'))
  const etcd = all.find((p) => p.name.includes('etcd'))
  return { apiserver: { pid: apiserver!.pid! }, etcd: { pid: etcd!.pid! } }
}
const cpuMs = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}
const rssMiB = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
async function metrics() {
  const scrape = () => kubeRequest(env.server, { caPem: env.caPem, ...env.admin }, 'GET', '/metrics')
  // A scrape that fails while 5,000 agents load the machine is tried again, not the run lost.
  const text = (await scrape().catch(() => sleep(5000).then(scrape))).body
  const g = { group: 'platform.example.com' }
  // Watch events by resource (the label is `resource` in recent apiservers, `kind` before).
  const eventsOf = (resource: string, kind: string) =>
    metricSum(text, 'apiserver_watch_events_total', { ...g, resource }) ??
    metricSum(text, 'apiserver_watch_events_total', { ...g, kind }) ??
    0
  const statusWrites = (code: string) =>
    ['PATCH', 'APPLY', 'UPDATE'].reduce(
      (a, verb) =>
        a +
        (metricSum(text, 'apiserver_request_total', {
          verb,
          resource: 'nodeconfigs',
          subresource: 'status',
          code,
        }) ?? 0),
      0,
    )
  return {
    requests: metricSum(text, 'apiserver_request_total') ?? 0,
    events: metricSum(text, 'apiserver_watch_events_total', g) ?? 0,
    bytes: metricSum(text, 'apiserver_watch_events_sizes_sum', g) ?? 0,
    nodeConfigEvents: eventsOf('nodeconfigs', 'NodeConfig'),
    reportEvents: eventsOf('nodeconfigreports', 'NodeConfigReport'),
    statusWrites: statusWrites('200') + statusWrites('201'),
    statusConflicts: statusWrites('409'),
    throttled: metricSum(text, 'apiserver_request_total', { code: '429' }) ?? 0,
  }
}

interface Row {
  design: string
  n: number
  requests: number
  events: number
  bytes: number
  /** Of `events`: NodeConfig events (each status write reaches every agent) and report events. */
  nodeConfigEvents: number
  reportEvents: number
  /** The aggregator's NodeConfig status writes that succeeded, and those refused with 409. */
  statusWrites: number
  statusConflicts: number
  /** Requests the apiserver answered 429 (priority and fairness, max-requests-inflight). */
  throttled: number
  ms: number | undefined
  apiserverCpuMs: number
  etcdCpuMs: number
  apiserverRss: number
  etcdRss: number
  largest: number
  /** Nodes counted as applied when the run ended (N when it finished). */
  applied: number
  /** RSS of the processes hosting the agents after the rollout (MiB; summed over the agent processes). */
  agentsRss: number
  /** Setup: certificates, Nodes, agents started and synced (s). */
  setupS: number
  note: string
}

async function one(design: 'new' | 'old', n: number): Promise<Row> {
  const tag = `${run}-${design}-${n}`
  const label = { 'edgeop.bench/fleet': tag }
  const nodes = Array.from({ length: n }, (_, i) => `fleet-${tag}-${i}`)
  const stop = new AbortController()
  const clients: KubeClient[] = []
  const setupStart = performance.now()
  await inBatches(nodes, (node) =>
    admin.resource(CORE_TYPES.nodes).create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: node, labels: label, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
    }),
  )
  const identities = await inBatches(nodes, (node) => identity(node))
  console.error(
    `  ${n} Nodes and ${IDENTITY} identities in ${((performance.now() - setupStart) / 1000).toFixed(1)} s`,
  )
  if (design === 'new') startAggregator(admin, stop.signal)
  const children =
    design === 'new'
      ? startAgentProcesses(Number(values['agent-processes'] ?? Math.ceil(n / AGENTS_PER_PROCESS)))
      : []
  // The old design's emulated agents stay in this process; one signal per agent, as on separate
  // nodes: Node's EventTarget checks each new listener against those it holds, so 5,000 agents on
  // one signal made starting them quadratic (minutes).
  const agentStops: AbortController[] = []
  stop.signal.addEventListener('abort', () => {
    for (const a of agentStops) a.abort()
  })
  // Agents start in groups, each synced before the next, as a fleet's nodes come up over
  // time: 5,000 agents listing and watching at once never synced (not the first within 8 min).
  for (let from = 0; from < n; from += START_GROUP) {
    const groupNodes = nodes.slice(from, from + START_GROUP)
    if (design === 'new') {
      await Promise.all(
        children.map((child, k) =>
          child.start(
            groupNodes
              .map((node, j): FleetAgentSpec => ({ node, seed: from + j, ...identities[from + j]! }))
              .filter((_, j) => j % children.length === k),
          ),
        ),
      )
      console.error(
        `  ${from + groupNodes.length} agents synced at ${((performance.now() - setupStart) / 1000).toFixed(0)} s`,
      )
    } else
      for (const [j, node] of groupNodes.entries()) {
        const own = new AbortController()
        agentStops.push(own)
        const client = new KubeClient({
          server: env.server,
          namespace: 'default',
          source: `agent ${node}`,
          ...identityOf({ node, seed: from + j, ...identities[from + j]! }, env.caPem),
        })
        clients.push(client)
        void oldAgent(client, node, own.signal)
      }
  }
  const setupS = (performance.now() - setupStart) / 1000
  console.error(`  ${n} agents started and synced, ${setupS.toFixed(1)} s after the setup began`)
  await sleep(2000)
  const p = await procs()
  const before = { m: await metrics(), api: await cpuMs(p.apiserver.pid), etcd: await cpuMs(p.etcd.pid) }
  const name = `fleet-${tag}`
  const started = performance.now()
  await admin.resource(NODECONFIGS).apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: { name },
      spec: { nodeSelector: label, files: [{ path: 'etc/fleet.conf', content: 'fleet\n', mode: '0644' }] },
    } as NodeConfig,
    { fieldManager: 'edgeop-bench', force: true },
  )
  let ms: number | undefined
  let largest = 0
  let applied = 0
  let shown = started
  let failedPolls = 0
  while (performance.now() - started < TIMEOUT_MS) {
    // The driver's poll shares the event loop with every agent: at 5,000 one GET outlived its
    // 60 s deadline; a failed poll is counted and the next one tried.
    const nc = await admin
      .resource(NODECONFIGS)
      .get(name)
      .catch(() => undefined)
    if (!nc) {
      failedPolls++
      await sleep(250)
      continue
    }
    const gen = nc.metadata.generation
    applied =
      design === 'new'
        ? nc.status?.observedGeneration === gen
          ? (nc.status?.applied ?? 0)
          : 0
        : (nc.status?.nodes ?? []).filter((e) => e.observedGeneration === gen && e.state === 'Applied').length
    largest = Math.max(largest, Buffer.byteLength(JSON.stringify(nc)))
    if (applied === n) {
      ms = performance.now() - started
      break
    }
    if (performance.now() - shown > PROGRESS_EVERY_MS) {
      shown = performance.now()
      console.error(
        `  ${((shown - started) / 1000).toFixed(0)} s: ${applied} of ${n} applied, wave ${nc.status?.rollout?.percent ?? '-'} %, ${failedPolls} polls failed`,
      )
    }
    await sleep(250)
  }
  await sleep(1500) // the last events delivered
  const after = { m: await metrics(), api: await cpuMs(p.apiserver.pid), etcd: await cpuMs(p.etcd.pid) }
  if (design === 'new') {
    const reports = (
      await admin.resource(NODECONFIGREPORTS).list({ fieldSelector: `spec.nodeConfig=${name}` })
    ).items
    for (const r of reports) largest = Math.max(largest, Buffer.byteLength(JSON.stringify(r)))
  }
  const row: Row = {
    design,
    n,
    requests: after.m.requests - before.m.requests,
    events: after.m.events - before.m.events,
    bytes: after.m.bytes - before.m.bytes,
    nodeConfigEvents: after.m.nodeConfigEvents - before.m.nodeConfigEvents,
    reportEvents: after.m.reportEvents - before.m.reportEvents,
    statusWrites: after.m.statusWrites - before.m.statusWrites,
    statusConflicts: after.m.statusConflicts - before.m.statusConflicts,
    throttled: after.m.throttled - before.m.throttled,
    ms,
    apiserverCpuMs: after.api - before.api,
    etcdCpuMs: after.etcd - before.etcd,
    apiserverRss: await rssMiB(p.apiserver.pid),
    etcdRss: await rssMiB(p.etcd.pid),
    largest,
    applied,
    // The new design's agents live in the child processes (their RSS summed); the old design's
    // emulated agents in this one, beside the driver.
    agentsRss:
      children.length > 0
        ? (await Promise.all(children.map((c) => rssMiB(c.pid)))).reduce((a, b) => a + b, 0)
        : process.memoryUsage().rss / 2 ** 20,
    setupS,
    note: ms === undefined ? `not all applied within ${TIMEOUT_MS / 1000} s (${applied} of ${n})` : '',
  }
  stop.abort()
  await Promise.allSettled([...clients.map((c) => c.close()), ...children.map((c) => c.stop())])
  await admin
    .resource(NODECONFIGS)
    .delete(name)
    .catch(() => {})
  await inBatches(nodes, (node) =>
    admin
      .resource(CORE_TYPES.nodes)
      .delete(node)
      .catch(() => {}),
  )
  return row
}

/** `node`'s agent's identity: its own certificate, or its own ServiceAccount's bound token. */
async function identity(node: string): Promise<Pick<FleetAgentSpec, 'cert' | 'token'>> {
  if (IDENTITY === 'cert') {
    const u = await env.userKubeconfig(`edgeop-agent:${node}`, [group])
    return { cert: { certPem: u.certPem, keyPem: u.keyPem } }
  }
  await admin
    .resource(SERVICE_ACCOUNTS, saNamespace)
    .create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: node } })
  return {
    token: await serviceAccountToken(env.server, { caPem: env.caPem, ...env.admin }, saNamespace, node),
  }
}

/** A child process hosting agents (test/bench/lib/fleet-agents.ts). */
interface AgentProcess {
  pid: number
  /** Starts these agents there; resolves once every agent of that process has synced. */
  start(agents: FleetAgentSpec[]): Promise<void>
  /** Stops its agents and waits for the process to end. */
  stop(): Promise<void>
}

/** Forks `count` agent processes, printing their progress (and the TCP states of the apiserver's connections) as it comes. */
function startAgentProcesses(count: number): AgentProcess[] {
  const port = Number(new URL(env.server).port)
  return Array.from({ length: count }, (_, k) => {
    const child: ChildProcess = fork(new URL('./lib/fleet-agents.ts', import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    let waiting: { resolve: () => void; reject: (e: Error) => void } | undefined
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.on('message', (m: FleetAgentsReport) => {
      if (m.type === 'synced') waiting?.resolve()
      else if (m.type === 'failed') waiting?.reject(new Error(`agent process ${k}: ${m.message}`))
      else if (m.type === 'progress')
        void tcpStates(port).then((tcp) =>
          console.error(
            `  agents process ${k}: ${m.synced}/${m.agents} synced, event loop delay up to ${m.maxDelayMs} ms, handles ${JSON.stringify(m.handles)}, connections to the apiserver ${JSON.stringify(tcp)}`,
          ),
        )
    })
    child.once('exit', (code) => waiting?.reject(new Error(`agent process ${k} exited (${code})`)))
    const send = (m: FleetAgentsCommand) => child.send(m)
    return {
      pid: child.pid!,
      start: (agents) =>
        agents.length === 0
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => {
              waiting = { resolve, reject }
              send({
                type: 'start',
                server: env.server,
                caPem: env.caPem,
                agents,
                syncTimeoutMs: Math.max(120_000, TIMEOUT_MS),
              })
            }),
      stop: async () => {
        if (child.connected) send({ type: 'stop' })
        await Promise.race([exited, sleep(30_000).then(() => child.kill('SIGKILL'))])
      },
    }
  })
}

/** The first design's traffic for one node: watch every NodeConfig, apply its own status entry per new generation. */
async function oldAgent(client: KubeClient, node: string, signal: AbortSignal): Promise<void> {
  const ncs = client.resource(NODECONFIGS)
  const done = new Map<string, number>()
  while (!signal.aborted) {
    try {
      for await (const ev of ncs.watch({ signal, allowWatchBookmarks: true })) {
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue
        const c = ev.object as NodeConfig
        const gen = c.metadata.generation ?? 0
        if ((done.get(c.metadata.uid!) ?? 0) >= gen) continue
        const entry = nextEntry(
          c,
          node,
          { state: 'Applied', message: '1 file in place' },
          undefined,
          new Date(),
        )
        await ncs.apply(statusApplyBody(c, entry) as NodeConfig, {
          fieldManager: fieldManagerFor(node),
          force: true,
          subresource: 'status',
          signal,
        })
        done.set(c.metadata.uid!, gen)
      }
    } catch {
      await sleep(500)
    }
  }
}

const rows: Row[] = []
for (const n of SIZES)
  for (const d of DESIGNS) {
    console.error(
      `fleet bench: ${d} design, ${n} agents (load ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')})`,
    )
    const r = await one(d, n)
    console.error(JSON.stringify(r))
    if (values.json)
      await appendFile(
        values.json,
        `${JSON.stringify({ ...r, date: new Date().toISOString(), load: loadavg() })}\n`,
      )
    rows.push(r)
  }
const mb = (b: number) => (b / 2 ** 20).toFixed(1)
console.log(
  '| design | nodes | requests | watch events | events per node | event bytes | time to all applied | apiserver CPU | etcd CPU | apiserver RSS | etcd RSS | agents RSS | largest object |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const r of rows)
  console.log(
    `| ${r.design} | ${r.n} | ${r.requests} | ${r.events} | ${(r.events / r.n).toFixed(1)} | ${mb(r.bytes)} MiB | ${r.ms === undefined ? r.note : `${(r.ms / 1000).toFixed(1)} s`} | ${(r.apiserverCpuMs / 1000).toFixed(1)} s | ${(r.etcdCpuMs / 1000).toFixed(1)} s | ${r.apiserverRss.toFixed(0)} MiB | ${r.etcdRss.toFixed(0)} MiB | ${r.agentsRss.toFixed(0)} MiB | ${r.largest.toLocaleString('en')} B |`,
  )
await admin.close()
process.exit(0)
