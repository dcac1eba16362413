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

test('D17: jsonPatch removes a `constructor` label and adds a `toString` label, keys on every object prototype', () => {
  const from = { metadata: { labels: { constructor: 'a', keep: 'k' } } }
  const to = { metadata: { labels: { keep: 'k', toString: 'b', hasOwnProperty: 'c' } } }
  assert.deepEqual(jsonPatch(from, to), [
    { op: 'remove', path: '/metadata/labels/constructor' },
    { op: 'add', path: '/metadata/labels/toString', value: 'b' },
    { op: 'add', path: '/metadata/labels/hasOwnProperty', value: 'c' },
  ])
  assert.deepEqual(jsonPatch({ constructor: { a: 1 } }, {}), [{ op: 'remove', path: '/constructor' }])
  assert.deepEqual(jsonPatch({}, { valueOf: { a: 1 } }), [{ op: 'add', path: '/valueOf', value: { a: 1 } }])
})

test('D17: jsonPatch treats `__proto__` as an ordinary key, as JSON.parse and structuredClone give it', () => {
  const from = JSON.parse('{"metadata":{"labels":{"__proto__":"a"}}}')
  const to = structuredClone(JSON.parse('{"metadata":{"labels":{}},"spec":{"__proto__":{"x":1}}}'))
  assert.deepEqual(jsonPatch(from, to), [
    { op: 'remove', path: '/metadata/labels/__proto__' },
    { op: 'add', path: '/spec', value: to.spec },
  ])
  assert.deepEqual(jsonPatch({ spec: {} }, to).at(-1), {
    op: 'add',
    path: '/spec/__proto__',
    value: { x: 1 },
  })
  assert.deepEqual(jsonPatch(JSON.parse('{"__proto__":{"x":1}}'), JSON.parse('{"__proto__":{"x":2}}')), [
    { op: 'replace', path: '/__proto__/x', value: 2 },
  ])
})
