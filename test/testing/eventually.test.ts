import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventually } from '../../src/testing/eventually.ts'

test('returns the first value that is neither undefined nor false; throwing checks count as "not yet"', async () => {
  let calls = 0
  const value = await eventually(
    () => {
      calls++
      if (calls === 1) throw new Error('not there yet')
      return calls < 3 ? false : { calls }
    },
    { intervalMs: 1 },
  )
  assert.deepEqual(value, { calls: 3 })
})

test('times out with EDGEOP_ERR_TIMEOUT naming what was awaited and the last failure', async () => {
  await assert.rejects(
    eventually(
      () => {
        throw new Error('boom')
      },
      { timeoutMs: 0, intervalMs: 1, what: () => 'the thing' },
    ),
    (err: Error & { code?: string }) =>
      err.code === 'EDGEOP_ERR_TIMEOUT' &&
      /not reached within 0 ms: the thing \(last check failed: boom\)/.test(err.message),
  )
})

test('rejects bad options and an aborted signal', async () => {
  await assert.rejects(
    eventually(() => true, { intervalMs: 0 }),
    { code: 'EDGEOP_ERR_INVALID' },
  )
  await assert.rejects(
    eventually(() => false, { signal: AbortSignal.abort() }),
    { code: 'EDGEOP_ERR_ABORTED' },
  )
})
