/**
 * Edge autonomy as shipped: the built binary (dist/edgeop.cjs) runs `edgeop agent` with the
 * arguments of deploy/agent/daemonset.yaml (its `--root` and `--cache-dir` under a scratch
 * directory, the ports ephemeral), through a fault proxy that stands for the apiserver. Synced and
 * its snapshot written, the agent loses its server (the proxy closed: connection refused), is
 * killed with SIGKILL as kubelet kills a container, and restarted: it serves its last known files
 * and repairs a file deleted by hand, all without the server; live for kubelet's liveness probe,
 * and not Ready, since its watches fail (it receives no change).
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
import { eventually } from '../../src/testing/eventually.ts'
import { deployObjects } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { useTestEnv } from '../support/test-env.ts'
import { grantAgentRbac, installNodeConfigCrd, startAggregator } from './fixtures/nodeconfig-harness.ts'

const run = randomBytes(4).toString('hex')
const WAIT_MS = 60_000
const { env, setup, defer } = useTestEnv()
let client: KubeClient

setup(async () => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
  await installNodeConfigCrd(client)
  // The aggregator opens each rollout's waves; without it an agent applies nothing.
  const aggregator = new AbortController()
  defer(() => aggregator.abort())
  startAggregator(client, aggregator.signal)
})

/** The agent container's args in deploy/agent/daemonset.yaml. */
async function shippedArgs(): Promise<string[]> {
  const ds = (await deployObjects('agent/daemonset.yaml')).find((o) => o.kind === 'DaemonSet') as unknown as {
    spec: { template: { spec: { containers: { name: string; args: string[] }[] } } }
  }
  return ds.spec.template.spec.containers.find((c) => c.name === 'agent')!.args
}

test('the agent as the DaemonSet runs it, killed and restarted while its apiserver is gone, serves its last files from the cache', async () => {
  const nodeName = `cachedir-${run}`
  const group = `edgeop:cachedir-agents-${run}`
  await grantAgentRbac(client, group, `edgeop-cachedir-test-${run}`)
  await client.resource(CORE_TYPES.nodes).create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: nodeName, labels: { 'edgeop.test/node': nodeName } },
  })
  defer(() =>
    client
      .resource(CORE_TYPES.nodes)
      .delete(nodeName)
      .catch(() => {}),
  )
  const config = `cachedir-${run}`
  await client.resource(NODECONFIGS).create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: config },
    spec: {
      nodeSelector: { 'edgeop.test/node': nodeName },
      files: [{ path: 'etc/edge.conf', content: 'last known\n', mode: '0644' }],
    },
  })
  defer(() =>
    client
      .resource(NODECONFIGS)
      .delete(config)
      .catch(() => {}),
  )

  // The host: the DaemonSet's two hostPaths under a scratch directory.
  const host = await realpath(await mkdtemp(join(tmpdir(), `cachedir-${run}-`)))
  defer(() => rm(host, { recursive: true, force: true }))
  const args = (await shippedArgs())
    .filter((a) => !/^--(health-probe|metrics)-bind-address=/.test(a)) // ephemeral ports instead
    .map((a) => a.replace('$(NODE_NAME)', nodeName))
    .map((a) => a.replace(/^--(root|cache-dir)=/, `--$1=${host}`))
  const root = args.find((a) => a.startsWith('--root='))!.slice('--root='.length)
  const cacheDir = args.find((a) => a.startsWith('--cache-dir='))?.slice('--cache-dir='.length)
  assert.ok(cacheDir, 'the shipped DaemonSet passes --cache-dir')

  const proxy = await env().startFaultProxy()
  defer(() => proxy.close())
  const user = await env().userKubeconfig(`edgeop-agent:${nodeName}`, [group])
  const kubeconfig = await env().writeKubeconfig({
    server: proxy.url,
    credentials: { certPem: user.certPem, keyPem: user.keyPem },
  })
  let agent: OperatorProcess | undefined
  defer(async () => {
    agent?.kill('SIGTERM')
    await agent?.exited
  })
  const start = async () => {
    // A 1 s drift check instead of the default 30 s, so the repair below is seen quickly.
    agent = await startOperator('agent', [...args, `--kubeconfig=${kubeconfig}`, '--recheck-interval=1s'])
    return agent
  }
  const file = () => readFile(join(root, 'etc/edge.conf'), 'utf8').catch(() => undefined)

  await start()
  await eventually(async () => (await file()) === 'last known\n', {
    timeoutMs: WAIT_MS,
    what: 'file written',
  })
  await eventually(
    async () => {
      // The NodeConfigs' own snapshot (`nodeconfigs-<hash>.snapshot`): the reports' snapshot names
      // the NodeConfig too (its owner), and the NodeConfigs' is written only once the rollout's
      // status writes have been quiet for 5 s.
      const snapshots = (await readdir(cacheDir)).filter((f) => /^nodeconfigs-.*\.snapshot$/.test(f))
      const text = (await Promise.all(snapshots.map((f) => readFile(join(cacheDir, f), 'utf8')))).join('')
      return text.includes(`"name":"${config}"`)
    },
    { timeoutMs: WAIT_MS, what: "the NodeConfigs' snapshot holds the NodeConfig" },
  )

  // The apiserver goes away (connection refused), then kubelet restarts the container.
  await proxy.close()
  agent!.kill('SIGKILL')
  await agent!.exited
  const restarted = await start()
  await restarted.waitForLog(
    (l) => l.msg === 'serving from cache snapshot until the watch catches up with the server',
    WAIT_MS,
  )
  // Liveness stays green (kubelet keeps the container); readiness says the watches fail, which
  // is true: the agent serves the last known state and receives no change.
  const probe = async (path: string) => {
    const r = await fetch(`${restarted.probesUrl}${path}`)
    return `${r.status} ${await r.text()}`
  }
  await eventually(async () => (await probe('/readyz?verbose')).includes('watch failures in a row'), {
    timeoutMs: WAIT_MS,
    what: 'readiness names the failing watches',
  })
  assert.match(await probe('/healthz'), /^200 /, 'live: kubelet does not restart it')
  assert.equal(await file(), 'last known\n', 'the last known file is kept')
  await unlink(join(root, 'etc/edge.conf'))
  await eventually(async () => (await file()) === 'last known\n', {
    timeoutMs: WAIT_MS,
    what: 'the file deleted by hand is restored from the snapshot, the apiserver still gone',
  })
  assert.equal(restarted.child.exitCode, null, 'the agent keeps running without its apiserver')
})
