/**
 * An operator's test written as a user of the package writes it: `edgeop/testing` starts a real etcd +
 * kube-apiserver, installs the AppService CRD (as `edgeop crd` prints it), a tiny controller runs
 * against it, and the test asserts what the controller did.
 *
 *     npm run build && node --test examples/envtest/appservice.test.ts
 *
 * Binaries: EDGEOP_TEST_ASSETS, else ~/.cache/edgeop/bin/…, else built with Go (see edgeop/testing).
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import {
  applyIfDrifted,
  CORE_TYPES,
  Controller,
  type KubeObject,
  Manager,
  type ResourceType,
  withControllerReference,
} from 'edgeop'
import { startTestEnvironment, type TestEnvironment, waitFor } from 'edgeop/testing'

/** The AppService kind, as the operator's API package would declare it. */
const APPSERVICES: ResourceType<AppService> = {
  group: 'platform.example.com',
  version: 'v1alpha1',
  resource: 'appservices',
  namespaced: true,
  kind: 'AppService',
}

interface AppService extends KubeObject {
  spec: { image: string }
}

interface ConfigMap extends KubeObject {
  data?: Record<string, string>
}

let env: TestEnvironment
let crdDir: string
const stopController = new AbortController()
let controllerDone: Promise<void>

before(async () => {
  // What `edgeop crd > config/crd/crds.yaml` writes; a real project keeps that file in its repository.
  crdDir = await mkdtemp(join(tmpdir(), 'edgeop-example-crds-'))
  const artifact = fileURLToPath(new URL('../../dist/edgeop.cjs', import.meta.url))
  await writeFile(join(crdDir, 'crds.yaml'), execFileSync(process.execPath, [artifact, 'crd']))

  env = await startTestEnvironment({ crds: [crdDir] })

  // The controller under test: every AppService gets a ConfigMap `<name>-settings` holding its image.
  const manager = new Manager({ client: env.client, metricsBindAddress: '0', healthProbeBindAddress: '0' })
  const apps = manager.factory.informer<AppService>({ type: APPSERVICES })
  const settings = manager.factory.informer<ConfigMap>({
    type: CORE_TYPES.configMaps,
    labelSelector: 'settings-of',
  })
  manager.add(
    new Controller({
      name: 'appservice-settings',
      for: { source: apps, kind: 'AppService', group: 'platform.example.com', namespaced: true },
      owns: [{ source: settings }],
      async reconcile({ namespace, name }) {
        const app = apps.store.get(`${namespace}/${name}`)
        if (!app) return
        const desired = withControllerReference(app, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${name}-settings`, namespace, labels: { 'settings-of': name } },
          data: { image: app.spec.image },
        })
        const current = settings.store.get(`${namespace}/${name}-settings`)
        await applyIfDrifted(
          env.client.resource(CORE_TYPES.configMaps, namespace),
          desired,
          current,
          'example',
        )
      },
    }),
  )
  controllerDone = manager.run(stopController.signal)
})

after(async () => {
  stopController.abort()
  await controllerDone?.catch(() => {})
  await env?.stop()
  await rm(crdDir, { recursive: true, force: true })
})

test('the CRDs from `edgeop crd` are installed and served before startTestEnvironment returns', () => {
  assert.deepEqual(env.crds.map((c) => c.metadata.name).sort(), [
    'appservices.platform.example.com',
    'nodeconfigreports.platform.example.com',
    'nodeconfigs.platform.example.com',
  ])
})

test('the controller writes a settings ConfigMap for an AppService and follows an image change', async () => {
  const ns = await env.createNamespace('appservice-settings')
  const apps = env.client.resource(APPSERVICES, ns)
  await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'web' },
    spec: { image: 'nginx:1.27' },
  })
  const cm = await waitFor<ConfigMap>(
    env.client,
    CORE_TYPES.configMaps,
    'web-settings',
    (c) => c.data?.image === 'nginx:1.27',
    {
      namespace: ns,
    },
  )
  assert.equal(cm.metadata.ownerReferences?.[0]?.name, 'web')

  await apps.patch('web', { spec: { image: 'nginx:1.28' } }, 'merge')
  await waitFor<ConfigMap>(
    env.client,
    CORE_TYPES.configMaps,
    'web-settings',
    (c) => c.data?.image === 'nginx:1.28',
    {
      namespace: ns,
    },
  )
})
