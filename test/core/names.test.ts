import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isDns1123Label, isDns1123Subdomain } from '../../src/core/names.ts'

test('DNS-1123 labels (namespace names)', () => {
  for (const ok of ['a', '0', 'kube-system', 'a1-b2', 'x'.repeat(63)])
    assert.equal(isDns1123Label(ok), true, ok)
  for (const bad of ['', 'A', 'Bad_NS', '-a', 'a-', 'a.b', 'x'.repeat(64), 'a b', 'ä'])
    assert.equal(isDns1123Label(bad), false, bad)
})

test('DNS-1123 subdomains (Lease and Node names)', () => {
  const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
  assert.equal(longest.length, 253)
  for (const ok of ['a', 'edgeop', 'node-1.example.com', 'a.b', '1.2.3.4', longest])
    assert.equal(isDns1123Subdomain(ok), true, ok)
  for (const bad of ['', 'Bad_ID!', 'a..b', 'a.-b', 'a-.b', '.a', 'a.', 'UPPER', `${longest}x`, 'a/b'])
    assert.equal(isDns1123Subdomain(bad), false, bad)
})
