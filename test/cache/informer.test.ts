/**
 * The shared informer on a scripted ListerWatcher. Regression tests carry the number
 * of the upstream bug whose rule they guard (controller-semantics §8).
 */
import assert from 'node:assert/strict'
import { SharedInformer } from '../../src/cache/informer.ts'
import type { EventHandler } from '../../src/cache/listener.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { FakeStream, list, scripted } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'
import { assertPlain, eachStore, withStore } from '../support/stores.ts'

const obj = (name: string, rv: string, data = ''): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv, managedFields: [{ manager: 'kubectl' }] },
  data: { v: data },
})
type Seen = string[]
/** Records what a handler hears; every object it gets must be a plain, decoded one (never a store's stub). */
function recorder(seen: Seen, delay?: () => Promise<void>): EventHandler {
  return {
    onAdd: async (o, initial) => {
      assertPlain(o)
      await delay?.()
      seen.push(`add ${o.metadata.name}${initial ? ' (initial)' : ''}`)
    },
    onUpdate: (a, b) =>
      assertPlain(a, b) ??
      void seen.push(
        `update ${b.metadata.name} ${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`,
      ),
    onDelete: (o, info) =>
      assertPlain(o) ??
      void seen.push(`delete ${o.metadata.name}${info.finalStateUnknown ? ' (stale)' : ''}`),
  }
}

/** An informer on scripted lists/watches; `relist()` ends the current stream with a 410 so the next list is used. */
function setup(
  lists: ReturnType<typeof list>[],
  options: ConstructorParameters<typeof SharedInformer>[1] = {},
) {
  const streams = Array.from({ length: 8 }, () => new FakeStream())
  const lw = scripted([...lists], [...streams])
  const clock = new ManualClock()
  const source = withStore(lw, options)
  const informer = new SharedInformer(source.lw, { streaming: 'off', clock, ...source.store, ...options })
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  let current = 0
  return {
    informer,
    lw,
    clock,
    stream: () => streams[current]!,
    async relist() {
      streams[current]!.push({
        type: 'ERROR',
        object: { kind: 'Status', code: 410, metadata: {} } as unknown as KubeObject,
      })
      current++
      await until(() => clock.pending > 0)
      await clock.advance(60_000)
    },
    async stop() {
      ac.abort()
      await done
    },
  }
}

eachStore(
  'first list: handlers get initial adds; the cache is frozen and stripped of managedFields',
  async () => {
    const seen: Seen = []
    const t = setup([list('10', obj('a', '1'), obj('b', '2'))])
    t.informer.addEventHandler(recorder(seen))
    assert.equal(await t.informer.waitForSync(), true)
    await until(() => seen.length === 2)
    assert.deepEqual(seen, ['add a (initial)', 'add b (initial)'])
    const a = t.informer.store.get('ns/a')!
    assert.equal(a.metadata.managedFields, undefined)
    assert.throws(() => {
      ;(a.data as Record<string, string>).v = 'mutated'
    }, TypeError)
    await t.stop()
  },
)

eachStore(
  'kubernetes/kubernetes#113985: a registration is synced only after its handler processed every initial object',
  async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const seen: Seen = []
    const t = setup([list('10', obj('a', '1'), obj('b', '2'))])
    const fast = t.informer.addEventHandler(recorder([]))
    const slow = t.informer.addEventHandler(recorder(seen, () => gate))
    await t.informer.waitForSync()
    await until(() => fast.hasSynced())
    assert.equal(t.informer.hasSynced(), true)
    assert.equal(slow.hasSynced(), false, 'slow handler still on its first object')
    release()
    await until(() => slow.hasSynced())
    assert.deepEqual(seen, ['add a (initial)', 'add b (initial)'])
    await t.stop()
  },
)

eachStore(
  'kubernetes/kubernetes#87957: a relist of unchanged objects notifies nobody; changes become updates, vanished objects stale deletes',
  async () => {
    const seen: Seen = []
    const t = setup([
      list('10', obj('a', '1'), obj('b', '2'), obj('c', '3')),
      list('20', obj('a', '1'), obj('b', '5')),
    ])
    t.informer.addEventHandler(recorder(seen))
    await t.informer.waitForSync()
    await until(() => seen.length === 3)
    seen.length = 0
    await t.relist()
    await until(() => seen.length === 2)
    assert.deepEqual(seen, ['delete c (stale)', 'update b 2->5'])
    assert.deepEqual(t.informer.store.keys().sort(), ['ns/a', 'ns/b'])
    await t.stop()
  },
)

eachStore(
  'kubernetes/kubernetes#115620: an object added and gone during a disconnect is deleted at relist even if its add was still queued',
  async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const seen: Seen = []
    const t = setup([list('10'), list('30')])
    t.informer.addEventHandler(recorder(seen, () => gate))
    await t.informer.waitForSync()
    t.stream().push({ type: 'ADDED', object: obj('o', '11') })
    await until(() => t.informer.store.size === 1)
    await t.relist()
    await until(() => t.informer.store.size === 0)
    release()
    await until(() => seen.length === 2)
    assert.deepEqual(seen, ['add o', 'delete o (stale)'])
    await t.stop()
  },
)

eachStore(
  'kubernetes/kubernetes#83911: delete then re-create during a disconnect is seen as a delete followed by an add',
  async () => {
    const seen: Seen = []
    const t = setup([list('10', obj('o', '1')), list('30', obj('o', '25'))])
    t.informer.addEventHandler(recorder(seen))
    await t.informer.waitForSync()
    t.stream().push({ type: 'DELETED', object: obj('o', '12') })
    await until(() => t.informer.store.size === 0)
    await t.relist()
    await until(() => seen.length === 3)
    assert.deepEqual(seen, ['add o (initial)', 'delete o', 'add o'])
    await t.stop()
  },
)

eachStore(
  'a handler registered after sync first gets the cache as initial adds, then live events, with no gap',
  async () => {
    const seen: Seen = []
    const t = setup([list('10', obj('a', '1'))])
    await t.informer.waitForSync()
    const reg = t.informer.addEventHandler(recorder(seen))
    t.stream().push({ type: 'ADDED', object: obj('b', '11') })
    t.stream().push({ type: 'MODIFIED', object: obj('a', '12') })
    await until(() => seen.length === 3)
    assert.deepEqual(seen, ['add a (initial)', 'add b', 'update a 1->12'])
    assert.equal(reg.hasSynced(), true)
    await t.stop()
  },
)

eachStore(
  'a stuck handler does not stall the watch or other handlers; its backlog shows in health',
  async () => {
    const seen: Seen = []
    const t = setup([list('10')])
    t.informer.addEventHandler({ onAdd: () => new Promise(() => {}) })
    t.informer.addEventHandler(recorder(seen))
    await t.informer.waitForSync()
    for (let i = 0; i < 50; i++) t.stream().push({ type: 'ADDED', object: obj(`o${i}`, String(20 + i)) })
    await until(() => seen.length === 50)
    assert.equal(t.informer.store.size, 50)
    assert.equal(t.informer.health().pendingNotifications, 49, 'the stuck handler holds its own backlog')
    await t.stop()
  },
)

eachStore('resync re-delivers cached objects only to handlers that asked for it', async () => {
  const withResync: Seen = []
  const without: Seen = []
  const t = setup([list('10', obj('a', '1'))])
  t.informer.addEventHandler(recorder(withResync), { resyncPeriodMs: 5000 })
  t.informer.addEventHandler(recorder(without))
  await t.informer.waitForSync()
  await until(() => withResync.length === 1 && without.length === 1)
  await t.clock.advance(5000)
  await until(() => withResync.length === 2)
  assert.deepEqual(withResync, ['add a (initial)', 'update a 1->1'])
  assert.deepEqual(without, ['add a (initial)'])
  await t.stop()
})

eachStore(
  'kubernetes/kubernetes#124344: the transform cannot change after start; managedFields can be kept on request',
  async () => {
    const t = setup([list('10', obj('a', '1'))], { stripManagedFields: false, freeze: false })
    assert.throws(() => t.informer.setTransform((o) => o), /has already started/)
    await t.informer.waitForSync()
    assert.deepEqual(t.informer.store.get('ns/a')?.metadata.managedFields, [{ manager: 'kubectl' }])
    await t.stop()
    assert.throws(() => t.informer.addEventHandler({}), /has stopped/)
  },
)

eachStore(
  'whenSynced resolves with the first full state; a signal that aborts first rejects it, waitForSync says false',
  async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const lw = scripted([list('10', obj('a', '1'))], [new FakeStream()])
    const gated = {
      ...lw,
      list: async (...args: Parameters<typeof lw.list>) => {
        await gate
        return lw.list(...args)
      },
    }
    const source = withStore(gated)
    const informer = new SharedInformer(source.lw, {
      streaming: 'off',
      clock: new ManualClock(),
      ...source.store,
    })
    const ac = new AbortController()
    const done = informer.run(ac.signal)
    const early = new AbortController()
    const abandoned = informer.whenSynced(early.signal)
    const legacy = informer.waitForSync(early.signal)
    let synced = false
    const whenSynced = informer.whenSynced().then(() => (synced = true))
    early.abort('gave up')
    await assert.rejects(abandoned, { code: 'EDGEOP_ERR_ABORTED', cause: 'gave up' })
    assert.equal(await legacy, false)
    assert.equal(synced, false)
    release()
    await whenSynced
    assert.equal(informer.store.size, 1, 'resolved only with the list in the store')
    await informer.whenSynced(early.signal) // already synced: resolves although the signal aborted
    ac.abort()
    await done
  },
)

eachStore(
  "a registration's whenSynced resolves once its handler processed the initial list; abort rejects, remove releases",
  async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const seen: Seen = []
    const t = setup([list('10', obj('a', '1'), obj('b', '2'))])
    const slow = t.informer.addEventHandler(recorder(seen, () => gate))
    const stuck = t.informer.addEventHandler(recorder([], () => new Promise(() => {})))
    let synced = false
    const whenSynced = slow.whenSynced().then(() => (synced = true))
    const early = new AbortController()
    const abandoned = slow.whenSynced(early.signal)
    const removed = stuck.whenSynced()
    await t.informer.whenSynced()
    await until(() => seen.length === 0 && t.informer.hasSynced())
    assert.equal(synced, false, 'informer synced, handler still on its first object')
    early.abort('gave up')
    await assert.rejects(abandoned, { code: 'EDGEOP_ERR_ABORTED', cause: 'gave up' })
    release()
    await whenSynced
    assert.deepEqual(seen, ['add a (initial)', 'add b (initial)'])
    assert.equal(slow.hasSynced(), true)
    await slow.whenSynced(early.signal) // already synced: resolves although the signal aborted
    stuck.remove()
    await removed // a removed handler has nothing left to process
    await t.stop()
  },
)
