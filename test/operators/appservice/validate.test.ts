/** Spec validation: schema issues and what the schema cannot say, each named by field. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { unusableSpec, validateSpec } from '../../../src/operators/appservice/validate.ts'

test('a minimal spec is usable and gets the schema defaults', () => {
  assert.deepEqual(validateSpec({ image: 'nginx' }), {
    ok: true,
    spec: { image: 'nginx', replicas: 1, port: 8080 },
  })
})

test('schema issues name each field; an absent spec counts as empty', () => {
  const bad = validateSpec({ image: '', replicas: -1 })
  assert.equal(bad.ok, false)
  assert.match((bad as { problem: string }).problem, /^spec\.image: .+; spec\.replicas: .+$/)
  const none = validateSpec(undefined)
  assert.equal(none.ok, false)
  assert.match((none as { problem: string }).problem, /^spec\.image: /)
})

test('image references: registry, port, path, tag and digest accepted; upper case and spaces refused', () => {
  for (const image of [
    'nginx',
    'nginx:1.27',
    'registry.local:5000/team/app:v2',
    `app@sha256:${'a'.repeat(64)}`,
  ])
    assert.equal(unusableSpec({ image, replicas: 1, port: 80 }), undefined, image)
  assert.deepEqual(validateSpec({ image: 'Nginx:latest' }), {
    ok: false,
    problem: 'spec.image "Nginx:latest" is not a valid image reference',
  })
  assert.equal(
    unusableSpec({ image: 'a b', replicas: 1, port: 80 }),
    'spec.image "a b" is not a valid image reference',
  )
})

test('the database class is checked only when the database is enabled', () => {
  const spec = (enabled: boolean) => ({ image: 'nginx', database: { enabled, class: 'Gold_Tier' } })
  assert.deepEqual(validateSpec(spec(true)), {
    ok: false,
    problem: 'spec.database.class "Gold_Tier" must be 1-63 lowercase letters, digits or dashes',
  })
  assert.equal(validateSpec(spec(false)).ok, true)
  assert.equal(validateSpec({ image: 'nginx', database: { enabled: true, class: 'gold-1' } }).ok, true)
})
