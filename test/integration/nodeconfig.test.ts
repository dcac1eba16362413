/**
 * The NodeConfig agent on the real control plane: three agents as separate processes
 * (test/integration/fixtures/nodeconfig-agent.ts), each with its own client certificate
 * bound to exactly the ClusterRole and Role shipped in deploy/agent/rbac.yaml, each
 * talking through a fault proxy that logs every request, for three fake Node objects
 * with different labels and three temporary roots.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { NODECONFIGS, type NodeConfig, type NodeFile } from '../../src/operators/nodeconfig/api.ts'
import { NODECONFIGREPORTS, type NodeConfigReport } from '../../src/operators/nodeconfig/report-api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { FaultProxy } from '../controlplane/env.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'
import {
  AgentProcess,
  deployManifest,
  grantAgentRbac,
  installNodeConfigCrd,
  startAggregator,
} from './fixtures/nodeconfig-harness.ts'

type Key = 'a' | 'b' | 'c'
const KEYS: Key[] = ['a', 'b', 'c']
const run = randomBytes(4).toString('hex')
const RUN = 'edgeop.test/nodeconfig-run'
const node: Record<Key, string> = { a: `nc-${run}-a`, b: `nc-${run}-b`, c: `nc-${run}-c` }
const initialLabels: Record<Key, Record<string, string>> = {
  a: { [RUN]: run, role: 'edge', zone: 'north' },
  b: { [RUN]: run, role: 'edge', zone: 'south' },
  c: { [RUN]: run, role: 'core', zone: 'south' },
}
/** Fast drift checks, so "edit by hand → restored" takes a second, not thirty. */
const RECHECK_MS = 1000
const WAIT_MS = 60_000

const { env, setup } = useTestEnv()
let client: KubeClient
let proxy: FaultProxy
const group = `edgeop:nodeconfig-agents-${run}`
const roots = {} as Record<Key, string>
const kubeconfigs = {} as Record<Key, string>
const agents = {} as Record<Key, AgentProcess>
const created = new Set<string>()
let outside: string
const stop = new AbortController()

setup(async () => {
  client = adminClient(env(), env().server)
  await installNodeConfigCrd(client)
  await grantAgentRbac(client, group, `edgeop-nodeconfig-test-${run}`)
  proxy = await env().startFaultProxy()
  startAggregator(client, stop.signal)
  outside = await realpath(await mkdtemp(join(tmpdir(), `nc-${run}-outside-`)))
  for (const k of KEYS) {
    await client
      .resource(CORE_TYPES.nodes)
      .create({ apiVersion: 'v1', kind: 'Node', metadata: { name: node[k], labels: initialLabels[k] } })
    const user = await env().userKubeconfig(`edgeop-agent:${node[k]}`, [group])
    kubeconfigs[k] = await env().writeKubeconfig({
      server: proxy.url,
      credentials: { certPem: user.certPem, keyPem: user.keyPem },
    })
    roots[k] = await realpath(await mkdtemp(join(tmpdir(), `nc-${run}-${k}-`)))
    startAgent(k)
  }
  await Promise.all(KEYS.map((k) => agents[k].synced()))
})

after(async () => {
  stop.abort()
  await Promise.all(KEYS.map((k) => agents[k]?.stop()))
  for (const name of created)
    await ncs()
      .delete(name)
      .catch(() => {})
  for (const k of KEYS)
    await client
      .resource(CORE_TYPES.nodes)
      .delete(node[k])
      .catch(() => {})
  await proxy?.close()
  await client?.close()
  for (const d of [...Object.values(roots), outside]) if (d) await rm(d, { recursive: true, force: true })
})

function startAgent(k: Key): void {
  agents[k] = new AgentProcess({
    kubeconfig: kubeconfigs[k],
    nodeName: node[k],
    root: roots[k],
    recheckIntervalMs: RECHECK_MS,
  })
}

const ncs = () => client.resource(NODECONFIGS)
async function putConfig(
  name: string,
  selector: Record<string, string>,
  files: (Omit<NodeFile, 'mode'> & { mode?: string })[],
): Promise<void> {
  created.add(name)
  await ncs().apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: { name },
      // Every node at once: these tests are about files and reports, not waves.
      spec: {
        nodeSelector: { [RUN]: run, ...selector },
        files: files as NodeFile[],
        rollout: { maxUnavailable: 100, maxFailures: 0 },
      },
    },
    { fieldManager: 'edgeop-tests', force: true },
  )
}
async function fileOn(k: Key, path: string): Promise<string | undefined> {
  return readFile(join(roots[k], path), 'utf8').catch(() => undefined)
}
/** Waits until every listed file has that content on that node (undefined: absent). */
async function filesAre(want: Partial<Record<Key, Record<string, string | undefined>>>, what: string) {
  let last = ''
  await eventually(
    async () => {
      for (const [k, files] of Object.entries(want) as [Key, Record<string, string | undefined>][])
        for (const [path, content] of Object.entries(files)) {
          const got = await fileOn(k, path)
          if (got !== content) {
            last = `${k}:${path} is ${JSON.stringify(got)}, want ${JSON.stringify(content)}`
            return false
          }
        }
      return true
    },
    { timeoutMs: WAIT_MS, what: `${what} (${last})` },
  )
}
/** A NodeConfig and its reports. */
interface Reported {
  config: NodeConfig
  reports: NodeConfigReport[]
}
/**
 * Waits until `name` has reports from exactly these nodes in these states at its generation,
 * and an aggregate status that counts them (and returns both).
 */
async function statusIs(name: string, want: Partial<Record<Key, 'Applied' | 'Failed'>>, what: string) {
  let last: Reported | undefined
  const expected = Object.entries(want)
    .map(([k, s]) => `${node[k as Key]}=${s}`)
    .sort()
  await eventually(
    async () => {
      const config = await ncs().get(name)
      const reports = (
        await client.resource(NODECONFIGREPORTS).list({ fieldSelector: `spec.nodeConfig=${name}` })
      ).items
      last = { config, reports }
      const got = reports
        .filter((r) => r.spec.observedGeneration === config.metadata.generation)
        .map((r) => `${r.spec.nodeName}=${r.spec.state}`)
        .sort()
      const s = config.status
      return (
        JSON.stringify(got) === JSON.stringify(expected) &&
        reports.length === expected.length &&
        s !== undefined &&
        s.observedGeneration === config.metadata.generation &&
        s.desired === expected.length &&
        s.applied === expected.filter((e) => e.endsWith('=Applied')).length &&
        s.failed === expected.filter((e) => e.endsWith('=Failed')).length
      )
    },
    { timeoutMs: WAIT_MS, what: `${what}: ${name} reports ${JSON.stringify(expected)}` },
  ).catch((err: unknown) => {
    // What was last seen, read when the wait ends (the message above is built before it starts).
    const logs = KEYS.map((k) => `${k}: ${agents[k]?.stderr.slice(-8).join('\n')}`).join('\n')
    const seen = `last seen: ${JSON.stringify(last?.config.status)}, ${JSON.stringify(last?.reports.map((r) => r.spec))}; the agents' last log lines:\n${logs}`
    throw new Error(`${(err as Error).message}; ${seen}`, { cause: err })
  })
  return last!
}
const entry = (r: Reported, k: Key) => r.reports.find((e) => e.spec.nodeName === node[k])?.spec
async function managedFiles(k: Key): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (prefix === '' && e.name === '.edgeop') continue
      if (e.isDirectory()) await walk(join(dir, e.name), `${prefix}${e.name}/`)
      else out.push(`${prefix}${e.name}`)
    }
  }
  await walk(roots[k], '')
  return out.sort()
}

const EDGE = `edge-${run}`
const ALL = `all-${run}`
const HELLO = '#!/bin/sh\necho hi\n'

test('files appear exactly on the selected nodes; one report per node, each written by its own agent, counted in the aggregate', async () => {
  await putConfig(EDGE, { role: 'edge' }, [
    { path: 'etc/edge.conf', content: 'edge v1\n' },
    { path: 'bin/hello.sh', content: HELLO, mode: '0755' },
  ])
  await putConfig(ALL, {}, [{ path: 'etc/motd', content: 'welcome\n' }])
  await filesAre(
    {
      a: { 'etc/edge.conf': 'edge v1\n', 'bin/hello.sh': HELLO, 'etc/motd': 'welcome\n' },
      b: { 'etc/edge.conf': 'edge v1\n', 'bin/hello.sh': HELLO, 'etc/motd': 'welcome\n' },
      c: { 'etc/motd': 'welcome\n' },
    },
    'files on selected nodes',
  )
  const edge = await statusIs(EDGE, { a: 'Applied', b: 'Applied' }, 'edge applied')
  await statusIs(ALL, { a: 'Applied', b: 'Applied', c: 'Applied' }, 'all applied')
  assert.deepEqual(await managedFiles('c'), ['etc/motd'], 'nothing else on c')
  assert.equal((await stat(join(roots.a, 'bin/hello.sh'))).mode & 0o777, 0o755)
  assert.equal(entry(edge, 'a')?.message, '2 files in place')

  // Each report was written by its own node's agent, and by nobody else.
  const writes = proxy.requests((r) => r.method !== 'GET' && r.path.includes('/nodeconfigreports/'))
  assert.ok(writes.length > 0, 'reports written through the proxy')
  for (const w of writes) {
    const writer = w.user?.slice('edgeop-agent:'.length)
    assert.ok(writer && w.path.endsWith(`.${writer}`), `${w.user} wrote ${w.path}`)
  }
  assert.equal(edge.config.status?.nodes, undefined, 'nothing in the shared list')

  const events = (await client.resource(CORE_TYPES.events, 'default').list()).items as (KubeObject & {
    reason?: string
    regarding?: { name?: string }
    reportingInstance?: string
  })[]
  const writers = events
    .filter((e) => e.reason === 'FilesWritten' && e.regarding?.name === EDGE)
    .map((e) => e.reportingInstance!)
  // At most one per node, recorded under the shipped events Role. Not exactly one: the
  // EventRecorder names an Event `<object>.<ms><seq>`, so two agents reporting on the same
  // NodeConfig in the same millisecond collide (409) and one Event is lost.
  assert.ok(
    writers.length >= 1 && writers.every((w) => w === node.a || w === node.b),
    `events from ${writers}`,
  )
  assert.equal(new Set(writers).size, writers.length, 'no node reported twice')
})

test('relabelling nodes moves the files and the reports', async () => {
  const nodes = client.resource(CORE_TYPES.nodes)
  await nodes.patch(node.b, { metadata: { labels: { role: 'core' } } }, 'merge')
  await nodes.patch(node.c, { metadata: { labels: { role: 'edge' } } }, 'merge')
  await filesAre(
    {
      b: { 'etc/edge.conf': undefined, 'bin/hello.sh': undefined, 'etc/motd': 'welcome\n' },
      c: { 'etc/edge.conf': 'edge v1\n', 'bin/hello.sh': HELLO },
    },
    'edge files moved from b to c',
  )
  await statusIs(EDGE, { a: 'Applied', c: 'Applied' }, 'b removed its entry, c added one')
  assert.deepEqual(await managedFiles('b'), ['etc/motd'], 'the emptied bin/ directory is gone too')
})

test('a file edited, deleted or chmodded by hand is restored', async () => {
  await writeFile(join(roots.a, 'etc/edge.conf'), 'tampered')
  await rm(join(roots.c, 'bin/hello.sh'))
  await chmod(join(roots.b, 'etc/motd'), 0o600)
  await filesAre({ a: { 'etc/edge.conf': 'edge v1\n' }, c: { 'bin/hello.sh': HELLO } }, 'restored')
  await eventually(async () => ((await stat(join(roots.b, 'etc/motd'))).mode & 0o777) === 0o644, {
    timeoutMs: WAIT_MS,
    what: 'mode restored',
  })
})

test('conflicts and bad input fail only the NodeConfigs concerned; nothing outside a root is touched', async () => {
  await assert.rejects(putConfig(`reject-${run}`, {}, [{ path: '../escape', content: 'x' }]), { status: 422 })
  await symlink(outside, join(roots.a, 'escape'))
  const CONFLICT = `conflict-${run}`
  const BIG = `big-${run}`
  const ESCAPE = `escape-${run}`
  await putConfig(CONFLICT, {}, [{ path: 'etc/motd', content: 'mine!\n' }])
  await putConfig(BIG, {}, [{ path: 'big', content: '€'.repeat(90_000) }]) // 270,000 bytes
  await putConfig(ESCAPE, {}, [{ path: 'escape/passwd', content: 'root::0:0::/:/bin/sh\n' }])

  const all = await statusIs(ALL, { a: 'Failed', b: 'Failed', c: 'Failed' }, 'conflict reported')
  assert.equal(entry(all, 'b')?.message, `"etc/motd" is also claimed by NodeConfig "${CONFLICT}"`)
  const conflict = await statusIs(CONFLICT, { a: 'Failed', b: 'Failed', c: 'Failed' }, 'conflict reported')
  assert.equal(entry(conflict, 'c')?.message, `"etc/motd" is also claimed by NodeConfig "${ALL}"`)
  const big = await statusIs(BIG, { a: 'Failed', b: 'Failed', c: 'Failed' }, 'over the cap')
  assert.match(entry(big, 'a')!.message!, /270000 bytes, over the 262144-byte cap/)
  const escaping = await statusIs(
    ESCAPE,
    { a: 'Failed', b: 'Applied', c: 'Applied' },
    'symlink escape on a only',
  )
  assert.match(entry(escaping, 'a')!.message!, /escape\/passwd: a parent directory leads outside the root/)
  await statusIs(EDGE, { a: 'Applied', c: 'Applied' }, 'unrelated NodeConfig unaffected')
  for (const k of KEYS) assert.equal(await fileOn(k, 'etc/motd'), 'welcome\n', 'no silent overwrite')
  assert.deepEqual(await readdir(outside), [], 'nothing written outside the root')
  assert.equal(await fileOn('b', 'escape/passwd'), 'root::0:0::/:/bin/sh\n')

  for (const name of [CONFLICT, BIG, ESCAPE]) await ncs().delete(name)
  await statusIs(ALL, { a: 'Applied', b: 'Applied', c: 'Applied' }, 'conflict resolved')
  await filesAre(
    { b: { 'escape/passwd': undefined }, c: { 'escape/passwd': undefined } },
    'escape files collected',
  )
  await rm(join(roots.a, 'escape'))
})

test('an agent stopped while things change converges when it comes back', async () => {
  assert.equal(await agents.a.stop(), 0, 'clean shutdown')
  const LATE = `late-${run}`
  await ncs().delete(ALL)
  await client.resource(CORE_TYPES.nodes).patch(node.a, { metadata: { labels: { role: 'core' } } }, 'merge')
  await putConfig(LATE, { zone: 'north' }, [{ path: 'late.conf', content: 'late\n' }])
  await filesAre(
    { b: { 'etc/motd': undefined }, c: { 'etc/motd': undefined } },
    'running agents removed motd',
  )
  assert.equal(await fileOn('a', 'etc/motd'), 'welcome\n', 'the stopped agent changed nothing')
  assert.equal(await fileOn('a', 'late.conf'), undefined)

  startAgent('a')
  await agents.a.synced()
  await filesAre(
    {
      a: {
        'late.conf': 'late\n',
        'etc/motd': undefined,
        'etc/edge.conf': undefined,
        'bin/hello.sh': undefined,
      },
    },
    'a converged',
  )
  assert.deepEqual(await managedFiles('a'), ['late.conf'])
  await statusIs(EDGE, { c: 'Applied' }, 'a removed its entry after the restart')
  await statusIs(LATE, { a: 'Applied' }, 'late applied on a')
})

test('deleting the NodeConfigs removes their files everywhere and empties the ownership records', async () => {
  await ncs().delete(EDGE)
  await ncs().delete(`late-${run}`)
  await eventually(
    async () => {
      for (const k of KEYS) if ((await managedFiles(k)).length > 0) return false
      return true
    },
    { timeoutMs: WAIT_MS, what: 'no managed file left on any node' },
  )
  for (const k of KEYS) {
    assert.deepEqual(await readdir(roots[k]), ['.edgeop'])
    assert.deepEqual(JSON.parse(await readFile(join(roots[k], '.edgeop/owners.json'), 'utf8')).files, {})
  }
})

test('idle: drift checks every second cost the API server nothing', async (t) => {
  await putConfig(`idle-${run}`, {}, [{ path: 'idle.conf', content: 'idle\n' }])
  await statusIs(`idle-${run}`, { a: 'Applied', b: 'Applied', c: 'Applied' }, 'idle config applied')
  await new Promise((r) => setTimeout(r, 2000))
  proxy.clearLog()
  const windowMs = 15_000
  await new Promise((r) => setTimeout(r, windowMs))
  const byAgent = KEYS.map((k) => proxy.requests((r) => r.user === `edgeop-agent:${node[k]}`))
  for (const [i, requests] of byAgent.entries())
    assert.ok(
      requests.length <= 1,
      `${node[KEYS[i]!]} made ${requests.length} requests while idle: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')}`,
    )
  const rss = await Promise.all(KEYS.map((k) => agents[k].rssBytes()))
  t.diagnostic(
    `idle ${windowMs / 1000} s, ${windowMs / RECHECK_MS} drift checks per agent: requests per agent ${byAgent.map((r) => r.length).join('/')}; RSS MiB ${rss.map((b) => (b / 2 ** 20).toFixed(1)).join('/')}`,
  )
})

test('deploy/agent/daemonset.yaml: accepted by the API server (strict dry run); only the root and the snapshot cache from the host; no privileges', async () => {
  const [ds] = (await deployManifest('daemonset.yaml')) as (KubeObject & { spec: DaemonSetSpec })[]
  const ns = await env().createNamespace('nc-deploy')
  await client
    .resource(
      { group: 'apps', version: 'v1', resource: 'daemonsets', namespaced: true, kind: 'DaemonSet' },
      ns,
    )
    .create(
      { ...ds!, metadata: { ...ds!.metadata, namespace: ns } },
      { dryRun: true, fieldValidation: 'Strict' },
    )
  const pod = ds!.spec.template.spec
  const [agent] = pod.containers
  assert.deepEqual(
    pod.volumes.map((v) => v.hostPath?.path),
    ['/var/lib/edgeop/files', '/var/lib/edgeop/cache'],
    'the only host paths are the root and the cache of snapshots (edge autonomy, on by default)',
  )
  assert.deepEqual(agent!.volumeMounts, [
    { name: 'files', mountPath: '/var/lib/edgeop/files' },
    { name: 'cache', mountPath: '/var/lib/edgeop/cache' },
  ])
  assert.equal(agent!.securityContext.readOnlyRootFilesystem, true)
  assert.equal(agent!.securityContext.allowPrivilegeEscalation, false)
  assert.deepEqual(agent!.securityContext.capabilities, { drop: ['ALL'] })
  assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault')
  assert.deepEqual(agent!.env, [
    { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
  ])
  assert.ok(agent!.args.includes('--node-name=$(NODE_NAME)'))
  assert.equal(agent!.livenessProbe.httpGet.port, 'health')
  assert.equal(agent!.readinessProbe.httpGet.port, 'health')
  assert.equal(pod.hostNetwork ?? false, false)
  assert.equal(pod.hostPID ?? false, false)
})

interface DaemonSetSpec {
  template: {
    spec: {
      hostNetwork?: boolean
      hostPID?: boolean
      securityContext: { seccompProfile: { type: string } }
      volumes: { name: string; hostPath?: { path: string } }[]
      containers: {
        args: string[]
        env: unknown[]
        volumeMounts: unknown[]
        livenessProbe: { httpGet: { port: string } }
        readinessProbe: { httpGet: { port: string } }
        securityContext: {
          readOnlyRootFilesystem: boolean
          allowPrivilegeEscalation: boolean
          capabilities: unknown
        }
      }[]
    }
  }
}
