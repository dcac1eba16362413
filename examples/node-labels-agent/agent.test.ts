/**
 * The node agent against a real etcd + kube-apiserver started by `edgeop/testing`. The test
 * environment runs no kubelet, so the test creates the Node objects itself, as an admin would.
 *
 *     npm run build && node --test examples/node-labels-agent/agent.test.ts
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { CORE_TYPES, type KubeObject, Manager } from 'edgeop'
import { noopLogger } from 'edgeop/core'
import { eventually, startTestEnvironment, type TestEnvironment } from 'edgeop/testing'
import { addNodeLabelsAgent, LABELS_FILE, type NodeLabelsAgent } from './agent.ts'

let env: TestEnvironment
let dir: string
let agent: NodeLabelsAgent
const stop = new AbortController()
let running: Promise<void> | undefined
// Nodes are cluster-scoped: unique names keep a reused cluster (EDGEOP_TEST_USE_EXISTING_CLUSTER) clean.
const suffix = randomBytes(4).toString('hex')
const mine = `edge-${suffix}`
const other = `other-${suffix}`

const readLabels = async (): Promise<Record<string, string> | undefined> =>
  readFile(join(dir, LABELS_FILE), 'utf8').then(
    (t) => JSON.parse(t) as Record<string, string>,
    () => undefined,
  )

before(async () => {
  env = await startTestEnvironment()
  dir = await mkdtemp(join(tmpdir(), 'edgeop-node-labels-'))
  const nodes = env.client.resource(CORE_TYPES.nodes)
  for (const name of [mine, other])
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { zone: 'a' } } })
  const manager = new Manager({
    client: env.client,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    logger: noopLogger,
  })
  agent = addNodeLabelsAgent(manager, { nodeName: mine, dir })
  running = manager.run(stop.signal)
})

after(async () => {
  stop.abort()
  await running
  const nodes = env?.client.resource(CORE_TYPES.nodes)
  for (const name of [mine, other]) await nodes?.delete(name).catch(() => {})
  await env?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

test("the agent writes its own Node's labels and follows changes to them", async () => {
  assert.deepEqual(await eventually(readLabels, { what: 'labels file' }), { zone: 'a' })
  await env.client.resource(CORE_TYPES.nodes).patch(mine, { metadata: { labels: { role: 'edge' } } }, 'merge')
  await eventually(async () => (await readLabels())?.role === 'edge', { what: 'role label in the file' })
  assert.deepEqual(await readLabels(), { role: 'edge', zone: 'a' })
})

test('the field selector keeps every other Node out of the agent: its cache holds one Node', async () => {
  await env.client
    .resource(CORE_TYPES.nodes)
    .patch(other, { metadata: { labels: { role: 'other' } } }, 'merge')
  await eventually(async () => (await readLabels())?.role === 'edge')
  assert.deepEqual(agent.nodes.store.keys(), [mine])
  const cached: KubeObject | undefined = agent.nodes.store.get(mine)
  assert.equal(cached?.status, undefined, 'metadata only: no status in the cache')
})

test('when its Node is deleted, the agent removes the file', async () => {
  await env.client.resource(CORE_TYPES.nodes).delete(mine)
  await eventually(async () => ((await readLabels()) === undefined ? true : undefined), {
    what: 'labels file removed',
  })
})
