/** The primary's identity taken from its source's resource type, and predicates combined both ways. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Controller } from '../../src/controller/controller.ts'
import { allOf, anyOf, type Predicate } from '../../src/controller/predicates.ts'
import { primaryIdentity } from '../../src/controller/watches.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'

const registration = { hasSynced: () => true, whenSynced: async () => {}, pending: 0, remove() {} }
const typed = {
  describe: 'secrets',
  type: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  addEventHandler: () => registration,
}
const untyped = { describe: 'in memory', addEventHandler: () => registration }

test('F7: for takes kind, group and namespaced from its source’s resource type; its own win', () => {
  assert.deepEqual(primaryIdentity('c', { source: typed }), { kind: 'Secret', group: '', namespaced: true })
  assert.deepEqual(primaryIdentity('c', { source: typed, kind: 'Other', namespaced: false }), {
    kind: 'Other',
    group: '',
    namespaced: false,
  })
})

test('F7: a controller that owns objects and whose for cannot name its kind is refused when built, naming it', () => {
  const build = (source: typeof untyped) =>
    new Controller({
      name: 'secretsync',
      for: { source },
      owns: [{ source: typed }],
      logger: noopLogger,
      reconcile: async () => {},
    })
  assert.throws(() => build(untyped), {
    code: 'EDGEOP_ERR_INVALID',
    message: 'controller "secretsync": for needs kind, group and namespaced',
  })
  assert.equal(build(typed).name, 'secretsync')
})

test('F7: allOf and anyOf both combine predicates into one', () => {
  const obj = { metadata: { name: 'a' } } as KubeObject
  const yes: Predicate = { create: () => true }
  const no: Predicate = { create: () => false }
  assert.equal(allOf(yes, no).create!(obj), false)
  assert.equal(allOf(yes, yes).create!(obj), true)
  assert.equal(anyOf(yes, no).create!(obj), true)
  assert.equal(allOf().update!(obj, obj), true)
})
