/**
 * Disruptions that affect the whole control plane (exclusive lease): etcd compaction
 * while an informer is disconnected, and an apiserver restart.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { serverState, watchInformer } from '../support/informers.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv({ exclusive: true })

test('(2) etcd compacted while disconnected: the watch gets 410, the informer relists, gap changes and deletions arrive', async () => {
  const proxy = await env().startFaultProxy({ apiserver: 'uncached' })
  const client = adminClient(env(), proxy.url)
  const direct = adminClient(env(), await env().serverOf('uncached'))
  defer(
    () => proxy.close(),
    () => client.close(),
    () => direct.close(),
  )
  const ns = await env().createNamespace('compact')
  const api = direct.resource(CORE_TYPES.configMaps, ns)
  for (const n of ['keep', 'change', 'remove']) await api.create({ metadata: { name: n }, data: { v: '1' } })
  const w = watchInformer(client, CORE_TYPES.configMaps, ns, { streaming: 'off' })
  defer(() => w.stop())
  await w.informer.waitForSync()

  // Disconnect: every watch attempt is throttled (no relist), while the gap's writes and compaction happen.
  const block = proxy.addFault({ watch: true, action: { type: 'status', status: 429, retryAfterSeconds: 0 } })
  proxy.dropAll()
  await eventually(() => block.hits > 0, { timeoutMs: 10_000, what: 'the informer is disconnected' })
  // Read the resume point only now: bookmarks keep moving it while the watch is open.
  const rvBefore = w.informer.watcher.health().resourceVersion
  await api.patch('change', { data: { v: '2' } })
  await api.delete('remove')
  await api.create({ metadata: { name: 'added' } })
  await api.create({ metadata: { name: 'flash' } })
  await api.delete('flash')
  await env().compact()
  const listsBefore = proxy.requests((r) => r.path.endsWith('/configmaps') && !r.watch).length
  block.clear()

  const expected = await serverState(direct, CORE_TYPES.configMaps, ns)
  await eventually(() => JSON.stringify([...w.seen].sort()) === JSON.stringify([...expected].sort()), {
    timeoutMs: 30_000,
    what: 'cache converges',
  })
  const expired = proxy.requests(
    (r) => r.watch && r.params.get('resourceVersion') === rvBefore && r.status === 200,
  )
  assert.ok(expired.length >= 1, 'the resumed watch reached the server with the old RV')
  const lists = proxy.requests((r) => r.path.endsWith('/configmaps') && !r.watch)
  assert.ok(lists.length > listsBefore, 'a relist followed the 410')
  assert.deepEqual(
    lists.at(-1)?.params.get('resourceVersion'),
    rvBefore,
    'relist "not older than" the last RV (kubernetes/kubernetes#83520)',
  )
  assert.ok(w.deletes.includes(`${ns}/remove`), 'the deletion during the gap was delivered')
  assert.ok(!w.informer.store.get(`${ns}/flash`), 'created and deleted during the gap: absent')
  assert.deepEqual(w.informer.store.get(`${ns}/change`)?.data, { v: '2' })
})

test('(5) apiserver restart: the informer recovers and misses nothing', async () => {
  const client = adminClient(env(), env().server)
  defer(() => client.close())
  const ns = await env().createNamespace('restart')
  const api = client.resource(CORE_TYPES.configMaps, ns)
  for (let i = 0; i < 5; i++) await api.create({ metadata: { name: `pre-${i}` } })
  const w = watchInformer(client, CORE_TYPES.configMaps, ns)
  defer(() => w.stop())
  await w.informer.waitForSync()
  await api.delete('pre-0')
  await env().restartApiserver('cached')
  await api.delete('pre-1')
  for (let i = 0; i < 5; i++) await api.create({ metadata: { name: `post-${i}` } })
  const expected = await serverState(client, CORE_TYPES.configMaps, ns)
  await eventually(() => JSON.stringify([...w.seen].sort()) === JSON.stringify([...expected].sort()), {
    timeoutMs: 60_000,
    what: 'cache converges after restart',
  })
  assert.ok(w.deletes.includes(`${ns}/pre-0`) && w.deletes.includes(`${ns}/pre-1`))
  assert.equal(w.informer.health().synced, true)
})
