/**
 * Measures what N NodeConfig agents cost: API requests to start, to apply one change,
 * and per minute when nothing changes; and one agent's idle RSS, as a CommonJS bundle
 * built the way dist/edgeop.cjs is. Every agent runs in its own process with the
 * shipped RBAC, through a fault proxy that logs each request with its client identity.
 *
 *     node --test test/integration/nodeconfig-load.test.ts
 *     EDGEOP_NODECONFIG_AGENTS=20 EDGEOP_NODECONFIG_IDLE_MS=120000 node --test …   # bigger run
 *
 * The numbers are printed as test diagnostics; the assertions are loose ceilings that
 * still fail if an agent starts polling the API server or rewriting unchanged status.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import * as esbuild from 'esbuild'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { FaultProxy, RequestRecord } from '../controlplane/fault-proxy.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'
import {
  AgentProcess,
  grantAgentRbac,
  installNodeConfigCrd,
  startAggregator,
} from './fixtures/nodeconfig-harness.ts'

const AGENTS = Number(process.env.EDGEOP_NODECONFIG_AGENTS ?? 10)
const IDLE_MS = Number(process.env.EDGEOP_NODECONFIG_IDLE_MS ?? 60_000)
const run = randomBytes(4).toString('hex')
const RUN = 'edgeop.test/nodeconfig-load'
const nodes = Array.from({ length: AGENTS }, (_, i) => `ncload-${run}-${i}`)
const group = `edgeop:nodeconfig-load-${run}`
const CONFIG = `load-${run}`

const { env, setup } = useTestEnv()
let client: KubeClient
let proxy: FaultProxy
let work: string
let bundle: string
const agents: AgentProcess[] = []
const stop = new AbortController()

setup(async () => {
  client = adminClient(env(), env().server)
  await installNodeConfigCrd(client)
  await grantAgentRbac(client, group, `edgeop-nodeconfig-load-${run}`)
  proxy = await env().startFaultProxy()
  startAggregator(client, stop.signal)
  work = await realpath(await mkdtemp(join(tmpdir(), `ncload-${run}-`)))
  bundle = join(work, 'agent.cjs')
  await esbuild.build({
    entryPoints: [join(import.meta.dirname, 'fixtures/nodeconfig-agent.ts')],
    bundle: true,
    minify: true,
    format: 'cjs',
    platform: 'node',
    target: 'node22',
    outfile: bundle,
    define: { esbuildDetection: '"edgeop"' },
    logLevel: 'warning',
  })
})

after(async () => {
  stop.abort()
  await Promise.all(agents.map((a) => a.stop()))
  await client
    ?.resource(NODECONFIGS)
    .delete(CONFIG)
    .catch(() => {})
  for (const n of nodes)
    await client
      ?.resource(CORE_TYPES.nodes)
      .delete(n)
      .catch(() => {})
  await proxy?.close()
  await client?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

const mine = (r: RequestRecord) => r.user?.startsWith(`edgeop-agent:ncload-${run}-`) === true
const describe = (rs: RequestRecord[]) => {
  const counts = new Map<string, number>()
  for (const r of rs) {
    const what = `${r.status === 200 || r.status === 201 ? '' : `(HTTP ${r.status}) `}${r.method}${r.watch ? ' watch' : ''} ${r.path.replace(/ncload-[0-9a-f]+-\d+/, '<node>').replace(/load-[0-9a-f]+/, '<config>')}`
    counts.set(what, (counts.get(what) ?? 0) + 1)
  }
  return [...counts].map(([k, v]) => `${v}× ${k}`).join(', ')
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mib = (b: number) => (b / 2 ** 20).toFixed(1)

test(`${AGENTS} agents: requests to start, to apply one change, and per minute idle; idle RSS`, async (t) => {
  proxy.clearLog()
  for (const [i, name] of nodes.entries()) {
    await client
      .resource(CORE_TYPES.nodes)
      .create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { [RUN]: run } } })
    const user = await env().userKubeconfig(`edgeop-agent:${name}`, [group])
    const kubeconfig = await env().writeKubeconfig({
      server: proxy.url,
      credentials: { certPem: user.certPem, keyPem: user.keyPem },
    })
    const root = join(work, `root-${i}`)
    agents.push(new AgentProcess({ kubeconfig, nodeName: name, root }, process.execPath, bundle))
  }
  await Promise.all(agents.map((a) => a.synced(120_000)))
  await new Promise((r) => setTimeout(r, 1000))
  const startup = proxy.requests(mine)
  const watchTimeouts = startup
    .filter((r) => r.watch && r.status === 200)
    .map((r) => Number(r.params.get('timeoutSeconds')))

  proxy.clearLog()
  await client.resource(NODECONFIGS).apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: { name: CONFIG },
      spec: {
        nodeSelector: { [RUN]: run },
        rollout: { maxUnavailable: 100, maxFailures: 0 },
        files: [
          { path: 'etc/a.conf', content: 'a\n', mode: '0644' },
          { path: 'etc/b.conf', content: 'b\n', mode: '0644' },
        ],
      },
    },
    { fieldManager: 'edgeop-tests', force: true },
  )
  await eventually(
    async () => {
      const o = await client.resource(NODECONFIGS).get(CONFIG)
      return o.status?.applied === AGENTS && o.status.observedGeneration === o.metadata.generation
    },
    { timeoutMs: 120_000, what: `all ${AGENTS} agents applied` },
  )
  await new Promise((r) => setTimeout(r, 3000))
  const change = proxy.requests(mine)

  proxy.clearLog()
  const started = Date.now()
  await new Promise((r) => setTimeout(r, IDLE_MS))
  const idle = proxy.requests(mine)
  const minutes = (Date.now() - started) / 60_000
  const rss = await Promise.all(agents.map((a) => a.rssBytes()))

  // Steady state when idle: only watch renewals, one per informer per server timeout.
  const renewalsPerMinute = watchTimeouts.reduce((s, sec) => s + 60 / sec, 0) / AGENTS
  t.diagnostic(
    `startup: ${startup.length} requests (${(startup.length / AGENTS).toFixed(1)}/agent): ${describe(startup)}`,
  )
  t.diagnostic(`one change selecting all nodes: ${change.length} requests: ${describe(change)}`)
  t.diagnostic(
    `idle ${(minutes * 60).toFixed(0)} s (2 drift checks/agent/min): ${idle.length} requests = ${(idle.length / minutes).toFixed(2)}/min for ${AGENTS} agents${idle.length ? `: ${describe(idle)}` : ''}`,
  )
  t.diagnostic(
    `watch renewals (timeoutSeconds ${Math.min(...watchTimeouts)}–${Math.max(...watchTimeouts)} s): ≈${renewalsPerMinute.toFixed(2)} requests/min per agent in the long run`,
  )
  t.diagnostic(
    `idle RSS of one bundled agent: median ${mib(median(rss))} MiB (min ${mib(Math.min(...rss))}, max ${mib(Math.max(...rss))})`,
  )

  // Refused attempts (the RBAC binding still propagating) are retried with backoff; count the ones served.
  assert.equal(
    startup.filter((r) => r.watch && r.status === 200).length,
    3 * AGENTS,
    `three watches per agent, its Node, NodeConfigs and its reports: ${startup.map((r) => `${r.status} ${r.path}`).join(', ')}`,
  )
  assert.ok(
    startup.every(
      (r) =>
        !r.path.endsWith('/nodeconfigreports') ||
        r.params.get('fieldSelector') === `spec.nodeName=${r.user!.slice('edgeop-agent:'.length)}`,
    ),
    'every report list/watch is for the agent’s own node only',
  )
  assert.ok(
    startup.every(
      (r) =>
        !r.path.endsWith('/nodes') ||
        r.params.get('fieldSelector') === `metadata.name=${r.user!.slice('edgeop-agent:'.length)}`,
    ),
    'every Node list/watch is for the agent’s own node only',
  )
  assert.ok(!startup.some((r) => r.path.includes('/pods')), 'never Pods')
  const reportWrites = change.filter((r) => r.method === 'PATCH' && r.path.includes('/nodeconfigreports/'))
  assert.equal(reportWrites.length, AGENTS, 'one report write per node for one change')
  assert.ok(!change.some((r) => r.path.endsWith('/status')), 'no agent writes a NodeConfig status')
  assert.ok(idle.length <= AGENTS, `idle requests: ${describe(idle)}`)
})
