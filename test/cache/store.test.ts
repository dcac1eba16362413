import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONTROLLER_UID_INDEX, controllerUidIndexFunc, labelIndexFunc } from '../../src/cache/index-funcs.ts'
import { MemoryIndexer } from '../../src/cache/memory-indexer.ts'
import type { KubeObject } from '../../src/core/types.ts'

const pod = (ns: string, name: string, owner?: string, app?: string): KubeObject => ({
  metadata: {
    namespace: ns,
    name,
    ...(app ? { labels: { app } } : {}),
    ...(owner
      ? { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: owner, controller: true }] }
      : {}),
  },
})

test('indexes follow every upsert and remove; buckets empty out', () => {
  const s = new MemoryIndexer({ [CONTROLLER_UID_INDEX]: controllerUidIndexFunc, app: labelIndexFunc('app') })
  s.upsert(pod('a', 'p1', 'u1', 'web'))
  s.upsert(pod('a', 'p2', 'u1', 'db'))
  s.upsert(pod('b', 'p3', 'u2', 'web'))
  assert.deepEqual(
    s
      .byIndex(CONTROLLER_UID_INDEX, 'u1')
      .map((p) => p.metadata.name)
      .sort(),
    ['p1', 'p2'],
  )
  assert.deepEqual(s.indexKeys('app', 'web').sort(), ['a/p1', 'b/p3'])
  assert.deepEqual(
    s.listNamespace('b').map((p) => p.metadata.name),
    ['p3'],
  )
  s.upsert(pod('a', 'p1', 'u2', 'db')) // re-owned and relabelled
  assert.deepEqual(s.indexKeys(CONTROLLER_UID_INDEX, 'u1'), ['a/p2'])
  assert.deepEqual(s.indexKeys('app', 'web'), ['b/p3'])
  s.remove('a/p2')
  assert.deepEqual(s.indexKeys(CONTROLLER_UID_INDEX, 'u1'), [])
  assert.ok(!s.indexValues(CONTROLLER_UID_INDEX).includes('u1'), 'empty bucket removed')
  assert.equal(s.size, 2)
})

test('indexers added later index existing objects; a duplicate name or an unknown index is an error', () => {
  const s = new MemoryIndexer()
  s.upsert(pod('a', 'p1', undefined, 'web'))
  s.addIndexers({ app: labelIndexFunc('app') })
  assert.deepEqual(s.indexKeys('app', 'web'), ['a/p1'])
  assert.throws(() => s.addIndexers({ app: labelIndexFunc('x') }), /index "app" already exists/)
  assert.throws(() => s.byIndex('nope', 'x'), {
    code: 'EDGEOP_ERR_INVALID',
    message: 'index "nope" does not exist',
  })
})

test('cluster-scoped keys are bare names and skip the namespace index', () => {
  const s = new MemoryIndexer()
  s.upsert({ metadata: { name: 'node-1' } })
  assert.deepEqual(s.keys(), ['node-1'])
  assert.deepEqual(s.indexValues('namespace'), [])
})
