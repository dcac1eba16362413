/**
 * Deadlines on the injected clock: a ManualClock moves them, nothing sleeps.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { deadlineSignal, withDeadline } from '../../src/core/deadline.ts'
import { EdgeopError } from '../../src/core/errors.ts'

const late = () => new EdgeopError('EDGEOP_ERR_TIMEOUT', 'too late', { retryable: true })

test('deadlineSignal aborts with its reason when the time has passed on the clock, not before', async () => {
  const clock = new ManualClock()
  const d = deadlineSignal(clock, 1000, late)
  await clock.advance(999)
  assert.equal(d.signal.aborted, false)
  await clock.advance(1)
  assert.equal(d.signal.aborted, true)
  assert.equal((d.signal.reason as EdgeopError).code, 'EDGEOP_ERR_TIMEOUT')
  d.dispose()
})

test("deadlineSignal forwards the parent's reason; dispose cancels the timer and detaches", async () => {
  const clock = new ManualClock()
  const parent = new AbortController()
  const d = deadlineSignal(clock, 1000, late, parent.signal)
  parent.abort('stop')
  assert.equal(d.signal.reason, 'stop')
  d.dispose()
  assert.equal(clock.pending, 0)

  const parent2 = new AbortController()
  const d2 = deadlineSignal(clock, 1000, late, parent2.signal)
  d2.dispose()
  assert.equal(clock.pending, 0, 'no timer left behind')
  parent2.abort('later')
  assert.equal(d2.signal.aborted, false, 'detached from the parent')
})

test('no time limit when ms is undefined or infinite', async () => {
  const clock = new ManualClock()
  for (const ms of [undefined, Number.POSITIVE_INFINITY]) {
    const d = deadlineSignal(clock, ms, late)
    assert.equal(clock.pending, 0)
    await clock.advance(1e9)
    assert.equal(d.signal.aborted, false)
  }
})

test('withDeadline settles like the promise and cancels its timer', async () => {
  const clock = new ManualClock()
  assert.equal(await withDeadline(Promise.resolve(7), clock, 1000, late), 7)
  await assert.rejects(withDeadline(Promise.reject(new Error('own')), clock, 1000, late), /own/)
  assert.equal(clock.pending, 0)
})

test('withDeadline rejects with the timeout reason on the clock, or EDGEOP_ERR_ABORTED on the signal', async () => {
  const clock = new ManualClock()
  const never = new Promise<never>(() => {})
  const timedOut = withDeadline(never, clock, 500, late)
  let settled = false
  timedOut.catch(() => (settled = true))
  await clock.advance(499)
  assert.equal(settled, false)
  await clock.advance(1)
  await assert.rejects(timedOut, { code: 'EDGEOP_ERR_TIMEOUT', message: 'too late' })

  const ac = new AbortController()
  const aborted = withDeadline(never, clock, 500, late, ac.signal)
  ac.abort('shutdown')
  await assert.rejects(aborted, (err: EdgeopError) => {
    assert.equal(err.code, 'EDGEOP_ERR_ABORTED')
    assert.equal(err.cause, 'shutdown')
    return true
  })
  assert.equal(clock.pending, 0)
  const pre = new AbortController()
  pre.abort()
  await assert.rejects(withDeadline(Promise.resolve(1), clock, 500, late, pre.signal), {
    code: 'EDGEOP_ERR_ABORTED',
  })
})
