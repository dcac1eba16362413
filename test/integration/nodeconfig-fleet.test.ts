/**
 * The NodeConfig agent at fleet scale, on the real control plane: what the shared
 * `status.nodes[]` design costs per node (measured, then extrapolated to the fleet size at
 * which etcd refuses the object); per-node reports and the aggregate; an agent's watch
 * scope; the node-isolation policy; rollouts in waves stopping on failures; and the
 * migration from the shared status. Agents run in this process, each with its own client
 * certificate in a group bound to deploy/agent/rbac.yaml; the aggregator runs as admin.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { InformerFactory } from '../../src/cache/factory.ts'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { loadClusterConfig } from '../../src/config/load.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { nodeConfigAgent } from '../../src/operators/nodeconfig/agent.ts'
import { NODECONFIGS, type NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { NODECONFIGREPORTS, reportBody, reportName } from '../../src/operators/nodeconfig/report-api.ts'
import { rolloutBucket } from '../../src/operators/nodeconfig/rollout.ts'
import { fieldManagerFor, nextEntry, statusApplyBody } from '../../src/operators/nodeconfig/status.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { kubeJson } from '../controlplane/kube-request.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'
import {
  deployManifest,
  grantAgentRbac,
  installNodeConfigCrd,
  startAggregator,
} from './fixtures/nodeconfig-harness.ts'

const run = randomBytes(4).toString('hex')
const { env, setup } = useTestEnv()
let client: KubeClient
const created = new Set<string>()

const group = `edgeop:nodeconfig-fleet-${run}`
const SERVICE_ACCOUNTS = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
  kind: 'ServiceAccount',
}
const RUN = 'edgeop.test/nodeconfig-fleet'
const stop = new AbortController()
const dirs: string[] = []
const cleanup: (() => Promise<unknown>)[] = []
const WAIT_MS = 60_000

setup(async () => {
  client = adminClient(env(), env().server)
  await installNodeConfigCrd(client)
  await grantAgentRbac(client, group, `edgeop-nodeconfig-fleet-${run}`)
})

let aggregating = false
/** The aggregator, as its leader would run it (started after the measurement, which it would clean). */
function aggregatorRunning(): void {
  if (aggregating) return
  aggregating = true
  startAggregator(client, stop.signal)
}

after(async () => {
  stop.abort()
  for (const c of cleanup) await c().catch(() => {})
  for (const d of dirs) await rm(d, { recursive: true, force: true })
  for (const name of created)
    await client
      ?.resource(NODECONFIGS)
      .delete(name)
      .catch(() => {})
  await client?.close()
})

/** etcd's default `--max-request-bytes`: 1.5 MiB, the largest value it stores. */
const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024
/** A node name of the length edge fleets use (site, rack, index): 24 characters. */
const nodeName = (i: number) =>
  `edge-site-${String(i).padStart(4, '0')}-node-${String(i % 100).padStart(3, '0')}`

test('the shared status grows by a measured number of bytes per node, and etcd refuses it at a fleet size below 5,000', async () => {
  const name = `fleet-measure-${run}`
  created.add(name)
  const ncs = client.resource(NODECONFIGS)
  const config = await ncs.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name },
    // Selects no node: the entries below are written by hand, and on the shared test control
    // plane a NodeConfig without a selector would reach every other test's agents.
    spec: {
      nodeSelector: { [RUN]: `none-${run}` },
      files: [{ path: 'etc/chrony.conf', content: 'server ntp.example.com iburst\n', mode: '0644' }],
    },
  } as NodeConfig)
  const size = async () => Buffer.byteLength(JSON.stringify(await ncs.get(name)))
  const base = await size()
  const ENTRIES = 20
  const now = new Date('2026-12-02T00:00:00Z')
  // Exactly what the shipped agent applies: its entry, under its own field manager.
  for (let i = 0; i < ENTRIES; i++) {
    const entry = nextEntry(
      config,
      nodeName(i),
      { state: 'Applied', message: '1 file in place' },
      undefined,
      now,
    )
    await ncs.apply(statusApplyBody(config, entry) as NodeConfig, {
      fieldManager: fieldManagerFor(nodeName(i)),
      force: true,
      subresource: 'status',
    })
  }
  const grown = await size()
  const perNode = (grown - base) / ENTRIES
  const failsAt = Math.floor((ETCD_MAX_REQUEST_BYTES - base) / perNode)
  // One rollout: N status writes, each delivered as a watch event to all N agents.
  const rolloutEvents = (n: number) => n * n
  const rolloutBytes = (n: number) => n * (n * base + (perNode * n * (n + 1)) / 2)
  const line = `base ${base} B, ${perNode} B per node (status entry + managedFields entry), etcd refuses the object at ${failsAt + 1} nodes; a rollout to 1,000 nodes delivers ${rolloutEvents(1000).toLocaleString('en')} events, ${(rolloutBytes(1000) / 2 ** 30).toFixed(1)} GiB`
  console.log(line)
  assert.ok(perNode > 100, `${perNode} B per node: an entry and its managedFields cannot be smaller`)
  assert.ok(failsAt < 5000, line)
})

/** A Node object for `name`, labelled for this run. */
async function createNode(name: string, labels: Record<string, string> = { [RUN]: run }): Promise<void> {
  await client
    .resource(CORE_TYPES.nodes)
    .create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } })
  cleanup.push(() => client.resource(CORE_TYPES.nodes).delete(name))
}

/** An agent for `node` in this process, with its own client certificate, connection and root. */
async function startAgent(
  node: string,
  { create = true } = {},
): Promise<{ root: string; factory: InformerFactory; client: KubeClient }> {
  if (create) await createNode(node)
  const user = await env().userKubeconfig(`edgeop-agent:${node}`, [group])
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { certPem: user.certPem, keyPem: user.keyPem },
  })
  const agentClient = new KubeClient(await loadClusterConfig({ kubeconfig }))
  const root = await realpath(await mkdtemp(join(tmpdir(), `ncfleet-${run}-`)))
  dirs.push(root)
  const factory = new InformerFactory(agentClient)
  const agent = nodeConfigAgent({
    client: agentClient,
    factory,
    nodeName: node,
    root,
    recheckIntervalMs: 1000,
  })
  factory.start(stop.signal)
  void agent.run(stop.signal)
  cleanup.push(() => agentClient.close())
  return { root, factory, client: agentClient }
}

async function putConfig(
  name: string,
  content: string,
  rollout?: NodeConfig['spec']['rollout'],
): Promise<void> {
  created.add(name)
  await client.resource(NODECONFIGS).apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: { name },
      spec: {
        nodeSelector: { [RUN]: run },
        files: [{ path: `etc/${name}.conf`, content, mode: '0644' }],
        ...(rollout ? { rollout } : {}),
      },
    } as NodeConfig,
    { fieldManager: 'edgeop-tests', force: true },
  )
}

const fleetNodes = [0, 1, 2].map((i) => `ncfleet-${run}-${i}`)
const agents = new Map<string, Awaited<ReturnType<typeof startAgent>>>()

test("each node reports in its own NodeConfigReport, the aggregator counts them, and an agent caches no other node's report", async () => {
  aggregatorRunning()
  for (const n of fleetNodes) agents.set(n, await startAgent(n))
  const name = `fleet-all-${run}`
  await putConfig(name, 'v1\n', { maxUnavailable: 100, maxFailures: 0 })
  let last: unknown
  await eventually(
    async () => {
      const nc = await client.resource(NODECONFIGS).get(name)
      last = nc.status
      return (
        nc.status?.applied === 3 &&
        nc.status.desired === 3 &&
        nc.status.observedGeneration === nc.metadata.generation
      )
    },
    { timeoutMs: WAIT_MS, what: `aggregate applied 3 (${JSON.stringify(last)})` },
  )
  for (const a of agents.values())
    assert.equal(await readFile(join(a.root, `etc/${name}.conf`), 'utf8'), 'v1\n')
  const reports = (
    await client.resource(NODECONFIGREPORTS).list({ fieldSelector: `spec.nodeConfig=${name}` })
  ).items
  assert.deepEqual(reports.map((r) => r.spec.nodeName).sort(), [...fleetNodes].sort())
  const perNode = reports.map((r) => Buffer.byteLength(JSON.stringify(r)))
  console.log(
    `per-node report: ${Math.min(...perNode)}–${Math.max(...perNode)} bytes as stored (JSON, managedFields included)`,
  )
  assert.ok(Math.max(...perNode) < 2048, `${perNode} bytes: a report stays small`)
  const nc = await client.resource(NODECONFIGS).get(name)
  assert.equal(nc.status?.nodes, undefined, 'no shared per-node list')
  assert.equal(nc.status?.conditions?.[0]?.reason, 'RolloutComplete')
  // The agent's report informer (the factory shares one per spec) holds its node's reports only.
  const [first] = fleetNodes as [string]
  const cache = agents
    .get(first)!
    .factory.informer({ type: NODECONFIGREPORTS, fieldSelector: `spec.nodeName=${first}` })
  const cached = cache.store.list().map((r) => r.spec.nodeName)
  assert.ok(cached.length > 0 && cached.every((n) => n === first), `cached: ${cached}`)
  // And a watch with the agent's own credentials and selector delivers no event of another node,
  // while the other agents' reports change (a new generation).
  const seen: string[] = []
  const watch = agents
    .get(first)!
    .client.resource(NODECONFIGREPORTS)
    .watch({
      fieldSelector: `spec.nodeName=${first}`,
      resourceVersion: '0',
      signal: stop.signal,
    })
  const reading = (async () => {
    for await (const ev of watch) {
      if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue
      seen.push((ev.object as KubeObject & { spec: { nodeName: string } }).spec.nodeName)
      if (seen.length >= 2) break
    }
  })()
  await putConfig(name, 'v2\n', { maxUnavailable: 100, maxFailures: 0 })
  await reading
  assert.deepEqual([...new Set(seen)], [first], `events seen: ${seen}`)
})

test("agent A writing node B's report is refused by the policy, with its message; its own is accepted", async () => {
  for (const o of await deployManifest('report-policy.yaml')) {
    const type =
      o.kind === 'ValidatingAdmissionPolicy'
        ? {
            group: 'admissionregistration.k8s.io',
            version: 'v1',
            resource: 'validatingadmissionpolicies',
            namespaced: false,
            kind: o.kind,
          }
        : {
            group: 'admissionregistration.k8s.io',
            version: 'v1',
            resource: 'validatingadmissionpolicybindings',
            namespaced: false,
            kind: o.kind,
          }
    await client.resource(type).apply(o, { fieldManager: 'edgeop-tests', force: true })
  }
  const ns = `ncfleet-${run}`
  const [a, b] = [`ncfleet-${run}-pa`, `ncfleet-${run}-pb`]
  await createNode(a, {})
  await createNode(b, {})
  await client
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
  cleanup.push(() => client.resource(CORE_TYPES.namespaces).delete(ns))
  await client
    .resource(SERVICE_ACCOUNTS, ns)
    .create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'agent', namespace: ns } })
  const binding = `edgeop-nodeconfig-fleet-sa-${run}`
  await client
    .resource({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'clusterrolebindings',
      namespaced: false,
      kind: 'ClusterRoleBinding',
    })
    .apply(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: binding },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edgeop-agent' },
        subjects: [{ kind: 'ServiceAccount', name: 'agent', namespace: ns }],
      },
      { fieldManager: 'edgeop-tests', force: true },
    )
  // A pod of the agent's ServiceAccount on node A (a Node object only, as KWOK's are), and a
  // token bound to it: the API server puts node A's name into the token's user extra.
  const pod = await client.resource(CORE_TYPES.pods, ns).create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'agent', namespace: ns },
    spec: {
      nodeName: a,
      serviceAccountName: 'agent',
      containers: [{ name: 'agent', image: 'example.invalid/edgeop' }],
    },
  })
  const path = `/api/v1/namespaces/${ns}/serviceaccounts/agent/token`
  const res = await kubeJson<{ status: { token: string } }>(
    env().server,
    { caPem: env().caPem, ...env().admin },
    'POST',
    path,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: 3600,
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'agent', uid: pod.metadata.uid },
      },
    },
  )
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { token: res.status.token },
  })
  const podClient = new KubeClient(await loadClusterConfig({ kubeconfig }))
  cleanup.push(() => podClient.close())
  const config = await client.resource(NODECONFIGS).create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: `fleet-policy-${run}` },
    spec: { nodeSelector: { [RUN]: `none-${run}` }, files: [] },
  } as NodeConfig)
  created.add(config.metadata.name!)
  const entry = (node: string) =>
    nextEntry(config, node, { state: 'Applied', message: '0 files in place' }, undefined, new Date())
  const reports = podClient.resource(NODECONFIGREPORTS)
  const who = (await podClient
    .resource({
      group: 'authentication.k8s.io',
      version: 'v1',
      resource: 'selfsubjectreviews',
      namespaced: false,
      kind: 'SelfSubjectReview',
    })
    .create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
      metadata: {},
    })) as unknown as {
    status: { userInfo: { extra?: Record<string, string[]> } }
  }
  assert.deepEqual(who.status.userInfo.extra?.['authentication.kubernetes.io/node-name'], [a])
  // The API server loads a new policy asynchronously: until it refuses, the write lands and is undone.
  let refused: (Error & { status?: number }) | undefined
  await eventually(
    async () => {
      try {
        await reports.apply(reportBody(config, entry(b)), { fieldManager: 'edgeop-agent', force: true })
        await client.resource(NODECONFIGREPORTS).delete(reportName(config.metadata.name!, b))
        return false
      } catch (err) {
        refused = err as Error & { status?: number }
        return true
      }
    },
    { timeoutMs: 30_000, what: 'the policy refuses node B’s report' },
  )
  assert.equal(refused?.status, 403, String(refused))
  assert.match(
    refused!.message,
    new RegExp(`node ${a} may write only its own NodeConfigReports, not one of node ${b}`),
  )
  const own = await reports.apply(reportBody(config, entry(a)), { fieldManager: 'edgeop-agent', force: true })
  assert.equal(own.metadata.name, reportName(config.metadata.name!, a))

  // An identity whose user info has no extra at all (here a client certificate through the test's
  // proxy, which impersonates it) is no node identity: the policy does not apply to it. Reading the
  // absent map unguarded was a CEL error, which failurePolicy Fail turned into a refusal of every
  // such agent's reports.
  const proxy = await env().startFaultProxy()
  cleanup.push(() => proxy.close())
  const user = await env().userKubeconfig(`edgeop-agent:${b}`, [group])
  const viaProxy = new KubeClient(
    await loadClusterConfig({
      kubeconfig: await env().writeKubeconfig({
        server: proxy.url,
        credentials: { certPem: user.certPem, keyPem: user.keyPem },
      }),
    }),
  )
  cleanup.push(() => viaProxy.close())
  const theirs = await viaProxy
    .resource(NODECONFIGREPORTS)
    .apply(reportBody(config, entry(b)), { fieldManager: 'edgeop-agent', force: true })
  assert.equal(theirs.metadata.name, reportName(config.metadata.name!, b))
})

test('a rollout in waves stops when failures pass maxFailures, with a condition saying why; the nodes of later waves never try it', async () => {
  aggregatorRunning()
  if (agents.size === 0) for (const n of fleetNodes) agents.set(n, await startAgent(n))
  const name = `fleet-wave-${run}`
  // A directory where the file must go: every node fails to write it.
  for (const a of agents.values()) await mkdir(join(a.root, `etc/${name}.conf`), { recursive: true })
  await putConfig(name, 'bad\n', { maxUnavailable: 1, maxFailures: 0 })
  let nc: NodeConfig | undefined
  await eventually(
    async () => {
      nc = await client.resource(NODECONFIGS).get(name)
      return (
        nc.status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'FailureThresholdExceeded'
      )
    },
    { timeoutMs: WAIT_MS, what: `rollout halted (${JSON.stringify(nc?.status)})` },
  )
  const status = nc!.status!
  const condition = status.conditions!.find((c) => c.type === 'Progressing')!
  assert.equal(condition.status, 'False')
  assert.match(condition.message, /more than spec.rollout.maxFailures \(0\)/)
  const opened = fleetNodes.filter((n) => rolloutBucket(nc!.metadata.uid!, n) < status.rollout!.percent)
  const closed = fleetNodes.filter((n) => !opened.includes(n))
  assert.ok(status.rollout!.percent < 100 && closed.length > 0, JSON.stringify(status))
  assert.equal(status.failed, opened.length)
  const reports = (
    await client.resource(NODECONFIGREPORTS).list({ fieldSelector: `spec.nodeConfig=${name}` })
  ).items
  assert.deepEqual(
    reports.map((r) => r.spec.nodeName).sort(),
    [...opened].sort(),
    'only the opened wave tried it',
  )
})

test('migration: a shared status.nodes[] becomes one report per node, keeping each transition time, and the shared list is removed', async () => {
  aggregatorRunning()
  const name = `fleet-migrate-${run}`
  const nodes = [0, 1].map((i) => `ncfleet-${run}-m${i}`)
  created.add(name)
  // The nodes exist and are selected before the NodeConfig, as in an install being upgraded.
  // The nodes exist and are selected before the NodeConfig, as in an install being upgraded.
  for (const n of nodes) await createNode(n, { [`${RUN}-migrate`]: run })
  const ncs = client.resource(NODECONFIGS)
  const config = await ncs.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name },
    spec: {
      nodeSelector: { [`${RUN}-migrate`]: run },
      files: [{ path: `etc/${name}.conf`, content: 'm\n', mode: '0644' }],
    },
  } as NodeConfig)
  const then = new Date('2026-11-01T00:00:00Z')
  for (const n of nodes) {
    const entry = nextEntry(config, n, { state: 'Applied', message: '1 file in place' }, undefined, then)
    await ncs.apply(statusApplyBody(config, entry) as NodeConfig, {
      fieldManager: fieldManagerFor(n),
      force: true,
      subresource: 'status',
    })
  }
  for (const n of nodes) await startAgent(n, { create: false })
  let last: unknown
  await eventually(
    async () => {
      const nc = await ncs.get(name)
      last = nc.status
      return nc.status?.nodes === undefined && nc.status?.applied === 2
    },
    { timeoutMs: WAIT_MS, what: `shared list removed, aggregate applied 2 (${JSON.stringify(last)})` },
  )
  const reports = (
    await client.resource(NODECONFIGREPORTS).list({ fieldSelector: `spec.nodeConfig=${name}` })
  ).items
  assert.deepEqual(
    reports.map((r) => [r.spec.nodeName, r.spec.lastTransitionTime]).sort(),
    nodes.map((n) => [n, '2026-11-01T00:00:00Z']),
  )
})
