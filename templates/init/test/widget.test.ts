/**
 * The controller against a real etcd and kube-apiserver, started by edgeop/testing (the binaries are
 * built once with Go into ~/.cache/edgeop, or taken from EDGEOP_TEST_ASSETS).
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { CORE_TYPES, Manager } from 'edgeop'
import { startTestEnvironment, type TestEnvironment, waitFor } from 'edgeop/testing'
import { WIDGETS, type Widget, widgetController, widgetCrd } from '../src/widget.ts'

let env: TestEnvironment
const stop = new AbortController()
let running: Promise<void> | undefined

before(async () => {
  env = await startTestEnvironment({ crds: [widgetCrd] })
  const manager = new Manager({ client: env.client, metricsBindAddress: '0', healthProbeBindAddress: '0' })
  manager.add(widgetController(manager))
  running = manager.run(stop.signal)
})

after(async () => {
  stop.abort()
  await running
  await env?.stop()
})

test('a Widget gets a ConfigMap with its message, and the ConfigMap name in its status', async () => {
  const namespace = await env.createNamespace('widget')
  await env.client.resource<Widget>(WIDGETS, namespace).create({
    apiVersion: 'example.com/v1alpha1',
    kind: 'Widget',
    metadata: { name: 'hello' },
    spec: { message: 'hello, world' },
  })
  const widget = await waitFor<Widget>(
    env.client,
    WIDGETS,
    'hello',
    (w) => w.status?.configMap !== undefined,
    {
      namespace,
    },
  )
  assert.equal(widget.status?.configMap, 'hello')
  const configMap = await env.client.resource(CORE_TYPES.configMaps, namespace).get('hello')
  assert.deepEqual(configMap.data, { message: 'hello, world' })
})
