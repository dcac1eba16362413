/**
 * The pure breaker machine, one decision per test: time is the `now` argument, jitter the `random` input.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type BreakerInput,
  type BreakerLimits,
  type BreakerState,
  breakerStep,
  DEFAULT_BREAKER_LIMITS,
  initialBreakerState,
  openPeriodMs,
} from '../../src/resilience/breaker-state.ts'

const LIMITS: BreakerLimits = {
  failureThreshold: 3,
  failureWindowMs: 1000,
  openMs: 100,
  maxOpenMs: 350,
  jitter: 0.5,
  probeTimeoutMs: 500,
}
const fail = (random = 0): BreakerInput => ({ type: 'failure', random })
const request: BreakerInput = { type: 'request' }

/** Feeds `inputs` at the paired times. */
function run(state: BreakerState, ...inputs: [BreakerInput, number][]): BreakerState {
  for (const [input, now] of inputs) state = breakerStep(state, input, now).state
  return state
}
/** A breaker just opened at `now` (no jitter). */
const openedAt = (now: number): BreakerState =>
  run(initialBreakerState(LIMITS), [fail(), now], [fail(), now], [fail(), now])

test('closed lets every request through', () => {
  const s = breakerStep(initialBreakerState(LIMITS), request, 0)
  assert.equal(s.admitted, true)
  assert.equal(s.state.phase, 'closed')
})

test('closed opens on the threshold-th failure within the window', () => {
  const two = run(initialBreakerState(LIMITS), [fail(), 0], [fail(), 10])
  assert.equal(two.phase, 'closed')
  const three = breakerStep(two, fail(), 20).state
  assert.equal(three.phase, 'open')
  assert.equal(three.openUntil, 20 + LIMITS.openMs)
})

test('failures older than the window do not count', () => {
  const s = run(initialBreakerState(LIMITS), [fail(), 0], [fail(), 10], [fail(), 1005])
  assert.equal(s.phase, 'closed')
  assert.deepEqual(s.failures, [10, 1005])
})

test('a success between failures resets the count', () => {
  const s = run(
    initialBreakerState(LIMITS),
    [fail(), 0],
    [fail(), 1],
    [{ type: 'success' }, 2],
    [fail(), 3],
    [fail(), 4],
  )
  assert.equal(s.phase, 'closed')
  assert.deepEqual(s.failures, [3, 4])
})

test('open refuses requests until the open period ends, saying how long is left', () => {
  const s = breakerStep(openedAt(0), request, 40)
  assert.equal(s.admitted, false)
  assert.equal(s.retryAfterMs, 60)
  assert.equal(s.state.phase, 'open')
})

test('the open period is jittered by the failure input', () => {
  const s = run(initialBreakerState(LIMITS), [fail(), 0], [fail(), 0], [fail(0.5), 0])
  assert.equal(s.openUntil, LIMITS.openMs * 1.25)
})

test('after the open period the first request is the probe (half-open) and the next is refused', () => {
  const probe = breakerStep(openedAt(0), request, 100)
  assert.equal(probe.admitted, true)
  assert.equal(probe.state.phase, 'half-open')
  assert.equal(probe.state.probeAt, 100)
  const second = breakerStep(probe.state, request, 110)
  assert.equal(second.admitted, false)
  assert.equal(second.retryAfterMs, LIMITS.openMs, 'look again one open period later')
})

test('a successful probe closes the breaker and forgets the openings', () => {
  const half = breakerStep(openedAt(0), request, 100).state
  const s = breakerStep(half, { type: 'success' }, 150).state
  assert.equal(s.phase, 'closed')
  assert.equal(s.opens, 0)
  assert.equal(breakerStep(s, request, 151).admitted, true)
})

test('a failed probe opens again for twice as long, capped at the maximum', () => {
  let s = breakerStep(openedAt(0), request, 100).state
  s = breakerStep(s, fail(), 120).state
  assert.equal(s.phase, 'open')
  assert.equal(s.openUntil, 120 + 200)
  s = run(s, [request, 320], [fail(), 320], [request, 720], [fail(), 720])
  assert.equal(s.opens, 4)
  assert.equal(s.openUntil, 720 + LIMITS.maxOpenMs, 'capped: 800 → 350')
})

test('a probe that never reports is replaced after the probe timeout', () => {
  const half = breakerStep(openedAt(0), request, 100).state
  assert.equal(breakerStep(half, request, 599).admitted, false)
  const again = breakerStep(half, request, 600)
  assert.equal(again.admitted, true)
  assert.equal(again.state.probeAt, 600)
})

test('an abandoned probe frees the slot for the next request', () => {
  const half = breakerStep(openedAt(0), request, 100).state
  const freed = breakerStep(half, { type: 'abandon' }, 110).state
  assert.equal(freed.phase, 'half-open')
  assert.equal(breakerStep(freed, request, 111).admitted, true)
})

test('late answers to calls let through before opening change nothing while open', () => {
  const open = openedAt(0)
  assert.deepEqual(breakerStep(open, { type: 'success' }, 10).state, open)
  assert.deepEqual(breakerStep(open, fail(), 10).state, open)
})

test('defaults: 5 failures in 30 s open for 5 s, doubling to at most 60 s, +20 % jitter, one probe per 30 s', () => {
  assert.deepEqual(
    [
      DEFAULT_BREAKER_LIMITS.failureThreshold,
      DEFAULT_BREAKER_LIMITS.failureWindowMs,
      openPeriodMs(DEFAULT_BREAKER_LIMITS, 1),
      openPeriodMs(DEFAULT_BREAKER_LIMITS, 2),
      openPeriodMs(DEFAULT_BREAKER_LIMITS, 10),
      DEFAULT_BREAKER_LIMITS.jitter,
      DEFAULT_BREAKER_LIMITS.probeTimeoutMs,
    ],
    [5, 30_000, 5_000, 10_000, 60_000, 0.2, 30_000],
  )
})
