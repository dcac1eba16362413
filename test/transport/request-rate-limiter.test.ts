import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { tokenBucketLimiter, unlimited } from '../../src/transport/request-rate-limiter.ts'

test('client-go defaults: qps 0 → 5/s, burst 0 → 10; the 11th request waits 200 ms', async () => {
  const clock = new ManualClock()
  const limiter = tokenBucketLimiter(0, 0, clock)
  for (let i = 0; i < 10; i++) assert.equal(await limiter.wait(), 0)
  let done = false
  const p = limiter.wait().then((w) => {
    done = true
    return w
  })
  await clock.advance(199)
  assert.equal(done, false)
  await clock.advance(1)
  assert.equal(await p, 200)
})

test('negative qps disables client-side limiting', () => {
  assert.equal(tokenBucketLimiter(-1, 0), unlimited)
})

test('an aborted waiter gives its token back and rejects with EDGEOP_ERR_ABORTED', async () => {
  const clock = new ManualClock()
  const limiter = tokenBucketLimiter(1, 1, clock)
  await limiter.wait()
  const ac = new AbortController()
  const p = limiter.wait(ac.signal)
  ac.abort()
  await assert.rejects(p, { code: 'EDGEOP_ERR_ABORTED' })
  // The cancelled reservation was returned: the next waiter waits 1 s, not 2 s.
  const q = limiter.wait()
  await clock.advance(1000)
  assert.equal(await q, 1000)
})
