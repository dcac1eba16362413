/**
 * The arm64 single executable (dist/edgeop-linux-arm64, `npm run build:sea`) as a NodeConfig
 * agent against the real (amd64) control plane: `edgeop agent` runs under Debian's
 * qemu-user-static with Debian's arm64 libc as sysroot, with a client certificate bound to the
 * shipped agent RBAC, and must write the file a NodeConfig selects for its node and report
 * Applied in the status. Kept to one object: every step is emulated (several times slower).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { seaPath } from '../../build/sea.ts'
import { commandFor } from '../../build/targets.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import {
  NODECONFIGREPORTS,
  type NodeConfigReport,
  reportName,
} from '../../src/operators/nodeconfig/report-api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { adminClient } from '../support/kube.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { useTestEnv } from '../support/test-env.ts'
import { grantAgentRbac, installNodeConfigCrd, startAggregator } from './fixtures/nodeconfig-harness.ts'

const run = randomBytes(4).toString('hex')
const nodeName = `nc-arm64-${run}`
const configName = `arm64-${run}`
const group = `edgeop:nodeconfig-agents-${run}`
/** Emulated start-up (V8 under qemu) and list/watch take seconds, not milliseconds. */
const START_MS = 120_000
const WAIT_MS = 120_000

const { env, setup } = useTestEnv()
let client: KubeClient
let root: string
let agent: OperatorProcess | undefined

const stop = new AbortController()

setup(async () => {
  client = adminClient(env(), env().server)
  await installNodeConfigCrd(client)
  startAggregator(client, stop.signal)
  await grantAgentRbac(client, group, `edgeop-nodeconfig-arm64-${run}`)
  await client
    .resource(CORE_TYPES.nodes)
    .create({ apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels: { arch: 'arm64', run } } })
  const user = await env().userKubeconfig(`edgeop-agent:${nodeName}`, [group])
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { certPem: user.certPem, keyPem: user.keyPem },
  })
  root = await realpath(await mkdtemp(join(tmpdir(), `nc-arm64-${run}-`)))
  agent = await startOperator(
    'arm64-agent',
    ['agent', `--node-name=${nodeName}`, `--root=${root}`, `--kubeconfig=${kubeconfig}`],
    START_MS,
    { command: commandFor('arm64', [seaPath('arm64')]) },
  )
})

after(async () => {
  stop.abort()
  if (agent) {
    agent.kill('SIGTERM')
    await agent.exited
  }
  await client
    ?.resource(NODECONFIGS)
    .delete(configName)
    .catch(() => {})
  await client
    ?.resource(CORE_TYPES.nodes)
    .delete(nodeName)
    .catch(() => {})
  await client?.close()
  if (root) await rm(root, { recursive: true, force: true })
})

test('the arm64 agent writes the selected file and reports Applied for its node', async () => {
  await client.resource(NODECONFIGS).apply(
    {
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'NodeConfig',
      metadata: { name: configName },
      spec: {
        nodeSelector: { arch: 'arm64', run },
        rollout: { maxUnavailable: 100, maxFailures: 0 },
        files: [{ path: 'etc/arch.conf', content: 'arm64\n', mode: '0644' }],
      },
    },
    { fieldManager: 'edgeop-tests', force: true },
  )
  await eventually(
    async () => (await readFile(join(root, 'etc/arch.conf'), 'utf8').catch(() => '')) === 'arm64\n',
    { timeoutMs: WAIT_MS, what: 'etc/arch.conf written by the arm64 agent' },
  )
  let report: NodeConfigReport | undefined
  await eventually(
    async () => {
      const obj = await client.resource(NODECONFIGS).get(configName)
      report = await client
        .resource(NODECONFIGREPORTS)
        .get(reportName(configName, nodeName))
        .catch(() => undefined)
      return report?.spec.state === 'Applied' && report.spec.observedGeneration === obj.metadata.generation
    },
    { timeoutMs: WAIT_MS, what: `report Applied for ${nodeName} (last: ${JSON.stringify(report?.spec)})` },
  )
  // The process really is the emulated arm64 executable, not a host fallback.
  assert.equal(agent!.child.spawnargs[0], commandFor('arm64', [])[0])
  assert.equal(agent!.child.spawnargs.at(3), seaPath('arm64'))
})
