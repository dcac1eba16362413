/**
 * List/watch and the informer against the real apiserver, through the fault proxy.
 * Assertions about "no relist" read the proxy's request log.
 */
import assert from 'node:assert/strict'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { FaultProxy, RequestRecord } from '../controlplane/fault-proxy.ts'
import { serverState, watchInformer } from '../support/informers.ts'
import { adminClient } from '../support/kube.ts'
import { configMaps, eachStore, LIVE_STORE_MODES } from '../support/stores.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

async function viaProxy(
  apiserver: 'cached' | 'uncached' = 'cached',
): Promise<{ proxy: FaultProxy; client: KubeClient; direct: KubeClient }> {
  const proxy = await env().startFaultProxy({ apiserver })
  const client = adminClient(env(), proxy.url)
  const direct = adminClient(env(), await env().serverOf(apiserver))
  defer(
    () => proxy.close(),
    () => client.close(),
    () => direct.close(),
  )
  return { proxy, client, direct }
}
const cms = (r: RequestRecord) => r.path.endsWith('/configmaps')
const isList = (r: RequestRecord) => cms(r) && !r.watch
const isStream = (r: RequestRecord) => cms(r) && r.watch && r.params.get('sendInitialEvents') === 'true'

eachStore(
  'streaming list syncs with one watch request and no LIST',
  async () => {
    const ns = await env().createNamespace('stream')
    const { proxy, client, direct } = await viaProxy()
    for (const n of ['a', 'b', 'c']) await direct.resource(configMaps(), ns).create({ metadata: { name: n } })
    const w = watchInformer(client, configMaps(), ns)
    defer(() => w.stop())
    await w.informer.waitForSync()
    assert.deepEqual(w.informer.store.keys().sort(), [`${ns}/a`, `${ns}/b`, `${ns}/c`])
    assert.equal(proxy.requests(isList).length, 0)
    assert.equal(proxy.requests(isStream).length, 1)
  },
  LIVE_STORE_MODES,
)

eachStore(
  'a server that refuses the streaming list gets a paginated list instead, then a plain watch',
  async () => {
    const ns = await env().createNamespace('fallback')
    const { proxy, client, direct } = await viaProxy()
    await direct.resource(configMaps(), ns).create({ metadata: { name: 'a' } })
    proxy.addFault({
      watch: true,
      times: 1,
      action: { type: 'status', status: 400, message: 'sendInitialEvents is not supported' },
    })
    const w = watchInformer(client, configMaps(), ns)
    defer(() => w.stop())
    await w.informer.waitForSync()
    assert.deepEqual(w.informer.store.keys(), [`${ns}/a`])
    const seq = () => proxy.requests(cms).map((r) => (r.watch ? (isStream(r) ? 'stream' : 'watch') : 'list'))
    await eventually(() => seq().length >= 3, { timeoutMs: 10_000, what: 'the watch after the list' })
    assert.deepEqual(seq().slice(0, 3), ['stream', 'list', 'watch'])
  },
  LIVE_STORE_MODES,
)

eachStore(
  '(1) connections dropped mid-stream: the watch resumes from the last RV, no relist, no event lost',
  async () => {
    const ns = await env().createNamespace('drop')
    const { proxy, client, direct } = await viaProxy()
    const api = direct.resource(configMaps(), ns)
    const w = watchInformer(client, configMaps(), ns)
    defer(() => w.stop())
    await w.informer.waitForSync()
    for (let round = 0; round < 3; round++) {
      const created = await api.create({ metadata: { name: `before-${round}` } })
      await eventually(() => w.seen.has(`${ns}/before-${round}`), {
        timeoutMs: 10_000,
        what: 'event before the drop',
      })
      const rvBefore = w.informer.watcher.health().resourceVersion
      assert.ok(Number(rvBefore) >= Number(created.metadata.resourceVersion))
      proxy.dropAll()
      await api.create({ metadata: { name: `during-${round}` } })
      await eventually(() => w.seen.has(`${ns}/during-${round}`), {
        timeoutMs: 15_000,
        what: 'event written while disconnected',
      })
      const resumed = proxy.requests(
        (r) => cms(r) && r.watch && r.params.get('resourceVersion') === rvBefore && !isStream(r),
      )
      assert.ok(resumed.length >= 1, `a watch resumed from ${rvBefore}`)
    }
    assert.equal(proxy.requests(isList).length, 0, 'never relisted')
    assert.equal(proxy.requests(isStream).length, 1, 'never re-streamed')
  },
  LIVE_STORE_MODES,
)

eachStore(
  '(3) a 429 storm with Retry-After: the watcher waits as told and stays bounded',
  async () => {
    const ns = await env().createNamespace('storm')
    const { proxy, client, direct } = await viaProxy()
    const w = watchInformer(client, configMaps(), ns, {}, {})
    defer(() => w.stop())
    await w.informer.waitForSync()
    const storm = proxy.addFault({
      watch: true,
      action: { type: 'status', status: 429, retryAfterSeconds: 1 },
    })
    const started = Date.now()
    proxy.dropAll()
    await new Promise((r) => setTimeout(r, 6000))
    storm.clear()
    const tries = proxy.requests((r) => r.fault === 'status' && r.startedAt >= started)
    // Retry-After 1 s: never more than one attempt per second (plus one), however the retries are split
    // between the transport and the watcher's backoff.
    assert.ok(tries.length >= 3 && tries.length <= 8, `${tries.length} throttled attempts in 6 s`)
    for (let i = 1; i < tries.length; i++) {
      const gap = tries[i]!.startedAt - tries[i - 1]!.startedAt
      assert.ok(gap >= 950, `attempts ${gap} ms apart`)
    }
    await direct.resource(configMaps(), ns).create({ metadata: { name: 'after-storm' } })
    await eventually(() => w.seen.has(`${ns}/after-storm`), {
      timeoutMs: 40_000,
      what: 'recovered after the storm',
    })
    assert.equal(proxy.requests(isList).length, 0, 'a throttled watch is re-opened, not relisted')
  },
  LIVE_STORE_MODES,
)

eachStore(
  '(4) a stalled connection is detected within the watch timeout + margin and the watch resumed',
  async () => {
    const ns = await env().createNamespace('stall')
    const { proxy, client, direct } = await viaProxy()
    const w = watchInformer(client, configMaps(), ns, {
      minWatchTimeoutSeconds: 2,
      maxWatchTimeoutSeconds: 2,
      idleMarginMs: 1000,
    })
    defer(() => w.stop())
    await w.informer.waitForSync()
    proxy.addFault({ watch: true, times: 1, action: { type: 'stall' } })
    proxy.dropAll()
    const stalledAt = Date.now()
    await eventually(() => proxy.requests((r) => r.fault === 'stall').length === 1, {
      timeoutMs: 5000,
      what: 'the stalled watch',
    })
    await direct.resource(configMaps(), ns).create({ metadata: { name: 'after-stall' } })
    await eventually(() => w.seen.has(`${ns}/after-stall`), {
      timeoutMs: 20_000,
      what: 'event after the stall',
    })
    // Bound: idle timeout (2 s + 1 s) + at most one backoff step (< 1.6 s) + request time.
    assert.ok(Date.now() - stalledAt < 10_000, `recovered in ${Date.now() - stalledAt} ms`)
  },
  LIVE_STORE_MODES,
)

eachStore(
  '(6) 5,000 objects listed with page size 100 sync completely and exactly',
  async () => {
    const ns = await env().createNamespace('pages')
    const { proxy, client, direct } = await viaProxy('uncached')
    const api = direct.resource(configMaps(), ns)
    const names = Array.from({ length: 5000 }, (_, i) => `cm-${i}`)
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => api.create({ metadata: { name } })))
    }
    const w = watchInformer(client, configMaps(), ns, { streaming: 'off', pageSize: 100 })
    defer(() => w.stop())
    assert.equal(await w.informer.waitForSync(AbortSignal.timeout(60_000)), true)
    assert.equal(w.informer.store.size, 5000)
    const pages = proxy.requests(isList)
    assert.equal(pages.length, 50)
    assert.ok(pages.every((p) => p.params.get('limit') === '100'))
    assert.deepEqual(
      new Map([...w.seen].sort()),
      new Map([...(await serverState(direct, configMaps(), ns))].sort()),
    )
  },
  LIVE_STORE_MODES,
)
