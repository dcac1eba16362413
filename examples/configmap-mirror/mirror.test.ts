/**
 * The mirror against a real etcd + kube-apiserver started by `edgeop/testing`:
 *
 *     npm run build && node --test examples/configmap-mirror/mirror.test.ts
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { CORE_TYPES, isNotFound, Manager } from 'edgeop'
import { noopLogger } from 'edgeop/core'
import { startTestEnvironment, type TestEnvironment, waitFor } from 'edgeop/testing'
import { addMirror, type ConfigMap, FIELD_MANAGER } from './mirror.ts'

let env: TestEnvironment
const stop = new AbortController()
let running: Promise<void> | undefined

before(async () => {
  env = await startTestEnvironment()
  // Ports "0": no metrics or probe server in a test; noopLogger: the test asserts, it does not read logs.
  const manager = new Manager({
    client: env.client,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    logger: noopLogger,
  })
  addMirror(manager)
  running = manager.run(stop.signal)
})

after(async () => {
  stop.abort()
  await running
  await env?.stop()
})

test('a ConfigMap labelled mirror=true gets a copy owned by it, and the copy follows its data', async () => {
  const ns = await env.createNamespace('mirror')
  const configMaps = env.client.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
  const original = await configMaps.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', labels: { mirror: 'true' } },
    data: { color: 'blue' },
  })

  const copy = await waitFor<ConfigMap>(
    env.client,
    CORE_TYPES.configMaps,
    'settings-copy',
    (c) => c.data?.color === 'blue',
    { namespace: ns },
  )
  const owner = copy.metadata.ownerReferences?.[0]
  assert.equal(owner?.uid, original.metadata.uid)
  assert.equal(owner?.controller, true)
  assert.equal(copy.metadata.labels?.['mirror-of'], 'settings')
  assert.ok(copy.metadata.managedFields?.some((f) => f.manager === FIELD_MANAGER))

  await configMaps.patch('settings', { data: { color: 'green' } }, 'merge')
  await waitFor<ConfigMap>(
    env.client,
    CORE_TYPES.configMaps,
    'settings-copy',
    (c) => c.data?.color === 'green',
    {
      namespace: ns,
    },
  )
})

test('a deleted copy comes back: the copies are owned objects, so their events wake the original', async () => {
  const ns = await env.createNamespace('mirror-owned')
  const configMaps = env.client.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
  await configMaps.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', labels: { mirror: 'true' } },
    data: { k: 'v' },
  })
  const first = await waitFor<ConfigMap>(env.client, CORE_TYPES.configMaps, 'app-copy', () => true, {
    namespace: ns,
  })
  await configMaps.delete('app-copy')
  const second = await waitFor<ConfigMap>(
    env.client,
    CORE_TYPES.configMaps,
    'app-copy',
    (c) => c.metadata.uid !== first.metadata.uid,
    { namespace: ns },
  )
  assert.equal(second.data?.k, 'v')
})

test('a ConfigMap without the label is never copied', async () => {
  const ns = await env.createNamespace('mirror-unlabelled')
  const configMaps = env.client.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
  // The unlabelled one first: by the time the labelled one's copy exists, the controller has
  // had every chance to copy the other.
  await configMaps.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: {} })
  await configMaps.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'marked', labels: { mirror: 'true' } },
    data: {},
  })
  await waitFor(env.client, CORE_TYPES.configMaps, 'marked-copy', () => true, { namespace: ns })
  const missing = await configMaps.get('plain-copy').then(
    () => false,
    (err: unknown) => isNotFound(err),
  )
  assert.equal(missing, true, 'plain-copy must not exist')
})
