import assert from 'node:assert/strict'
import { test } from 'node:test'
import { jsonPatch } from '../../src/webhook/admission.ts'

test('jsonPatch adds, removes and replaces keys recursively, escaping pointers', () => {
  const from = { metadata: { name: 'a', labels: { x: '1' } }, spec: { replicas: 1, old: true } }
  const to = { metadata: { name: 'a', labels: { x: '2', 'a/b~c': 'y' } }, spec: { replicas: 1 } }
  assert.deepEqual(jsonPatch(from, to), [
    { op: 'replace', path: '/metadata/labels/x', value: '2' },
    { op: 'add', path: '/metadata/labels/a~1b~0c', value: 'y' },
    { op: 'remove', path: '/spec/old' },
  ])
})

test('jsonPatch replaces a changed array whole and is empty for equal objects', () => {
  assert.deepEqual(jsonPatch({ a: [1, 2] }, { a: [1, 3] }), [{ op: 'replace', path: '/a', value: [1, 3] }])
  assert.deepEqual(jsonPatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), [])
  assert.deepEqual(jsonPatch({ a: { b: null } }, { a: { b: 0 } }), [
    { op: 'replace', path: '/a/b', value: 0 },
  ])
})
