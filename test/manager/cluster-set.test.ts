/**
 * The member cluster set with fake clients: the pure diff, engaging and disengaging at runtime, the
 * callbacks' lifetimes, a client that cannot be built, and not-synced members in health and metrics.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeList } from '../../src/core/types.ts'
import { type Cluster, ClusterSet, clusterChanges } from '../../src/manager/cluster-set.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { FakeStream, list } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'

test('clusterChanges: removed and changed members stop, new and changed ones start', () => {
  const engaged = new Map([
    ['a', 'a.kubeconfig'],
    ['b', 'b.kubeconfig'],
    ['c', 'c.kubeconfig'],
  ])
  assert.deepEqual(
    clusterChanges(engaged, { a: 'a.kubeconfig', b: 'b.kubeconfig:other', d: 'd.kubeconfig' }),
    {
      stop: ['b', 'c'],
      start: ['b', 'd'],
    },
  )
  assert.deepEqual(clusterChanges(engaged, {}), { stop: ['a', 'b', 'c'], start: [] })
  assert.deepEqual(clusterChanges(new Map(), { constructor: 'x' }), { stop: [], start: ['constructor'] })
})

/** A client whose lists answer at once (`up`) or never (down), and that records being closed. */
function fakeClient(up: boolean, closed: string[], name: string): KubeClient {
  return {
    resource: (type: unknown, namespace?: string) => ({
      type,
      namespace,
      list: ({ signal }: { signal: AbortSignal }): Promise<KubeList> =>
        up
          ? Promise.resolve(list('1'))
          : new Promise((_, reject) =>
              signal.addEventListener('abort', () =>
                reject(new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted')),
              ),
            ),
      openWatch: async ({ signal }: { signal: AbortSignal }) => {
        const s = new FakeStream()
        signal.addEventListener('abort', () => s.close())
        return s
      },
    }),
    close: async () => void closed.push(name),
  } as unknown as KubeClient
}

function setup() {
  const closed: string[] = []
  const connects: string[] = []
  const set = new ClusterSet({
    logger: noopLogger,
    clock: new ManualClock(),
    connect: (name, ref) => {
      connects.push(`${name}=${ref}`)
      if (ref === 'broken') throw new EdgeopError('EDGEOP_ERR_CONFIG', 'no such file')
      return fakeClient(ref !== 'down', closed, `${name}=${ref}`)
    },
  })
  const engaged: string[] = []
  const left: string[] = []
  const watch = (c: Cluster, signal: AbortSignal) => {
    engaged.push(c.name)
    c.factory.informer({ type: CORE_TYPES.configMaps }, { streaming: 'off' })
    signal.addEventListener('abort', () => left.push(c.name))
  }
  return { set, closed, connects, engaged, left, watch }
}

test('members engage and leave as the list changes; every callback sees every member for its lifetime', async () => {
  const t = setup()
  await t.set.update({ a: 'up', b: 'up' })
  t.set.onEngage(t.watch) // registered late: told of the members engaged before
  assert.deepEqual(t.engaged, ['a', 'b'])
  await t.set.update({ a: 'up', b: 'up:other', c: 'up' })
  assert.deepEqual(t.engaged, ['a', 'b', 'b', 'c'], 'a changed reference engages the member again')
  assert.deepEqual(t.left, ['b'])
  assert.deepEqual(t.closed, ['b=up'], 'the old client of b is closed once its informers stopped')
  await t.set.update({})
  assert.deepEqual(t.left, ['b', 'a', 'b', 'c'])
  assert.deepEqual(t.closed, ['b=up', 'a=up', 'b=up:other', 'c=up'])
})

test('a member whose client cannot be built is skipped and tried again at the next update', async () => {
  const t = setup()
  t.set.onEngage(t.watch)
  await t.set.update({ a: 'broken', b: 'up' })
  assert.deepEqual(t.engaged, ['b'])
  await t.set.update({ a: 'broken', b: 'up' })
  assert.deepEqual(t.connects, ['a=broken', 'b=up', 'a=broken'])
  await t.set.update({})
})

test('a member that never syncs is reported not synced in the check and the metric; readiness still passes', async () => {
  const t = setup()
  t.set.onEngage(t.watch)
  const registry = new MetricsRegistry()
  t.set.metrics(registry)
  await t.set.update({ up: 'up', down: 'down' })
  await until(() => t.set.status().get('up') === undefined)
  assert.match(t.set.status().get('down') ?? '', /configmaps.*not synced/)
  assert.match(t.set.check() ?? '', /^not synced: down \(/)
  const text = registry.render()
  assert.match(text, /edgeop_cluster_synced\{cluster="up"\} 1/)
  assert.match(text, /edgeop_cluster_synced\{cluster="down"\} 0/)
  await t.set.update({ up: 'up' })
  assert.equal(t.set.check(), undefined)
  assert.doesNotMatch(registry.render(), /cluster="down"/, 'a member that left is no longer reported')
  await t.set.update({})
})
