/**
 * The factory's multi-namespace informer on fake resource clients: one informer per
 * namespace, one event source, key lookups routed by namespace. (The AppService
 * integration tests run it against the real apiserver with a namespace list.)
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { InformerFactory } from '../../src/cache/factory.ts'
import { MultiNamespaceInformer } from '../../src/cache/multi-namespace-informer.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { ResourceClient } from '../../src/client/resource-client.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { FakeStream, list } from '../support/fake-lister-watcher.ts'

const cm = (namespace: string, name: string, rv = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name, resourceVersion: rv, uid: `${namespace}-${name}` },
})

/** Lists answer with one ConfigMap `a` per namespace (none when cluster-wide); each watch stream is kept by namespace. */
function fakeClient() {
  const streams = new Map<string, FakeStream>()
  const calls: (string | undefined)[] = []
  const client = {
    resource: (type: ResourceType, namespace?: string) =>
      ({
        type,
        namespace,
        list: async () => {
          calls.push(namespace)
          return namespace === undefined ? list('10') : list('10', cm(namespace, 'a'))
        },
        openWatch: async () => {
          const s = new FakeStream()
          streams.set(namespace ?? '', s)
          return s
        },
      }) as unknown as ResourceClient,
  } as unknown as KubeClient
  return { client, streams, calls }
}

function setup() {
  const fake = fakeClient()
  const factory = new InformerFactory(fake.client, { clock: new ManualClock(), streaming: 'off' })
  return { ...fake, factory }
}

test('one informer per namespace, shared with informer(); duplicates once; none given: one cluster-wide informer', () => {
  const { factory } = setup()
  const spec = { type: CORE_TYPES.configMaps, labelSelector: 'x=y' }
  const two = factory.multiNamespaceInformer(spec, ['a', 'b', 'a'])
  assert.deepEqual(two.namespaces, ['a', 'b'])
  assert.equal(two.informers.length, 2)
  assert.equal(two.informers[0], factory.informer({ ...spec, namespace: 'a' }))
  assert.equal(two.informers[1], factory.informer({ ...spec, namespace: 'b' }))
  assert.equal(two.informerFor('b'), two.informers[1])
  assert.equal(two.informerFor('c'), undefined)
  assert.equal(two.describe, `${two.informers[0]!.describe} + ${two.informers[1]!.describe}`)

  const all = factory.multiNamespaceInformer(spec, [])
  assert.deepEqual(all.informers, [factory.informer(spec)])
  assert.equal(all.informerFor('anything'), all.informers[0])
  assert.equal(factory.informers.length, 3)
})

test('refuses a cluster-scoped type with namespaces, and a namespace inside the spec', () => {
  const { factory } = setup()
  assert.throws(() => factory.multiNamespaceInformer({ type: CORE_TYPES.nodes }, ['a']), {
    code: 'EDGEOP_ERR_INVALID',
    message: 'nodes are cluster-scoped: they cannot be watched per namespace',
  })
  assert.throws(
    () => factory.multiNamespaceInformer({ type: CORE_TYPES.configMaps, namespace: 'a' }, ['b']),
    {
      code: 'EDGEOP_ERR_INVALID',
      message: 'configmaps: give the namespaces as a list, not in the spec',
    },
  )
  assert.doesNotThrow(() => factory.multiNamespaceInformer({ type: CORE_TYPES.nodes }, []))
  assert.equal(factory.informers.length, 1, 'a refused call creates no informer')
})

test('the constructor refuses informers that do not match the namespaces one to one', () => {
  const { factory } = setup()
  const one = factory.informer({ type: CORE_TYPES.configMaps, namespace: 'a' })
  assert.throws(() => new MultiNamespaceInformer(['a', 'b'], [one]), { code: 'EDGEOP_ERR_INVALID' })
})

test('a handler sees every namespace, syncs only with all of them, and the store routes keys by namespace', async () => {
  const { factory, streams } = setup()
  const joined = factory.multiNamespaceInformer({ type: CORE_TYPES.configMaps }, ['a', 'b'])
  const seen: string[] = []
  let wake: (() => void) | undefined
  const reg = joined.addEventHandler({
    onAdd: (o) => {
      seen.push(`add ${o.metadata.namespace}/${o.metadata.name}`)
      wake?.()
    },
  })
  const until = async (n: number) => {
    while (seen.length < n) await new Promise<void>((r) => (wake = r))
  }
  assert.equal(reg.hasSynced(), false)
  const ac = new AbortController()
  factory.start(ac.signal)
  await factory.whenSynced()
  await until(2)
  assert.deepEqual(seen.sort(), ['add a/a', 'add b/a'])
  while (!reg.hasSynced()) await new Promise((r) => setImmediate(r))
  assert.equal(joined.hasSynced(), true)

  while (streams.size < 2) await new Promise((r) => setImmediate(r))
  streams.get('b')!.push({ type: 'ADDED', object: cm('b', 'c', '11') })
  await until(3)
  assert.equal(seen[2], 'add b/c')

  assert.equal(joined.store.get('b/c')?.metadata.uid, 'b-c')
  assert.equal(joined.store.get('a/c'), undefined, 'looked up in namespace a only')
  assert.equal(joined.store.get('z/a'), undefined, 'an unwatched namespace')
  assert.equal(joined.store.get('a'), undefined, 'a cluster-scoped key')
  assert.equal(joined.store.size, 3)
  assert.deepEqual(joined.store.keys().sort(), ['a/a', 'b/a', 'b/c'])
  assert.deepEqual(
    joined.store
      .list()
      .map((o) => o.metadata.uid)
      .sort(),
    ['a-a', 'b-a', 'b-c'],
  )

  reg.remove()
  streams.get('a')!.push({ type: 'ADDED', object: cm('a', 'd', '12') })
  while (!joined.store.get('a/d')) await new Promise((r) => setImmediate(r))
  assert.equal(reg.pending, 0)
  assert.equal(seen.length, 3, 'a removed registration sees nothing more')
  ac.abort()
  await factory.stopped()
})
