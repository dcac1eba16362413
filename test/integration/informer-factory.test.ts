/**
 * The informer factory and metadata-only informers on the real apiserver.
 */
import assert from 'node:assert/strict'
import { InformerFactory } from '../../src/cache/factory.ts'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { adminClient } from '../support/kube.ts'
import { configMaps, eachStore, LIVE_STORE_MODES, storeOptions } from '../support/stores.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

eachStore(
  'the factory dedupes by resource, scope and selectors, and syncs them together',
  async () => {
    const client = adminClient(env(), env().server)
    defer(() => client.close())
    const ns = await env().createNamespace('factory')
    await client
      .resource(configMaps(), ns)
      .create({ metadata: { name: 'x', labels: { app: 'a' } }, data: { big: 'y'.repeat(500) } })
    const factory = new InformerFactory(client, storeOptions())
    const a = factory.informer({ type: configMaps(), namespace: ns })
    const b = factory.informer({ type: configMaps(), namespace: ns })
    const c = factory.informer({ type: configMaps(), namespace: ns, labelSelector: 'app=a' })
    const meta = factory.informer({ type: configMaps(), namespace: ns, metadataOnly: true })
    assert.equal(a, b)
    assert.notEqual(a, c)
    assert.equal(factory.informers.length, 3)
    const ac = new AbortController()
    factory.start(ac.signal)
    await factory.waitForSync(30_000)
    assert.equal(c.store.size, 1)
    const m = meta.store.get(`${ns}/x`)!
    assert.equal(m.kind, 'PartialObjectMetadata', 'metadata-only informer caches PartialObjectMetadata')
    assert.equal((m as Record<string, unknown>).data, undefined)
    assert.deepEqual(m.metadata.labels, { app: 'a' })
    ac.abort()
    await factory.stopped()
  },
  LIVE_STORE_MODES,
)

eachStore(
  'a cache that cannot sync fails waitForSync with an error naming it and its last error',
  async () => {
    const user = await env().userKubeconfig('no-rights')
    const client = new KubeClient(
      {
        server: env().server,
        tls: { ca: env().caPem, cert: user.certPem, key: user.keyPem, insecureSkipVerify: false },
        namespace: 'default',
        source: 'test user without rights',
      },
      { qps: -1 },
    )
    defer(() => client.close())
    const factory = new InformerFactory(client, storeOptions())
    factory.informer({ type: CORE_TYPES.secrets, namespace: 'kube-system' })
    const ac = new AbortController()
    factory.start(ac.signal)
    await assert.rejects(factory.waitForSync(3000), (err: Error & { code: string }) => {
      assert.equal(err.code, 'EDGEOP_ERR_SYNC')
      assert.match(
        err.message,
        /caches did not sync within 3000 ms: secrets in kube-system \(last error: .*403 Forbidden/,
      )
      return true
    })
    ac.abort()
    await factory.stopped()
  },
  LIVE_STORE_MODES,
)
