/**
 * Edge autonomy on the real control plane: NodeConfig agents as separate
 * processes with `cacheDir`, talking through fault proxies that log every request.
 *
 * - kill -9, changes (edit, add, delete) while down, restart: the agent converges and the
 *   proxy's log holds no LIST and no streaming list — only watches from the snapshot's RV;
 * - etcd compacted past the snapshot (through the apiserver without watch cache, which
 *   answers an old RV with a real 410): the agent relists and the deletion is delivered;
 * - start while the apiserver is unreachable (every request dropped): the agent serves
 *   its files from the snapshot, repairs local drift, deletes nothing, says so in its log,
 *   and converges once traffic flows.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, realpath, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { NODECONFIGREPORTS, reportName } from '../../src/operators/nodeconfig/report-api.ts'
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

const run = randomBytes(4).toString('hex')
const RUN = 'edgeop.test/snapshot-run'
const WAIT_MS = 60_000
const RECHECK_MS = 1000

const { env, setup, defer } = useTestEnv({ exclusive: true })
let client: KubeClient
let cached: FaultProxy
let uncached: FaultProxy
const group = `edgeop:snapshot-agents-${run}`

setup(async () => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
  await installNodeConfigCrd(client)
  await grantAgentRbac(client, group, `edgeop-snapshot-test-${run}`)
  cached = await env().startFaultProxy()
  uncached = await env().startFaultProxy({ apiserver: 'uncached' })
  defer(() => cached.close())
  defer(() => uncached.close())
  const stop = new AbortController()
  defer(() => stop.abort())
  startAggregator(client, stop.signal)
})

const ncs = () => client.resource(NODECONFIGS)

/** One node with its own root, cache directory and kubeconfig (through `proxy`). */
async function edgeNode(name: string, proxy: FaultProxy) {
  const nodeName = `snap-${run}-${name}`
  await client
    .resource(CORE_TYPES.nodes)
    .create({ apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels: { [RUN]: nodeName } } })
  defer(() =>
    client
      .resource(CORE_TYPES.nodes)
      .delete(nodeName)
      .catch(() => {}),
  )
  const user = `edgeop-agent:${nodeName}`
  const u = await env().userKubeconfig(user, [group])
  const kubeconfig = await env().writeKubeconfig({
    server: proxy.url,
    credentials: { certPem: u.certPem, keyPem: u.keyPem },
  })
  const root = await realpath(await mkdtemp(join(tmpdir(), `snap-${run}-${name}-root-`)))
  const cacheDir = await realpath(await mkdtemp(join(tmpdir(), `snap-${run}-${name}-cache-`)))
  defer(() => rm(root, { recursive: true, force: true }))
  defer(() => rm(cacheDir, { recursive: true, force: true }))
  let agent: AgentProcess | undefined
  defer(() => agent?.stop())
  const configs: string[] = []
  defer(async () => {
    for (const c of configs)
      await ncs()
        .delete(c)
        .catch(() => {})
  })
  return {
    nodeName,
    user,
    root,
    cacheDir,
    get agent() {
      return agent!
    },
    start() {
      agent = new AgentProcess({ kubeconfig, nodeName, root, cacheDir, recheckIntervalMs: RECHECK_MS })
      return agent
    },
    async put(config: string, files: Record<string, string>) {
      const name = `${nodeName}-${config}`
      if (!configs.includes(name)) configs.push(name)
      await ncs().apply(
        {
          apiVersion: 'platform.example.com/v1alpha1',
          kind: 'NodeConfig',
          metadata: { name },
          spec: {
            nodeSelector: { [RUN]: nodeName },
            rollout: { maxUnavailable: 100, maxFailures: 0 },
            files: Object.entries(files).map(([path, content]) => ({ path, content, mode: '0644' })),
          },
        },
        { fieldManager: 'edgeop-tests', force: true },
      )
    },
    remove: (config: string) => ncs().delete(`${nodeName}-${config}`),
    file: (path: string) => readFile(join(root, path), 'utf8').catch(() => undefined),
    /**
     * Waits until all three snapshots (its Node, NodeConfigs, its reports) are written and the
     * NodeConfigs' holds every one of `names` (a report names its NodeConfig too, as its owner).
     */
    async snapshotHas(names: string[]) {
      await eventually(
        async () => {
          const files = (await readdir(cacheDir)).filter((f) => f.endsWith('.snapshot'))
          const configs = files.find((f) => f.startsWith('nodeconfigs-'))
          if (files.length !== 3 || !configs) return false
          const text = await readFile(join(cacheDir, configs), 'utf8')
          return names.every((n) => text.includes(`"name":"${nodeName}-${n}"`))
        },
        { timeoutMs: WAIT_MS, what: `snapshots of ${nodeName} hold ${names.join(', ')}` },
      )
    },
  }
}
type Edge = Awaited<ReturnType<typeof edgeNode>>

async function filesAre(n: Edge, want: Record<string, string | undefined>, what: string): Promise<void> {
  let last = ''
  await eventually(
    async () => {
      for (const [path, content] of Object.entries(want)) {
        const got = await n.file(path)
        if (got !== content) {
          last = `${path} is ${JSON.stringify(got)}, want ${JSON.stringify(content)}`
          return false
        }
      }
      return true
    },
    { timeoutMs: WAIT_MS, what: `${what} (${last})` },
  )
}

/** Reads of nodes or nodeconfigs by `user` in the proxy's log: lists, streaming lists, watches. */
function reads(proxy: FaultProxy, user: string, from: number): RequestRecord[] {
  return proxy
    .requests((r) => r.user === user && r.method === 'GET' && /\/(nodes|nodeconfigs)$/.test(r.path))
    .filter((r) => r.id > from)
}
const isList = (r: RequestRecord): boolean => !r.watch || r.params.get('sendInitialEvents') === 'true'
/** The one-object list a restored informer reads the server's current resourceVersion with. */
const isVersionRead = (r: RequestRecord): boolean => !r.watch && r.params.get('limit') === '1'
const lastId = (proxy: FaultProxy): number => proxy.requests().at(-1)?.id ?? 0

test('kill -9, changes while down, restart: converges from watch events alone — no LIST in the proxy log', async () => {
  const n = await edgeNode('kill', cached)
  await n.put('keep', { 'etc/keep.conf': 'v1\n' })
  await n.put('gone', { 'etc/gone.conf': 'bye\n' })
  n.start()
  await n.agent.synced()
  await filesAre(n, { 'etc/keep.conf': 'v1\n', 'etc/gone.conf': 'bye\n' }, 'first pass')
  await n.snapshotHas(['keep', 'gone'])

  n.agent.child.kill('SIGKILL')
  await n.agent.exited
  await n.put('keep', { 'etc/keep.conf': 'v2\n' })
  await n.remove('gone')
  await n.put('new', { 'etc/new.conf': 'hello\n' })

  const mark = lastId(cached)
  n.start() // the dead agent's lock (pid gone) is taken over
  await n.agent.synced()
  await filesAre(
    n,
    { 'etc/keep.conf': 'v2\n', 'etc/gone.conf': undefined, 'etc/new.conf': 'hello\n' },
    'converged after restart',
  )
  const after = reads(cached, n.user, mark)
  assert.ok(after.length >= 2, `the restarted agent watched (${after.length} reads)`)
  assert.deepEqual(
    after.filter((r) => isList(r) && !isVersionRead(r)).map((r) => `${r.path}?${r.query}`),
    [],
    'no LIST and no streaming list after a warm restart',
  )
  assert.ok(after.some(isVersionRead), 'the server version was read with a limit=1 list')
  for (const r of after.filter((r) => r.watch))
    assert.notEqual(r.params.get('resourceVersion') ?? '', '', `${r.path}: resumed from an RV`)
  assert.ok(
    n.agent.stderr.some((l) => l.includes('serving from cache snapshot')),
    'the agent says it started from its snapshot',
  )
})

test('etcd compacted past the snapshot: 410, relist, and the deletion reaches the disk', async () => {
  const n = await edgeNode('compact', uncached)
  await n.put('keep', { 'etc/keep.conf': 'kept\n' })
  await n.put('gone', { 'etc/gone.conf': 'bye\n' })
  n.start()
  await n.agent.synced()
  await filesAre(n, { 'etc/keep.conf': 'kept\n', 'etc/gone.conf': 'bye\n' }, 'first pass')
  await n.snapshotHas(['keep', 'gone'])
  assert.equal(await n.agent.stop(), 0)

  await n.remove('gone')
  await n.put('other', { 'etc/other.conf': 'x\n' })
  await env().compact()

  const mark = lastId(uncached)
  n.start()
  await n.agent.synced()
  await filesAre(
    n,
    { 'etc/keep.conf': 'kept\n', 'etc/gone.conf': undefined, 'etc/other.conf': 'x\n' },
    'converged after the relist',
  )
  const after = reads(uncached, n.user, mark)
  const first = after.find((r) => r.path.endsWith('/nodeconfigs') && !isVersionRead(r))
  assert.ok(first?.watch && first.params.get('resourceVersion'), 'resumed the watch from the snapshot first')
  assert.ok(
    after.some((r) => isList(r) && !isVersionRead(r)),
    'then relisted after the 410',
  )
})

test('start while the apiserver is unreachable: serves files from the snapshot, deletes nothing, converges when it returns', async () => {
  const n = await edgeNode('offline', cached)
  await n.put('a', { 'etc/a.conf': 'A\n' })
  await n.put('b', { 'etc/b.conf': 'B\n' })
  n.start()
  await n.agent.synced()
  await filesAre(n, { 'etc/a.conf': 'A\n', 'etc/b.conf': 'B\n' }, 'first pass')
  await n.snapshotHas(['a', 'b'])
  await eventually(
    async () =>
      (
        await client
          .resource(NODECONFIGREPORTS)
          .get(reportName(`${n.nodeName}-b`, n.nodeName))
          .catch(() => undefined)
      )?.spec.state === 'Applied',
    { timeoutMs: WAIT_MS, what: 'report written (so the snapshot holds it)' },
  )
  assert.equal(await n.agent.stop(), 0)

  const offline = cached.addFault({ action: { type: 'drop' } })
  await n.remove('b') // the agent cannot see this until the server is back
  n.start()
  await n.agent.synced()
  await eventually(() => n.agent.stderr.some((l) => l.includes('serving from cache snapshot')), {
    timeoutMs: WAIT_MS,
    what: 'the agent logs that it serves from its snapshot',
  })
  // Local drift is repaired from the snapshot while the server is unreachable.
  await unlink(join(n.root, 'etc/a.conf'))
  await filesAre(n, { 'etc/a.conf': 'A\n' }, 'drift repaired offline')
  assert.equal(await n.file('etc/b.conf'), 'B\n', 'nothing deleted because the server is unreachable')
  assert.ok(offline.hits > 0, 'the proxy dropped the agent requests')

  offline.clear()
  await filesAre(n, { 'etc/a.conf': 'A\n', 'etc/b.conf': undefined }, 'converged after the server returned')
  await eventually(
    () => n.agent.stderr.some((l) => l.includes('the snapshot is caught up with the server')),
    {
      timeoutMs: WAIT_MS,
      what: 'the agent logs that its snapshot caught up with the server',
    },
  )
})
