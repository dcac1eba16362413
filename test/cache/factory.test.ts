/**
 * The informer factory's sync wait on a ManualClock and fake resource clients (the real
 * apiserver version is test/integration/informer-factory.test.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CompactIndexer } from '../../src/cache/compact-indexer.ts'
import { InformerFactory } from '../../src/cache/factory.ts'
import type { IndexFunc } from '../../src/cache/store.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { PROTOBUF_PODS } from '../../src/client/protobuf-types.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { EdgeopError } from '../../src/core/errors.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { FakeStream, list } from '../support/fake-lister-watcher.ts'

/**
 * A client whose namespace decides how lists answer (with `items`): `ready` at once, `gated` once
 * `open()` is called, anything else never. Watches open and stay silent.
 */
function fakeClient(items: KubeObject[] = []) {
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  const never = (signal: AbortSignal) =>
    new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))
  const client = {
    resource: (type: ResourceType, namespace?: string) =>
      ({
        type,
        namespace,
        list: async ({ signal }: { signal: AbortSignal }) => {
          if (namespace === 'gated') await gate
          else if (namespace !== 'ready') await never(signal)
          return list('10', ...items)
        },
        openWatch: async () => new FakeStream(),
      }) as unknown as ResourceClient,
  } as unknown as KubeClient
  return { client, open }
}

function setup(namespaces: string[]) {
  const { client, open } = fakeClient()
  const clock = new ManualClock()
  const factory = new InformerFactory(client, { clock, streaming: 'off' })
  for (const namespace of namespaces) factory.informer({ type: CORE_TYPES.configMaps, namespace })
  const ac = new AbortController()
  factory.start(ac.signal)
  return {
    factory,
    clock,
    open,
    async stop() {
      ac.abort()
      await factory.stopped()
    },
  }
}

/** Tracks whether `p` has settled yet. */
function watch(p: Promise<unknown>): { settled: () => boolean } {
  let settled = false
  p.then(
    () => (settled = true),
    () => (settled = true),
  )
  return { settled: () => settled }
}

test('whenSynced resolves once every informer has synced, not before', async () => {
  const t = setup(['ready', 'gated'])
  const synced = t.factory.whenSynced()
  const w = watch(synced)
  await t.clock.advance(0)
  assert.equal(w.settled(), false, 'the gated informer has not listed yet')
  t.open()
  await synced
  assert.ok(t.factory.informers.every((i) => i.hasSynced()))
  await t.stop()
})

test('whenSynced times out on the injected clock, naming only the informers that did not sync', async () => {
  const t = setup(['ready', 'stuck'])
  const synced = t.factory.whenSynced(undefined, 5000)
  const w = watch(synced)
  await t.clock.advance(4999)
  assert.equal(w.settled(), false)
  await t.clock.advance(1)
  assert.equal(w.settled(), true, 'the deadline runs on the factory clock')
  await assert.rejects(synced, (err: EdgeopError) => {
    assert.equal(err.code, 'EDGEOP_ERR_SYNC')
    assert.equal(err.retryable, true)
    assert.equal(err.message, 'caches did not sync within 5000 ms: configmaps in stuck')
    return true
  })
  await t.stop()
})

test('whenSynced rejects with EDGEOP_ERR_ABORTED on abort; waitForSync keeps reporting EDGEOP_ERR_SYNC', async () => {
  const t = setup(['stuck'])
  const ac = new AbortController()
  const synced = t.factory.whenSynced(ac.signal)
  const legacy = t.factory.waitForSync(60_000, ac.signal)
  ac.abort()
  await assert.rejects(synced, { code: 'EDGEOP_ERR_ABORTED' })
  await assert.rejects(legacy, {
    code: 'EDGEOP_ERR_SYNC',
    message: 'caches did not sync within 60000 ms: configmaps in stuck',
  })
  await t.stop()
})

test('whenSynced with nothing left to wait for resolves at once, even with an aborted signal', async () => {
  const t = setup(['ready'])
  await t.factory.whenSynced()
  const ac = new AbortController()
  ac.abort()
  await t.factory.whenSynced(ac.signal)
  await t.stop()
})

test('F8: a second informer() call for the same spec adds its indexers to the shared informer; one name, two functions is refused', async () => {
  const label =
    (key: string): IndexFunc =>
    (o) => [o.metadata?.labels?.[key] ?? '']
  const byApp = label('app')
  const byTier = label('tier')
  const web = {
    metadata: { namespace: 'ready', name: 'a', resourceVersion: '1', labels: { app: 'shop', tier: 'web' } },
  }
  const factory = new InformerFactory(fakeClient([web]).client, {
    clock: new ManualClock(),
    streaming: 'off',
  })
  const spec = { type: CORE_TYPES.configMaps, namespace: 'ready' }
  const first = factory.informer(spec, { indexers: { byApp } })
  const ac = new AbortController()
  factory.start(ac.signal)
  await factory.whenSynced()
  // A second controller asks for the same informer with its own index (and the first one's, the same function).
  const second = factory.informer(spec, { indexers: { byApp, byTier } })
  assert.equal(second, first, 'one shared informer')
  assert.deepEqual(second.store.indexKeys('byTier', 'web'), ['ready/a'], 'objects already cached are indexed')
  assert.deepEqual(second.store.indexKeys('byApp', 'shop'), ['ready/a'])
  assert.throws(
    () => factory.informer(spec, { indexers: { byOwner: label('owner'), byApp: label('app') } }),
    (err: EdgeopError) => {
      assert.equal(err.code, 'EDGEOP_ERR_INVALID')
      assert.equal(
        err.message,
        'configmaps in ready: index "byApp" has another function: share one or rename it',
      )
      return true
    },
  )
  assert.throws(
    () => first.store.indexValues('byOwner'),
    /does not exist/,
    'a refused call adds none of its indexers',
  )
  ac.abort()
  await factory.stopped()
})

/** Which store the factory gave `options`' informer of `type`, created with the factory's own defaults. */
function storeOf(type: ResourceType, spec: { metadataOnly?: boolean } = {}, options = {}): string {
  const factory = new InformerFactory(fakeClient().client, { clock: new ManualClock(), streaming: 'off' })
  const inf = factory.informer({ type, namespace: 'ready', ...spec }, options)
  return inf.store instanceof CompactIndexer ? 'compact' : 'eager'
}

const APPS: ResourceType = {
  group: 'platform.example.com',
  version: 'v1alpha1',
  resource: 'appservices',
  kind: 'AppService',
  namespaced: true,
}

test('a metadata-only informer keeps the eager store, with or without the protobuf kind (the compact one measured larger for PartialObjectMetadata)', () => {
  assert.equal(storeOf(PROTOBUF_PODS, { metadataOnly: true }), 'eager')
  assert.equal(storeOf(CORE_TYPES.pods, { metadataOnly: true }), 'eager')
  assert.equal(
    storeOf(PROTOBUF_PODS, { metadataOnly: true }, { store: 'compact' }),
    'compact',
    'an option wins',
  )
})

test('a full-object informer of a custom resource (JSON) gets the compact store, as one of a protobuf type does', () => {
  assert.equal(storeOf(APPS), 'compact')
  assert.equal(storeOf(PROTOBUF_PODS), 'compact')
  assert.equal(storeOf(APPS, {}, { store: 'eager' }), 'eager', 'an option wins')
})
