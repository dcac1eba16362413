/**
 * The relist diff on its own: cached contents and a fresh list in, deltas out.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemoryIndexer } from '../../src/cache/memory-indexer.ts'
import { type RelistDelta, relistDiff } from '../../src/cache/relist-diff.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { seededRandom } from '../support/random.ts'

const obj = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv },
})
function cacheOf(...objects: KubeObject[]): MemoryIndexer {
  const store = new MemoryIndexer()
  for (const o of objects) store.upsert(o)
  return store
}
/** A delta as one readable line. */
function show(d: RelistDelta<KubeObject>): string {
  const rv = (o: KubeObject) => o.metadata.resourceVersion
  switch (d.kind) {
    case 'delete':
    case 'add':
      return `${d.kind} ${d.key}@${rv(d.obj)}`
    case 'update':
    case 'unchanged':
      return `${d.kind} ${d.key} ${rv(d.old)}->${rv(d.obj)}`
  }
}

test('an empty cache: every listed object is an add, in list order', () => {
  const deltas = relistDiff(cacheOf(), [obj('b', '2'), obj('a', '1')])
  assert.deepEqual(deltas.map(show), ['add ns/b@2', 'add ns/a@1'])
})

test('kubernetes/kubernetes#87957: deletes (last known state) first, then adds, real updates and unchanged objects in list order', () => {
  const cached = cacheOf(obj('a', '1'), obj('b', '2'), obj('c', '3'), obj('d', '4'))
  const listedA = obj('a', '1')
  const deltas = relistDiff(cached, [obj('e', '9'), obj('b', '7'), listedA])
  assert.deepEqual(deltas.map(show), [
    'delete ns/c@3',
    'delete ns/d@4',
    'add ns/e@9',
    'update ns/b 2->7',
    'unchanged ns/a 1->1',
  ])
  assert.deepEqual(deltas.at(-1), { kind: 'unchanged', key: 'ns/a', old: cached.get('ns/a'), obj: listedA })
  assert.equal(deltas.at(-1)!.obj, listedA, 'the listed copy is the one to store')
})

test('the cache is only read', () => {
  const a = obj('a', '1')
  const cached = cacheOf(a, obj('gone', '2'))
  relistDiff(cached, [obj('a', '5'), obj('new', '6')])
  assert.deepEqual(cached.keys().sort(), ['ns/a', 'ns/gone'])
  assert.equal(cached.get('ns/a'), a)
})

test('a key listed twice compares its second occurrence with its first', () => {
  const deltas = relistDiff(cacheOf(obj('a', '1')), [
    obj('a', '2'),
    obj('a', '3'),
    obj('b', '1'),
    obj('b', '1'),
  ])
  assert.deepEqual(deltas.map(show), [
    'update ns/a 1->2',
    'update ns/a 2->3',
    'add ns/b@1',
    'unchanged ns/b 1->1',
  ])
})

test('applying the deltas to the cache leaves exactly the listed objects (randomized)', () => {
  const rand = seededRandom(15)
  for (let round = 0; round < 200; round++) {
    const pick = (): KubeObject[] =>
      Array.from({ length: 12 }, (_, i) => i)
        .filter(() => rand() < 0.5)
        .map((i) => obj(`o${i}`, String(Math.floor(rand() * 3))))
    const cached = cacheOf(...pick())
    const listed = pick()
    const before = new Map(cached.keys().map((k) => [k, cached.get(k)!]))
    const deltas = relistDiff(cached, listed)
    const firstNonDelete = deltas.findIndex((d) => d.kind !== 'delete')
    assert.ok(
      deltas.slice(firstNonDelete < 0 ? deltas.length : firstNonDelete).every((d) => d.kind !== 'delete'),
    )
    for (const d of deltas) {
      if (d.kind === 'delete') {
        assert.equal(d.obj, before.get(d.key), 'a delete carries the last cached state')
        cached.remove(d.key)
      } else {
        assert.equal(d.kind === 'add', !before.has(d.key))
        if (d.kind !== 'add')
          assert.equal(
            d.kind === 'unchanged',
            d.old.metadata.resourceVersion === d.obj.metadata.resourceVersion,
          )
        cached.upsert(d.obj)
      }
    }
    assert.deepEqual(
      new Map(cached.keys().map((k) => [k, cached.get(k)])),
      new Map(listed.map((o) => [`ns/${o.metadata.name}`, o])),
    )
  }
})
