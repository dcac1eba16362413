/**
 * The AppService CRD's two versions on the real apiserver, which calls the conversion webhook over TLS:
 * a WebhookServer on 127.0.0.1 serving `appServiceWebhooks()`' `/convert`, with a certificate from the
 * WebhookCertController's own CA, which also patches the `caBundle` into the CRD (`clientConfig.url`).
 * The CRD is appServiceCrd()'s under a group of this file's own, so the shared one and the other files
 * never see it.
 *
 * Shows: one object served as v1alpha1 and as v1beta1 (created in either), a v1beta1 update keeping what
 * only v1alpha1 can say, and the storage switch to v1beta1 followed by `migrateStorage`, interrupted
 * after its first page and rerun: `storedVersions` is then `['v1beta1']`, and with the webhook down
 * every object still reads as v1beta1 (so each is stored as v1beta1) while v1alpha1 reads fail.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { migrateStorage } from '../../src/objects/storage-migration.ts'
import { appServiceCrd } from '../../src/operators/appservice/api.ts'
import { V1ALPHA1_FIELDS_ANNOTATION } from '../../src/operators/appservice/convert.ts'
import { CONVERT_PATH } from '../../src/operators/appservice/deployment-names.ts'
import { appServiceWebhooks } from '../../src/operators/appservice/webhooks.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePort } from '../../src/testing/ports.ts'
import { WebhookCertController } from '../../src/webhook/cert-controller.ts'
import { WebhookServer } from '../../src/webhook/webhook-server.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
const GROUP = `c${process.pid}-${Date.now() % 100_000}.convert.test.edgeop.io`
const CRD = `appservices.${GROUP}`
const server = new WebhookServer()
const abort = new AbortController()
let admin: KubeClient
let ns: string

const type = (version: string): ResourceType => ({
  group: GROUP,
  version,
  resource: 'appservices',
  namespaced: true,
  kind: 'AppService',
})
const apps = (version: string) => admin.resource<KubeObject>(type(version), ns)
const crds = () => admin.resource(CORE_TYPES.customResourceDefinitions)
type Spec = { image: string; replicas?: number; database?: Record<string, unknown> }
const spec = (o: KubeObject) => o.spec as Spec

/** appServiceCrd() in this file's group, calling `url`. */
function crd(url: string, storage: 'v1alpha1' | 'v1beta1' = 'v1alpha1') {
  const c = appServiceCrd({ storage, conversion: { url } }) as unknown as KubeObject & {
    spec: { group: string; versions: unknown }
  }
  c.metadata.name = CRD
  c.spec.group = GROUP
  return c
}

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  ns = await env().createNamespace('convert')
  appServiceWebhooks().register(server, undefined)
  const port = await freePort()
  await crds().create(crd(`https://127.0.0.1:${port}${CONVERT_PATH}`) as never)
  defer(() => crds().delete(CRD))
  const certs = new WebhookCertController({
    client: admin,
    namespace: ns,
    secretName: 'convert-cert',
    hosts: ['127.0.0.1'],
    crds: [CRD],
    onCertificate: (pair) => server.setCertificate(pair),
  })
  await server.start(`127.0.0.1:${port}`, await certs.sync())
  defer(
    () => server.close(),
    () => abort.abort(),
  )
  void certs.run(abort.signal)
  // A v1beta1 write is stored as v1alpha1: served and converting once the apiserver has the CRD with its caBundle.
  await eventually(
    async () => {
      await apps('v1beta1').create(
        {
          apiVersion: `${GROUP}/v1beta1`,
          kind: 'AppService',
          metadata: { name: 'warm-up' },
          spec: { image: 'nginx:1.27' },
        },
        { dryRun: true },
      )
      return true
    },
    { timeoutMs: 30_000, what: 'conversion webhook reachable with the managed CA' },
  )
})

const create = (version: string, name: string, database?: Record<string, unknown>) =>
  apps(version).create({
    apiVersion: `${GROUP}/${version}`,
    kind: 'AppService',
    metadata: { name },
    spec: { image: 'nginx:1.27', ...(database ? { database } : {}) },
  })

test('the certificate controller patched the caBundle into the CRD', async () => {
  const c = (await crds().get(CRD)) as KubeObject & {
    spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } }
  }
  assert.ok(c.spec.conversion.webhook.clientConfig.caBundle)
})

test('one object, two views: created as v1alpha1 it reads as v1beta1 and back, and the other way round', async () => {
  const a = await create('v1alpha1', 'from-alpha', { enabled: true, class: 'mysql-medium' })
  const asBeta = await apps('v1beta1').get('from-alpha')
  assert.equal(asBeta.apiVersion, `${GROUP}/v1beta1`)
  assert.deepEqual(spec(asBeta), {
    image: 'nginx:1.27',
    replicas: 1,
    port: 8080,
    database: { engine: 'mysql', size: 'medium' },
  })
  assert.equal(asBeta.metadata.uid, a.metadata.uid)
  assert.equal(asBeta.metadata.annotations, undefined)
  assert.deepEqual(await apps('v1alpha1').get('from-alpha'), a)

  const b = await create('v1beta1', 'from-beta', { engine: 'postgres', size: 'large' })
  const asAlpha = await apps('v1alpha1').get('from-beta')
  assert.deepEqual(spec(asAlpha).database, { enabled: true, class: 'postgres-large' })
  assert.deepEqual(await apps('v1beta1').get('from-beta'), b)
  // Lists convert every item.
  const listed = await apps('v1beta1').list()
  assert.ok(listed.items.every((o) => o.apiVersion === `${GROUP}/v1beta1`))
})

test('what v1beta1 cannot say survives a v1beta1 update in the annotation; the v1alpha1 view never shows it', async () => {
  await create('v1alpha1', 'fast', { enabled: true, class: 'fast' })
  await create('v1alpha1', 'off', { enabled: false, class: 'kept' })
  for (const [name, db] of [
    ['fast', { enabled: true, class: 'fast' }],
    ['off', { enabled: false, class: 'kept' }],
  ] as const) {
    const beta = await apps('v1beta1').get(name)
    assert.ok(beta.metadata.annotations?.[V1ALPHA1_FIELDS_ANNOTATION], name)
    ;(beta.spec as Spec).replicas = 3
    await apps('v1beta1').update(beta) // a client of v1beta1 writes it back
    const alpha = await apps('v1alpha1').get(name)
    assert.deepEqual(spec(alpha), { image: 'nginx:1.27', replicas: 3, port: 8080, database: db })
    assert.equal(alpha.metadata.annotations, undefined)
  }
})

test('storage switched to v1beta1, migration interrupted after its first page and rerun: storedVersions is v1beta1 alone and every object is stored as v1beta1', async () => {
  for (let i = 0; i < 5; i++)
    await create('v1alpha1', `old-${i}`, { enabled: i % 2 === 0, class: 'postgres-small' })
  const url = (await crds().get(CRD)).spec.conversion?.webhook?.clientConfig?.url
  // A merge patch replaces the versions list: the same versions, v1beta1 now stored.
  await crds().patch(CRD, {
    spec: { versions: crd(String(url), 'v1beta1').spec.versions },
  })
  const stored = async () => ((await crds().get(CRD)).status as { storedVersions: string[] }).storedVersions
  assert.deepEqual((await stored()).sort(), ['v1alpha1', 'v1beta1'])
  const total = (await apps('v1beta1').list()).items.length
  assert.ok(total >= 9, String(total))

  const stop = new AbortController()
  const pages: (string | undefined)[] = []
  await assert.rejects(
    migrateStorage({
      client: admin,
      crd: CRD,
      chunkSize: 2,
      signal: stop.signal,
      onPage: (p) => {
        pages.push(p.continue)
        stop.abort(new Error('interrupted'))
      },
    }),
    /interrupted/,
  )
  assert.equal(pages.length, 1)
  assert.deepEqual((await stored()).sort(), ['v1alpha1', 'v1beta1'], 'untrimmed after an interrupted run')

  const done = await migrateStorage({ client: admin, crd: CRD, chunkSize: 2 })
  assert.equal(done.storageVersion, 'v1beta1')
  // The first run rewrote its page; the rerun lists from the start: those two are no-op updates now.
  assert.equal(done.rewritten + done.unchanged, total)
  assert.equal(done.unchanged, 2)
  assert.deepEqual(await stored(), ['v1beta1'])
  // A third run has nothing to do.
  assert.deepEqual(await migrateStorage({ client: admin, crd: CRD }), {
    storageVersion: 'v1beta1',
    rewritten: 0,
    unchanged: 0,
    storedVersions: ['v1beta1'],
  })

  // The webhook down: reads in the storage version need no conversion, so every object reads as
  // v1beta1 only if it is stored as v1beta1; a v1alpha1 read needs the webhook and fails.
  await server.close()
  const beta = await apps('v1beta1').list()
  assert.equal(beta.items.length, total)
  assert.deepEqual(spec(beta.items.find((o) => o.metadata.name === 'old-0')!).database, {
    engine: 'postgres',
    size: 'small',
  })
  await assert.rejects(apps('v1alpha1').get('old-0'), /conversion webhook/)
})
