/**
 * The sampler's decision: parent-based follows the parent, a root is sampled by its trace ID's low
 * bits against the ratio, and the same trace ID always gets the same answer.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { DEFAULT_SAMPLER, shouldSample } from '../../src/tracing/sampler.ts'

const ids = Array.from({ length: 4000 }, () => randomBytes(16).toString('hex'))
const share = (ratio: number, parentBased = false) =>
  ids.filter((id) => shouldSample({ ratio, parentBased }, id)).length / ids.length

test('ratio 0 samples no root, ratio 1 every root, 0.25 about a quarter', () => {
  assert.equal(share(0), 0)
  assert.equal(share(1), 1)
  const q = share(0.25)
  assert.ok(q > 0.2 && q < 0.3, `0.25 sampled ${q}`)
})

test('the decision depends only on the trace ID: low bits below the ratio', () => {
  const low = `${'f'.repeat(19)}0000000000001`
  const high = `${'0'.repeat(19)}fffffffffffff`
  assert.equal(shouldSample({ ratio: 0.001, parentBased: false }, low), true)
  assert.equal(shouldSample({ ratio: 0.999, parentBased: false }, high), false)
  for (const id of ids.slice(0, 50))
    assert.equal(
      shouldSample({ ratio: 0.5, parentBased: false }, id),
      shouldSample({ ratio: 0.5, parentBased: false }, id),
    )
})

test('parent-based: a child follows its parent whatever the ratio; without parentBased the ratio decides', () => {
  const parent = (sampled: boolean) => ({ traceId: ids[0]!, spanId: '00f067aa0ba902b7', sampled })
  assert.equal(shouldSample({ ratio: 0, parentBased: true }, ids[0]!, parent(true)), true)
  assert.equal(shouldSample({ ratio: 1, parentBased: true }, ids[0]!, parent(false)), false)
  assert.equal(shouldSample({ ratio: 0, parentBased: false }, ids[0]!, parent(true)), false)
  assert.deepEqual(DEFAULT_SAMPLER, { ratio: 1, parentBased: true })
})
