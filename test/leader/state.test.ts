/**
 * The pure acquire-or-renew machine: no clock, no I/O — every input and output is explicit.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatMicroTime, type LeaderElectionRecord } from '../../src/leader/record.ts'
import {
  begin,
  type ElectionState,
  initialState,
  isLeaseValid,
  observe,
  releaseRecord,
  step,
  type Transition,
} from '../../src/leader/state.ts'

const WALL = Date.UTC(2026, 10, 29, 10, 0, 0)
const STAMP = formatMicroTime(WALL)
const rec = (holder: string, extra: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: '2020-01-01T00:00:00.000000Z',
  renewTime: '2020-01-01T00:00:05.000000Z',
  leaderTransitions: 3,
  ...extra,
})
const me = (): ElectionState => initialState('me', 15)

/** Runs begin + a read of `record` at `now`. */
function readAt(state: ElectionState, record: LeaderElectionRecord | undefined, now: number): Transition {
  const t = begin(state, now, WALL)
  assert.deepEqual(t.command, { op: 'get' })
  return step(t.state, { type: 'read', record, now })
}

test('no lease yet: create a record naming us with transitions 0', () => {
  const t = readAt(me(), undefined, 100)
  assert.deepEqual(t.command, {
    op: 'create',
    record: {
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: STAMP,
      renewTime: STAMP,
      leaderTransitions: 0,
    },
  })
  const done = step(t.state, { type: 'written', now: 130 })
  assert.deepEqual(done.command, { op: 'done', outcome: { acquired: true, path: 'slow', transition: true } })
  assert.equal(done.state.renewedAt, 100, 'renewedAt = when the write started, not when it returned')
  assert.equal(done.state.observed?.at, 130)
})

test('held by another and unexpired: fail with the holder; nothing written', () => {
  const t = readAt(me(), rec('other'), 1000)
  assert.deepEqual(t.command, { op: 'done', outcome: { acquired: false, reason: 'held', holder: 'other' } })
  assert.equal(t.state.observed?.at, 1000)
})

test('expiry is observedAt + the record’s leaseDurationSeconds; the same record read again does not refresh it', () => {
  let s = readAt(me(), rec('other', { leaseDurationSeconds: 3 }), 1000).state
  s = readAt(s, rec('other', { leaseDurationSeconds: 3 }), 3999).state
  assert.equal(s.observed?.at, 1000, 'unchanged record: the observation time stays')
  const t = readAt(s, rec('other', { leaseDurationSeconds: 3 }), 4000)
  assert.equal(t.command.op, 'update', 'expired at exactly 1000 + 3000')
  assert.deepEqual((t.command as { record: LeaderElectionRecord }).record, {
    holderIdentity: 'me',
    leaseDurationSeconds: 15,
    acquireTime: STAMP,
    renewTime: STAMP,
    leaderTransitions: 4,
  })
})

test('any change of the record (even only renewTime) restarts the wait', () => {
  let s = readAt(me(), rec('other', { leaseDurationSeconds: 3 }), 1000).state
  s = readAt(
    s,
    rec('other', { leaseDurationSeconds: 3, renewTime: '1999-01-01T00:00:00.000000Z' }),
    3500,
  ).state
  assert.equal(s.observed?.at, 3500)
  assert.equal(
    readAt(s, rec('other', { leaseDurationSeconds: 3, renewTime: '1999-01-01T00:00:00.000000Z' }), 6499)
      .command.op,
    'done',
  )
  assert.equal(
    readAt(s, rec('other', { leaseDurationSeconds: 3, renewTime: '1999-01-01T00:00:00.000000Z' }), 6500)
      .command.op,
    'update',
  )
})

test('record timestamps never matter: renewTime in 2999 or in 1970 gives the same decisions', () => {
  for (const renewTime of ['2999-12-31T23:59:59.999999Z', '1970-01-01T00:00:00.000000Z', undefined]) {
    const s = readAt(me(), rec('other', { leaseDurationSeconds: 3, renewTime }), 0).state
    assert.equal(readAt(s, rec('other', { leaseDurationSeconds: 3, renewTime }), 2999).command.op, 'done')
    assert.equal(readAt(s, rec('other', { leaseDurationSeconds: 3, renewTime }), 3000).command.op, 'update')
  }
})

test('kubernetes/kubernetes#114872: our own leaseDurationSeconds (here 1) is not used to judge another holder’s record (here 20)', () => {
  const s = readAt(initialState('me', 1), rec('other', { leaseDurationSeconds: 20 }), 0).state
  assert.equal(readAt(s, rec('other', { leaseDurationSeconds: 20 }), 19_999).command.op, 'done')
  assert.equal(readAt(s, rec('other', { leaseDurationSeconds: 20 }), 20_000).command.op, 'update')
})

test('a free record (holderIdentity "") is taken at once, even if it just changed', () => {
  const t = readAt(me(), rec('', { leaseDurationSeconds: 1 }), 0)
  assert.equal(t.command.op, 'update')
  assert.equal((t.command as { record: LeaderElectionRecord }).record.leaderTransitions, 4)
})

test('our own record (e.g. after a restart with the same identity) is renewed, keeping acquireTime and transitions', () => {
  const t = readAt(me(), rec('me'), 0)
  assert.deepEqual((t.command as { record: LeaderElectionRecord }).record, {
    holderIdentity: 'me',
    leaseDurationSeconds: 15,
    acquireTime: '2020-01-01T00:00:00.000000Z',
    renewTime: STAMP,
    leaderTransitions: 3,
  })
  const done = step(t.state, { type: 'written', now: 5 })
  assert.deepEqual(done.command, { op: 'done', outcome: { acquired: true, path: 'slow', transition: false } })
})

test('the holder with a valid lease renews on the fast path; a failed fast path falls back to a read', () => {
  const held = step(readAt(me(), undefined, 0).state, { type: 'written', now: 10 }).state
  const fast = begin(held, 500, WALL + 500)
  assert.equal(fast.command.op, 'update')
  assert.equal(
    (fast.command as { record: LeaderElectionRecord }).record.renewTime,
    formatMicroTime(WALL + 500),
  )
  assert.equal((fast.command as { record: LeaderElectionRecord }).record.acquireTime, STAMP)
  const ok = step(fast.state, { type: 'written', now: 520 })
  assert.deepEqual(ok.command, { op: 'done', outcome: { acquired: true, path: 'fast', transition: false } })
  assert.equal(ok.state.renewedAt, 500)

  const conflict = step(fast.state, { type: 'failed', error: new Error('409'), now: 520 })
  assert.deepEqual(conflict.command, { op: 'get' })
})

test('a holder whose own lease has expired locally reads before writing (no fast path)', () => {
  const held = step(readAt(me(), undefined, 0).state, { type: 'written', now: 0 }).state
  assert.equal(begin(held, 14_999, WALL).command.op, 'update')
  assert.equal(begin(held, 15_000, WALL).command.op, 'get')
})

test('failures end the attempt with the last observed holder', () => {
  const err = new Error('boom')
  const s = readAt(me(), rec('other', { leaseDurationSeconds: 1 }), 0).state
  const t = begin(s, 5000, WALL)
  assert.deepEqual(step(t.state, { type: 'failed', error: err, now: 5001 }).command, {
    op: 'done',
    outcome: { acquired: false, reason: 'failed', holder: 'other', error: err },
  })
  const w = readAt(s, rec('other', { leaseDurationSeconds: 1 }), 5000)
  assert.equal(w.command.op, 'update')
  const lost = step(w.state, { type: 'failed', error: err, now: 5002 })
  assert.equal(lost.command.op, 'done')
  assert.equal(lost.state.renewedAt, undefined)
})

test('isLeaseValid, observe and releaseRecord', () => {
  assert.equal(isLeaseValid(undefined, 0), false)
  const s = observe(me(), rec('x', { leaseDurationSeconds: 2 }), 100)
  assert.equal(isLeaseValid(s.observed, 2099), true)
  assert.equal(isLeaseValid(s.observed, 2100), false)
  assert.equal(observe(s, undefined, 500), s)
  assert.deepEqual(releaseRecord(rec('me', { leaderTransitions: 9 }), WALL), {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: STAMP,
    renewTime: STAMP,
    leaderTransitions: 9,
  })
})

test('step() without begin() is a programming error', () => {
  assert.throws(() => step(me(), { type: 'written', now: 0 }), /without begin/)
})
