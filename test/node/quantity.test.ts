import assert from 'node:assert/strict'
import { test } from 'node:test'
import { memoryBytes } from './quantity.ts'

test('a memory quantity in bytes: binary and decimal suffixes; anything else refused', () => {
  assert.equal(memoryBytes('384Mi'), 384 * 2 ** 20)
  assert.equal(memoryBytes('1.5Gi'), 1.5 * 2 ** 30)
  assert.equal(memoryBytes('128M'), 128e6)
  assert.equal(memoryBytes('4096'), 4096)
  for (const bad of ['', '384MiB', '-1Mi', '1e3', 'Mi'])
    assert.throws(() => memoryBytes(bad), /is not <number>/)
})
