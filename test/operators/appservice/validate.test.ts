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
  assert.equal(
    (bad as { problem: string }).problem,
    'spec.image: must be at least 1 characters; spec.replicas: must be at least 0',
  )
  const none = validateSpec(undefined)
  assert.equal(none.ok, false)
  assert.equal((none as { problem: string }).problem, 'spec.image: is required')
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

test('the database class: needed when the database is enabled, always named as the service names classes', () => {
  assert.deepEqual(validateSpec({ image: 'nginx', database: { enabled: true } }), {
    ok: false,
    problem: 'spec.database.class: needed when the database is enabled',
  })
  assert.deepEqual(validateSpec({ image: 'nginx', database: { enabled: false, class: 'Gold_Tier' } }), {
    ok: false,
    problem: 'spec.database.class: must be lowercase letters, digits or dashes',
  })
  assert.equal(validateSpec({ image: 'nginx', database: { enabled: false } }).ok, true)
  assert.equal(validateSpec({ image: 'nginx', database: { enabled: true, class: 'gold-1' } }).ok, true)
})

test('bounds are refused in words, with the bound', () => {
  assert.deepEqual(validateSpec({ image: 'nginx', port: 70000, replicas: -1 }), {
    ok: false,
    problem: 'spec.replicas: must be at least 0; spec.port: must be at most 65535',
  })
})
