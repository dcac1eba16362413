/**
 * runWhileLeading on the manual clock: when fn runs, when its signal aborts, what the promise settles
 * to, and that the lease is released only after fn has stopped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock, sleep } from '../../src/core/clock.ts'
import { EdgeopError, isEdgeopError } from '../../src/core/errors.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import type { LeaderElectorOptions } from '../../src/leader/options.ts'
import { runWhileLeading } from '../../src/leader/run-while-leading.ts'
import { FAST, FakeLeaseStore, FakeLock, heldBy, runFor } from './support.ts'

function setup(options: Partial<LeaderElectorOptions> = {}) {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const lock = new FakeLock(store, 'a', clock)
  const elector = new LeaderElector({
    ...FAST,
    lock,
    clock,
    random: () => 0,
    releaseOnCancel: true,
    ...options,
  })
  const log: string[] = []
  const t = () => clock.monotonic() - 1_700_000_000_000
  return { clock, store, lock, elector, log, t }
}

/** Settles `p` into a value the test can inspect without unhandled rejections. */
function track<T>(p: Promise<T>) {
  const r: { done: boolean; value?: T; error?: unknown } = { done: false }
  p.then(
    (value) => Object.assign(r, { done: true, value }),
    (error: unknown) => Object.assign(r, { done: true, error }),
  )
  return r
}

test('fn runs only once leading; a shutdown aborts its signal, waits for it, releases, and resolves its value', async () => {
  const { clock, store, lock, elector, log, t } = setup()
  store.forceWrite(heldBy('other', clock.now()))
  const shutdown = new AbortController()
  const result = track(
    runWhileLeading(
      elector,
      async (signal) => {
        log.push(`start@${t()}`)
        await new Promise((r) => signal.addEventListener('abort', r))
        log.push(`abort@${t()}:${(signal.reason as EdgeopError).code}`)
        await sleep(300, clock) // draining takes a while
        log.push(`end@${t()}`)
        return 42
      },
      shutdown.signal,
    ),
  )
  await runFor(clock, 2999)
  assert.deepEqual(log, [], 'not while another holds the lease')
  await runFor(clock, 1)
  assert.deepEqual(log, ['start@3000'])
  await runFor(clock, 1000)
  shutdown.abort()
  await runFor(clock, 299)
  assert.equal(store.record!.holderIdentity, 'a', 'no release while fn still runs')
  await runFor(clock, 1)
  assert.deepEqual(log, ['start@3000', 'abort@4000:EDGEOP_ERR_ABORTED', 'end@4300'])
  assert.deepEqual(result, { done: true, value: 42 })
  assert.equal(store.record!.holderIdentity, '')
  const release = lock.calls.at(-1)!
  assert.equal(release.op, 'update')
  assert.equal(release.at - 1_700_000_000_000, 4300, 'released right after fn ended')
})

test('a lost lease aborts fn’s signal at the renew deadline and rejects with EDGEOP_ERR_LEADER', async () => {
  const { clock, store, lock, elector, log, t } = setup({ releaseOnCancel: false })
  const result = track(
    runWhileLeading(elector, async (signal) => {
      log.push(`start@${t()}`)
      await new Promise((r) => signal.addEventListener('abort', r))
      log.push(`abort@${t()}:${(signal.reason as EdgeopError).code}`)
      return 'unused'
    }),
  )
  await runFor(clock, 1000)
  lock.intercept = () => ({
    type: 'error',
    error: new EdgeopError('EDGEOP_ERR_NETWORK', 'unreachable', { retryable: true }),
  })
  await runFor(clock, 5000)
  // Last successful write at 1000 (fast-path renewal), deadline 2 s later.
  assert.deepEqual(log, ['start@0', 'abort@3000:EDGEOP_ERR_LEADER'])
  assert.equal(result.done, true)
  assert.ok(isEdgeopError(result.error, 'EDGEOP_ERR_LEADER'))
  assert.match(
    (result.error as Error).message,
    /leader election lost: no successful renewal within the renew deadline \(2000 ms\)/,
  )
  assert.equal(store.record!.holderIdentity, 'a', 'the record is left to expire')
})

test('after a loss, with releaseOnCancel, the lease is released once fn has stopped (if the apiserver answers)', async () => {
  const { clock, store, lock, elector } = setup()
  const result = track(
    runWhileLeading(elector, (signal) => new Promise((r) => signal.addEventListener('abort', r))),
  )
  await runFor(clock, 1000)
  // Renewals time out (hang) but a fresh read and write after giving up succeed.
  lock.intercept = (call) =>
    call.op === 'update' && call.record!.holderIdentity === 'a' ? { type: 'hang' } : undefined
  await runFor(clock, 3000)
  assert.ok(isEdgeopError(result.error, 'EDGEOP_ERR_LEADER'))
  assert.equal(store.record!.holderIdentity, '')
})

test('fn returning on its own ends leadership, releases, and resolves its value', async () => {
  const { clock, store, elector } = setup()
  const result = track(
    runWhileLeading(elector, async () => {
      await sleep(700, clock)
      return 'done'
    }),
  )
  await runFor(clock, 700)
  assert.deepEqual(result, { done: true, value: 'done' })
  assert.equal(store.record!.holderIdentity, '')
  assert.equal(elector.isLeader(), false)
})

test('fn throwing ends leadership, releases, and rejects with its error', async () => {
  const { clock, store, elector } = setup()
  const boom = new Error('reconcile exploded')
  const result = track(
    runWhileLeading(elector, async () => {
      await sleep(100, clock)
      throw boom
    }),
  )
  await runFor(clock, 100)
  assert.equal(result.error, boom)
  assert.equal(store.record!.holderIdentity, '')
})

test('fn rejecting with the abort on shutdown counts as a clean stop', async () => {
  const { clock, elector } = setup()
  const shutdown = new AbortController()
  const result = track(
    runWhileLeading(
      elector,
      (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      shutdown.signal,
    ),
  )
  await runFor(clock, 100)
  shutdown.abort()
  await runFor(clock, 0)
  assert.deepEqual(result, { done: true, value: undefined })
})

test('fn that ignores its signal: after stopGraceMs the lease is not released (still safe), and the promise settles', async () => {
  const { clock, store, elector } = setup()
  const shutdown = new AbortController()
  const result = track(runWhileLeading(elector, () => new Promise(() => {}), shutdown.signal))
  await runFor(clock, 100)
  shutdown.abort()
  await runFor(clock, 999)
  assert.equal(result.done, false)
  await runFor(clock, 1)
  assert.deepEqual(result, { done: true, value: undefined })
  assert.equal(store.record!.holderIdentity, 'a', 'never released while work may still run')
})

test('a signal aborted before leadership: fn never runs, the promise resolves undefined', async () => {
  const { clock, store, elector } = setup()
  store.forceWrite(heldBy('other', clock.now(), { leaseDurationSeconds: 3600 }))
  const shutdown = new AbortController()
  let ran = false
  const result = track(
    runWhileLeading(
      elector,
      () => {
        ran = true
      },
      shutdown.signal,
    ),
  )
  await runFor(clock, 2000)
  shutdown.abort()
  await runFor(clock, 0)
  assert.deepEqual(result, { done: true, value: undefined })
  assert.equal(ran, false)
})
