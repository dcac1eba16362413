import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CompactIndexer } from '../../src/cache/compact-indexer.ts'
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, labelIndexFunc } from '../../src/cache/index-funcs.ts'
import { SharedInformer } from '../../src/cache/informer.ts'
import { type EventHandler, Listener } from '../../src/cache/listener.ts'
import { MemoryIndexer } from '../../src/cache/memory-indexer.ts'
import { jsonCodec } from '../../src/codec/json-codec.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { encodedObject, isEncodedObject, type ObjectCodec } from '../../src/core/encoded-object.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { asStub, FakeStream, keepingBytes, list, scripted } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'
import { seededRandom } from '../support/random.ts'

/** The JSON codec, counting decodes. */
function counting(): ObjectCodec & { decodes: number } {
  const c = {
    ...jsonCodec,
    decodes: 0,
    decode(bytes: Uint8Array) {
      c.decodes++
      return jsonCodec.decode(bytes)
    },
  }
  return c
}

const app = (i: number, owner: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'AppService',
  metadata: {
    name: `a${i}`,
    namespace: i % 2 ? 'odd' : 'even',
    uid: `u${i}`,
    resourceVersion: String(i),
    labels: { tier: i % 3 ? 'web' : 'db' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: owner, uid: owner, controller: true }],
  },
  spec: { replicas: i, image: 'nginx', ...extra },
})

const stubOf = (o: KubeObject, codec: ObjectCodec) =>
  encodedObject(new TextEncoder().encode(JSON.stringify(o)), codec) as unknown as KubeObject

test('metadata index functions run on stubs: indexing and index lookups decode nothing', () => {
  const codec = counting()
  const store = new CompactIndexer({
    indexers: { [CONTROLLER_UID_INDEX]: controllerUidIndexFunc, tier: labelIndexFunc('tier') },
  })
  for (let i = 0; i < 20; i++) store.upsert(stubOf(app(i, `o${i % 4}`), codec))
  store.upsert(stubOf(app(3, 'o9'), codec)) // replaces a3: unindexed from o3, indexed under o9
  assert.equal(codec.decodes, 0)
  assert.deepEqual(store.indexKeys(CONTROLLER_UID_INDEX, 'o9'), ['odd/a3'])
  assert.equal(store.indexKeys(CONTROLLER_UID_INDEX, 'o3').includes('odd/a3'), false)
  assert.deepEqual(store.indexValues('namespace').sort(), ['even', 'odd'])
  assert.equal(store.indexKeys('tier', 'db').length, 7)
  assert.equal(codec.decodes, 0)
  // Reads decode, and give frozen plain objects.
  const got = store.byIndex(CONTROLLER_UID_INDEX, 'o9')
  assert.deepEqual(got, [app(3, 'o9')])
  assert.equal(isEncodedObject(got[0]), false)
  assert.ok(Object.isFrozen(got[0]!.spec))
  assert.equal(codec.decodes, 1)
})

test('an index function that reads more than metadata gets the decoded object', () => {
  const codec = counting()
  const byImage = (o: KubeObject) => [String((o as { spec?: { image?: string } }).spec?.image)]
  const store = new CompactIndexer({ indexers: { image: byImage } })
  store.upsert(stubOf(app(1, 'o'), codec))
  store.upsert(stubOf(app(2, 'o', { image: 'redis' }), codec))
  assert.deepEqual(store.indexKeys('image', 'redis'), ['even/a2'])
  assert.ok(codec.decodes >= 2)
})

test('the decoded cache is bounded and keeps identity while an object is in it', () => {
  const codec = counting()
  const store = new CompactIndexer({ decodedCacheSize: 3 })
  for (let i = 0; i < 10; i++) store.upsert(stubOf(app(i, 'o'), codec))
  const a = store.get('even/a0')
  assert.equal(store.get('even/a0'), a, 'a hit is the same object')
  assert.equal(codec.decodes, 1)
  for (const k of ['odd/a1', 'even/a2', 'odd/a3']) store.get(k)
  const again = store.get('even/a0')
  assert.notEqual(again, a, 'evicted: decoded afresh')
  assert.deepEqual(again, a)
  assert.equal(codec.decodes, 5)
  assert.equal(store.list().length, 10)
})

test('a plain object is kept as its JSON bytes and reads back deep-equal', () => {
  const store = new CompactIndexer({ decodedCacheSize: 0 })
  const o = app(1, 'o')
  store.upsert(o)
  const entry = store.entry('odd/a1')!
  assert.ok(isEncodedObject(entry))
  assert.deepEqual(store.get('odd/a1'), o)
  assert.notEqual(store.get('odd/a1'), o)
})

test('differential: for random objects and edits, compact and eager stores read the same', () => {
  const r = seededRandom(11)
  const indexers = { [CONTROLLER_UID_INDEX]: controllerUidIndexFunc, tier: labelIndexFunc('tier') }
  const eager = new MemoryIndexer(indexers)
  const compact = new CompactIndexer({ indexers, decodedCacheSize: 4 })
  for (let step = 0; step < 400; step++) {
    const i = Math.floor(r() * 30)
    const key = `${i % 2 ? 'odd' : 'even'}/a${i}`
    if (r() < 0.2) {
      eager.remove(key)
      compact.remove(key)
      continue
    }
    const o = app(i, `o${Math.floor(r() * 5)}`, { note: 'é😀"\\'.repeat(Math.floor(r() * 4)), step })
    const withMf = { ...o, metadata: { ...o.metadata, managedFields: [{ manager: 'x' }] } }
    eager.upsert(JSON.parse(JSON.stringify(o)))
    compact.upsert(r() < 0.5 ? o : asStub(withMf))
  }
  const sorted = (xs: KubeObject[]) =>
    [...xs].sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!))
  assert.deepEqual(compact.keys().sort(), eager.keys().sort())
  for (const k of eager.keys()) assert.deepEqual(compact.get(k), eager.get(k), k)
  assert.deepEqual(sorted(compact.list()), sorted(eager.list()))
  for (const idx of ['namespace', CONTROLLER_UID_INDEX, 'tier'])
    for (const v of eager.indexValues(idx)) {
      assert.deepEqual(compact.indexKeys(idx, v).sort(), eager.indexKeys(idx, v).sort())
      assert.deepEqual(sorted(compact.byIndex(idx, v)), sorted(eager.byIndex(idx, v)))
    }
})

test('compact informer: a user transform runs on the decoded object and its result is what readers and handlers get', async () => {
  const lw = keepingBytes(scripted([list('10', app(1, 'o'), app(2, 'o'))], [new FakeStream()]))
  const seen: KubeObject[] = []
  const informer = new SharedInformer(lw, {
    streaming: 'off',
    clock: new ManualClock(),
    store: 'compact',
    transform: (o) => {
      assert.equal(isEncodedObject(o), false)
      return { ...o, spec: { kept: (o as unknown as { spec: { replicas: number } }).spec.replicas } }
    },
  })
  informer.addEventHandler({ onAdd: (o) => void seen.push(o) })
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  await informer.whenSynced()
  await until(() => seen.length === 2)
  const want = (i: number) => ({ ...app(i, 'o'), spec: { kept: i } })
  assert.deepEqual(informer.store.get('odd/a1'), want(1))
  assert.deepEqual(
    seen.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!)),
    [want(1), want(2)],
  )
  assert.ok(Object.isFrozen(seen[0]!.spec))
  ac.abort()
  await done
})

test('compact informer: a slow handler backlog holds stubs, decoded only at delivery', async () => {
  const codec = counting()
  const stream = new FakeStream()
  const lw = scripted([list('10')], [stream])
  const informer = new SharedInformer(lw, { streaming: 'off', clock: new ManualClock(), store: 'compact' })
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const reg = informer.addEventHandler({ onAdd: () => gate })
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  await informer.whenSynced()
  for (let i = 0; i < 5; i++) stream.push({ type: 'ADDED', object: stubOf(app(i, 'o'), codec) })
  await until(() => informer.store.size === 5 && reg.pending === 4)
  assert.equal(codec.decodes, 1, 'only the object being delivered was decoded')
  release()
  await until(() => reg.pending === 0)
  assert.equal(codec.decodes, 5)
  ac.abort()
  await done
})

/** A listener on `store` for `handler`, and a way to wait until it has delivered everything. */
function listening(store: CompactIndexer, handler: EventHandler) {
  const l = new Listener(
    handler,
    0,
    () => true,
    async () => {},
    () => {},
    noopLogger,
    (e) => store.resolve(e),
  )
  return { l }
}

test('a handler that reads only metadata gets the compact store’s entries undecoded, with the scanned metadata', async () => {
  const codec = counting()
  const store = new CompactIndexer()
  const [a1, a2] = [
    stubOf(app(1, 'o'), codec),
    stubOf({ ...app(1, 'o'), metadata: { ...app(1, 'o').metadata, resourceVersion: '7' } }, codec),
  ]
  store.upsert(a2!)
  const seen: string[] = []
  const { l } = listening(store, {
    reads: 'metadata',
    onAdd: (o) => void seen.push(`add ${o.metadata.name} ${o.metadata.labels?.tier}`),
    onUpdate: (a, b) => void seen.push(`update ${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
    onDelete: (o) => void seen.push(`delete ${o.metadata.uid}`),
  })
  l.notify({ kind: 'add', obj: a1!, initial: true })
  l.notify({ kind: 'update', old: a1!, obj: a2! })
  l.notify({ kind: 'delete', obj: a2!, stale: false })
  await until(() => seen.length === 3)
  assert.deepEqual(seen, ['add a1 web', 'update 1->7', 'delete u1'])
  assert.equal(codec.decodes, 0, 'nothing decoded')
})

test('an update’s old state is decoded only for a handler that reads more than its metadata', async () => {
  const codec = counting()
  const store = new CompactIndexer({ decodedCacheSize: 0 })
  const [old, cur] = [stubOf(app(1, 'o'), codec), stubOf(app(1, 'o', { image: 'caddy' }), codec)]
  const got: unknown[] = []
  const { l } = listening(store, {
    readsOld: 'metadata',
    onUpdate: (a, b) =>
      void got.push(isEncodedObject(a), isEncodedObject(b), (b as { spec?: { image?: string } }).spec?.image),
  })
  l.notify({ kind: 'update', old, obj: cur })
  await until(() => got.length === 3)
  assert.deepEqual(got, [true, false, 'caddy'])
  assert.equal(codec.decodes, 1, 'only the new state decoded')
  const full: unknown[] = []
  const { l: l2 } = listening(store, {
    onUpdate: (a, b) => void full.push(isEncodedObject(a), isEncodedObject(b)),
  })
  l2.notify({ kind: 'update', old, obj: cur })
  await until(() => full.length === 2)
  assert.deepEqual(full, [false, false], 'by default a handler gets both states decoded')
  assert.equal(codec.decodes, 3)
})
