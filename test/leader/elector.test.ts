/**
 * The elector driver with fake locks on one in-memory store and a manual clock: every time below is
 * virtual and asserted exactly. Timing unless stated: lease 3 s, renew deadline 2 s, retry 0.5 s, no
 * jitter.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import { formatMicroTime } from '../../src/leader/record.ts'
import { isConflict } from '../../src/transport/api-error.ts'
import {
  apiError,
  candidate,
  eventTime,
  FAST,
  FakeLeaseStore,
  FakeLock,
  heldBy,
  runFor,
  skewed,
} from './support.ts'

const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

test('a free lease (none yet) is created; onNewLeader(self) comes before onStartedLeading', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  const t0 = clock.monotonic()
  assert.deepEqual(a.events, ['new-leader:a', `started@${t0}`])
  assert.equal(a.elector.isLeader(), true)
  assert.deepEqual(
    a.lock.calls.map((c) => `${c.op}:${c.result}`),
    ['get:ok', 'create:ok'],
  )
  const r = store.record!
  assert.equal(r.holderIdentity, 'a')
  assert.equal(r.leaseDurationSeconds, 3)
  assert.equal(r.leaderTransitions, 0)
  assert.match(r.renewTime!, MICRO)
  assert.equal(r.acquireTime, r.renewTime)
  a.stop()
  await a.done
})

test('the leader renews every retry period on the fast path: one update each, no read, acquireTime kept', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  const t0 = clock.monotonic()
  const acquired = store.record!.acquireTime
  await runFor(clock, 2000)
  const renewals = a.lock.calls.slice(2)
  assert.deepEqual(
    renewals.map((c) => [c.op, c.at - t0, c.result]),
    [
      ['update', 500, 'ok'],
      ['update', 1000, 'ok'],
      ['update', 1500, 'ok'],
      ['update', 2000, 'ok'],
    ],
  )
  assert.equal(store.record!.acquireTime, acquired)
  assert.equal(store.record!.renewTime, formatMicroTime(clock.now()))
  assert.equal(a.elector.isLeader(), true)
  a.stop()
  await a.done
})

test('a lease held by a live leader is never taken; the follower reports that leader once', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  const b = candidate(store, clock, 'b')
  await runFor(clock, 30_000)
  assert.deepEqual(b.events, ['new-leader:a'])
  assert.ok(b.lock.calls.length >= 60, 'b kept trying every 0.5 s')
  assert.ok(b.lock.calls.every((c) => c.op === 'get'))
  assert.equal(b.elector.isLeader(), false)
  a.stop()
  b.stop()
  await Promise.all([a.done, b.done])
})

test('an expired lease is taken exactly leaseDurationSeconds after its last observed change; leaseTransitions + 1', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('dead', clock.now(), { leaderTransitions: 4 }))
  const b = candidate(store, clock, 'b')
  const t0 = clock.monotonic()
  await runFor(clock, 2999)
  assert.equal(b.elector.isLeader(), false, 'not before 3 s')
  await runFor(clock, 1)
  assert.equal(eventTime(b, 'started'), t0 + 3000)
  assert.equal(store.record!.holderIdentity, 'b')
  assert.equal(store.record!.leaderTransitions, 5)
  assert.equal(store.record!.acquireTime, formatMicroTime(clock.now()))
  assert.deepEqual(b.events.slice(0, 2), ['new-leader:dead', 'new-leader:b'])
  b.stop()
  await b.done
})

test('a released lease (holderIdentity "") is taken at the first attempt', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('', clock.now(), { leaseDurationSeconds: 1, leaderTransitions: 2 }))
  const b = candidate(store, clock, 'b')
  await runFor(clock, 0)
  assert.equal(b.elector.isLeader(), true)
  assert.equal(store.record!.leaderTransitions, 3)
  b.stop()
  await b.done
})

for (const [name, recordWall, ownWall] of [
  ['renewTime 30 years in the future', 30 * 365 * 86_400_000, 0],
  ['renewTime 30 years in the past', -30 * 365 * 86_400_000, 0],
  ['the follower’s own clock 1 day ahead', 0, 86_400_000],
  ['the follower’s own clock 1 day behind', 0, -86_400_000],
] as const) {
  test(`clock skew does not matter (${name}): expiry is judged on the local monotonic clock only`, async () => {
    const clock = new ManualClock()
    const store = new FakeLeaseStore()
    store.forceWrite(heldBy('dead', clock.now() + recordWall))
    const b = candidate(store, clock, 'b', { clock: skewed(clock, ownWall, 123_456) })
    const t0 = clock.monotonic()
    await runFor(clock, 2999)
    assert.equal(b.elector.isLeader(), false)
    await runFor(clock, 1)
    assert.equal(eventTime(b, 'started'), t0 + 3000)
    b.stop()
    await b.done
  })
}

test('clock skew between a live leader and a follower never lets the follower take over', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a', { clock: skewed(clock, 50 * 365 * 86_400_000) })
  await runFor(clock, 0)
  const b = candidate(store, clock, 'b', { clock: skewed(clock, -50 * 365 * 86_400_000, -9_999) })
  await runFor(clock, 20_000)
  assert.equal(a.elector.isLeader(), true)
  assert.equal(b.elector.isLeader(), false)
  a.stop()
  b.stop()
  await Promise.all([a.done, b.done])
})

test('kubernetes/kubernetes#114872: the record’s leaseDurationSeconds counts, not the follower’s configuration', async () => {
  // The record says 10 s; the follower is configured with 3 s: it waits 10 s.
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('dead', clock.now(), { leaseDurationSeconds: 10 }))
  const b = candidate(store, clock, 'b')
  const t0 = clock.monotonic()
  await runFor(clock, 9999)
  assert.equal(b.elector.isLeader(), false)
  await runFor(clock, 1)
  assert.equal(eventTime(b, 'started'), t0 + 10_000)

  // The record says 1 s; the follower is configured with 60 s: it waits 1 s.
  const store2 = new FakeLeaseStore()
  store2.forceWrite(heldBy('dead', clock.now(), { leaseDurationSeconds: 1 }))
  const c = candidate(store2, clock, 'c', { leaseDurationMs: 60_000 })
  const t1 = clock.monotonic()
  await runFor(clock, 1000)
  assert.equal(eventTime(c, 'started'), t1 + 1000)
  assert.equal(store2.record!.leaseDurationSeconds, 60, 'and then writes its own duration')
  b.stop()
  c.stop()
  await Promise.all([b.done, c.done])
})

test('an update that conflicts (someone wrote after our read) fails the attempt; the new holder is reported', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('', clock.now()))
  const b = new FakeLock(store, 'b', clock)
  let first = true
  b.intercept = (call) => {
    if (call.op !== 'get' || !first) return undefined
    first = false
    // Between our read and our write, another candidate takes the free lease.
    return { type: 'after', effect: () => store.forceWrite(heldBy('x', clock.now()), 'x') }
  }
  const seen: string[] = []
  const elector = new LeaderElector({
    ...FAST,
    lock: b,
    clock,
    random: () => 0,
    onNewLeader: (id) => seen.push(id),
  })
  const ac = new AbortController()
  let started = false
  const done = elector.run(
    {
      onStartedLeading: () => {
        started = true
      },
      onStoppedLeading() {},
    },
    ac.signal,
  )
  await runFor(clock, 0)
  assert.deepEqual(
    b.calls.map((c) => `${c.op}:${c.result}`),
    ['get:ok', 'update:conflict'],
  )
  assert.equal(started, false)
  await runFor(clock, 500)
  assert.deepEqual(seen, ['x'])
  assert.equal(store.record!.holderIdentity, 'x')
  ac.abort()
  await done
})

test('two candidates racing for a free lease: exactly one wins, the other’s write conflicts', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('', clock.now()))
  const a = candidate(store, clock, 'a')
  const b = candidate(store, clock, 'b')
  await runFor(clock, 5000)
  const leaders = [a, b].filter((c) => c.elector.isLeader())
  assert.equal(leaders.length, 1)
  const loser = leaders[0] === a ? b : a
  assert.ok(
    loser.lock.calls.some((c) => c.op === 'update' && c.result === 'conflict'),
    'the loser’s update was refused by the version check',
  )
  assert.deepEqual(loser.events, [`new-leader:${leaders[0]!.id}`])
  a.stop()
  b.stop()
  await Promise.all([a.done, b.done])
})

test('kubernetes/kubernetes#95939: a failed update keeps the cached version, so the next renewal and the release still work', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a', { releaseOnCancel: true })
  await runFor(clock, 0)
  const version = a.lock.cachedVersion
  let n = 0
  a.lock.intercept = () =>
    n++ < 2 ? { type: 'error', error: apiError(500, 'InternalError', n === 1 ? 'PUT' : 'GET') } : undefined
  await runFor(clock, 1000)
  assert.deepEqual(
    a.lock.calls.slice(2).map((c) => `${c.op}:${c.result}`),
    ['update:error', 'get:error', 'update:ok'],
  )
  assert.equal(a.lock.calls[4]!.record!.holderIdentity, 'a')
  assert.ok(a.lock.cachedVersion! > version!)
  assert.equal(a.elector.isLeader(), true)
  a.stop()
  await a.done
  assert.equal(store.record!.holderIdentity, '')
})

test('kubernetes/kubernetes#80954: the release writes a complete record: no holder, 1 s, fresh times, transitions kept', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('', clock.now(), { leaderTransitions: 7 }))
  const a = candidate(store, clock, 'a', { releaseOnCancel: true })
  await runFor(clock, 1200)
  assert.equal(store.record!.leaderTransitions, 8)
  const before = store.record!.acquireTime
  a.stop()
  await runFor(clock, 0)
  await a.done
  assert.deepEqual(store.record, {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: formatMicroTime(clock.now()),
    renewTime: formatMicroTime(clock.now()),
    leaderTransitions: 8,
  })
  assert.notEqual(store.record!.acquireTime, before)
  const t = clock.monotonic()
  assert.deepEqual(a.events.slice(-2), [`aborted@${t}:EDGEOP_ERR_ABORTED`, `stopped@${t}`])
  assert.equal(a.error, undefined, 'a clean stop resolves')
  // The next candidate takes it at its first attempt.
  const b = candidate(store, clock, 'b')
  await runFor(clock, 0)
  assert.equal(b.elector.isLeader(), true)
  assert.equal(store.record!.leaderTransitions, 9)
  b.stop()
  await b.done
})

test('without releaseOnCancel a clean stop leaves the record for others to expire', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 600)
  const record = store.record
  a.stop()
  await runFor(clock, 0)
  await a.done
  assert.equal(store.record, record)
})

for (const mode of ['hang', 'deaf'] as const) {
  test(`kubernetes/kubernetes#124588: the release is bounded by the renew deadline (a lock call that ${mode === 'hang' ? 'hangs' : 'ignores its signal'})`, async () => {
    const clock = new ManualClock()
    const store = new FakeLeaseStore()
    const a = candidate(store, clock, 'a', { releaseOnCancel: true })
    await runFor(clock, 600)
    a.lock.intercept = () => ({ type: mode })
    const stoppedAt = clock.monotonic()
    a.stop()
    await runFor(clock, 1999)
    assert.equal(a.endedAt, undefined, 'still releasing')
    await runFor(clock, 1)
    assert.equal(a.endedAt, stoppedAt + 2000)
    assert.equal(a.error, undefined)
    assert.equal(store.record!.holderIdentity, 'a', 'not released; the lease will expire')
  })
}

test('kubernetes/kubernetes#132849, kubernetes/kubernetes#137988: a release racing an in-flight renew re-reads after the 409 and releases', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a', { releaseOnCancel: true })
  await runFor(clock, 500)
  // The next renewal goes on the wire and hangs; the server will commit it late.
  let late: (() => void) | undefined
  a.lock.intercept = (call) => {
    if (call.op === 'update' && late === undefined) {
      const record = call.record!
      late = () => store.forceWrite(record, 'a (late renew)')
      return { type: 'hang' }
    }
    if (call.op === 'get' && late !== undefined) {
      const commit = late
      late = () => {}
      // The late renew commits after the release has read the lease: its write carries a stale version.
      return { type: 'after', effect: commit }
    }
    return undefined
  }
  await runFor(clock, 500)
  assert.equal(a.lock.calls.at(-1)!.op, 'update', 'a renewal is in flight')
  a.stop()
  await runFor(clock, 0)
  await a.done
  assert.deepEqual(
    a.lock.calls.slice(-5).map((c) => `${c.op}:${c.result}`),
    ['update:aborted', 'get:ok', 'update:conflict', 'get:ok', 'update:ok'],
  )
  assert.deepEqual(
    store.writes.slice(-2).map((w) => [w.by, w.record.holderIdentity]),
    [
      ['a (late renew)', 'a'],
      ['a', ''],
    ],
  )
  assert.equal(a.error, undefined)
})

test('the release waits for a renew already on the wire (even one ignoring its signal): our calls never overlap', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a', { releaseOnCancel: true })
  await runFor(clock, 500)
  let once = false
  a.lock.intercept = (call) => {
    if (call.op !== 'update' || once) return undefined
    once = true
    return { type: 'late', ms: 300 }
  }
  await runFor(clock, 500)
  const renew = a.lock.calls.at(-1)!
  assert.equal(renew.endAt, undefined, 'a renewal is in flight')
  a.stop()
  await runFor(clock, 1000)
  await a.done
  const calls = a.lock.calls
  for (let i = 1; i < calls.length; i++) {
    assert.ok(
      calls[i]!.at >= calls[i - 1]!.endAt!,
      `call ${i} (${calls[i]!.op}) started before call ${i - 1} ended`,
    )
  }
  assert.deepEqual(
    calls.slice(-3).map((c) => `${c.op}:${c.result}`),
    ['update:ok', 'get:ok', 'update:ok'],
  )
  assert.equal(calls.at(-2)!.at, renew.at + 300, 'the release read the lease once the renewal had answered')
  assert.equal(store.record!.holderIdentity, '')
})

test('a deposed leader’s release (after losing) finds the new holder and writes nothing; "leader work stopped" is logged before', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const lines: { at: number; msg: string }[] = []
  const log = (msg: string): void => {
    lines.push({ at: clock.monotonic(), msg })
  }
  const logger = { debug: log, info: log, warn: log, error: log, child: () => logger }
  const a = candidate(store, clock, 'a', { releaseOnCancel: true, logger })
  await runFor(clock, 0)
  const b = candidate(store, clock, 'b')
  await runFor(clock, 1000)
  // a is cut off; once it has lost, its release's read only gets through 1.9 s later, after b took over.
  let lost = false
  a.leaderSignal!.addEventListener('abort', () => {
    lost = true
  })
  a.lock.intercept = (call) => (lost && call.op === 'get' ? { type: 'late', ms: 1900 } : { type: 'hang' })
  await runFor(clock, 6000)
  assert.ok(isEdgeopError(a.error, 'EDGEOP_ERR_LEADER'))
  const release = a.lock.calls.at(-1)!
  assert.equal(release.op, 'get')
  assert.equal(release.result, 'ok')
  assert.ok(release.endAt! > eventTime(b, 'started')!, 'the release read the lease after b took over')
  assert.equal(store.record!.holderIdentity, 'b', 'b keeps the lease')
  assert.equal(b.elector.isLeader(), true)
  // The soak's single-leader check ends a leadership at this line, not at the slow release after it.
  const stoppedAt = lines.findIndex((l) => l.msg === 'leader work stopped')
  assert.ok(stoppedAt >= 0, JSON.stringify(lines))
  assert.equal(
    lines[stoppedAt]!.at,
    eventTime(a, 'aborted'),
    'no callback work: it stops when leadership is lost',
  )
  assert.ok(lines[stoppedAt]!.at < eventTime(b, 'started')!, 'before the successor starts')
  assert.ok(lines.findIndex((l) => /holder/.test(l.msg)) > stoppedAt, 'the release comes after')
  b.stop()
  await b.done
})

test('the leader signal aborts exactly at the renew deadline, strictly before a follower may take over', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  const b = candidate(store, clock, 'b')
  await runFor(clock, 1100)
  // a is cut off from the store: every call hangs until its signal aborts.
  a.lock.intercept = () => ({ type: 'hang' })
  await runFor(clock, 10_000)
  const lastWrite = a.lock.calls.filter((c) => c.op !== 'get' && c.result === 'ok').at(-1)!
  const abortedAt = eventTime(a, 'aborted')!
  assert.equal(abortedAt, lastWrite.at + 2000, 'renewDeadline after the start of the last successful write')
  assert.ok(a.events.some((e) => e.startsWith('aborted@') && e.endsWith(':EDGEOP_ERR_LEADER')))
  const takeover = eventTime(b, 'started')!
  assert.ok(takeover >= lastWrite.at + 3000, `b took over ${takeover - lastWrite.at} ms after a's last write`)
  assert.ok(abortedAt < takeover, `a stopped ${takeover - abortedAt} ms before b started`)
  assert.ok(isEdgeopError(a.error, 'EDGEOP_ERR_LEADER'), 'run rejects with EDGEOP_ERR_LEADER')
  assert.equal(eventTime(a, 'stopped'), abortedAt, 'onStoppedLeading right after (no release configured)')
  b.stop()
  await b.done
})

test('the deadline counts from the start of the last successful write, not from its (slow) answer', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  // Every renewal is committed at once but answered 300 ms later; then the store goes silent.
  a.lock.intercept = () => ({ type: 'slow', ms: 300 })
  await runFor(clock, 1700)
  a.lock.intercept = () => ({ type: 'hang' })
  await runFor(clock, 5000)
  const lastWrite = a.lock.calls.filter((c) => c.op === 'update' && c.result === 'ok').at(-1)!
  assert.equal(eventTime(a, 'aborted'), lastWrite.at + 2000)
})

test('a leader that finds another holder in the record steps down at once, before its deadline', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 700)
  store.forceWrite(heldBy('usurper', clock.now()))
  await runFor(clock, 300)
  const t = clock.monotonic()
  assert.equal(eventTime(a, 'aborted'), t)
  assert.match(String((a.error as Error).message), /held by usurper/)
  assert.ok(a.lock.calls.slice(-2).every((c) => c.op !== 'update' || c.result === 'conflict'))
  assert.ok(a.events.includes('new-leader:usurper'))
})

test('acquire attempts are jittered in [retry, retry × (1 + jitter)) (client-go JitterUntil)', async () => {
  for (const [random, gap] of [
    [0, 500],
    [0.5, 800],
    [0.999, 1099.4],
  ] as const) {
    const clock = new ManualClock()
    const store = new FakeLeaseStore()
    store.forceWrite(heldBy('other', clock.now(), { leaseDurationSeconds: 3600 }))
    const b = candidate(store, clock, 'b', { random: () => random })
    await runFor(clock, 5000)
    const times = b.lock.calls.map((c) => c.at)
    for (let i = 1; i < times.length; i++) assert.ok(Math.abs(times[i]! - times[i - 1]! - gap) < 1e-3)
    b.stop()
    await b.done
  }
})

test('onStoppedLeading is called even when this process never led', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('other', clock.now(), { leaseDurationSeconds: 3600 }))
  const b = candidate(store, clock, 'b')
  await runFor(clock, 1000)
  b.stop()
  await runFor(clock, 0)
  await b.done
  assert.deepEqual(b.events, ['new-leader:other', `stopped@${clock.monotonic()}`])
  assert.equal(b.error, undefined)
})

test('check(): healthy unless it believes it leads past renewDeadline + tolerance (a wedged leader)', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  store.forceWrite(heldBy('other', clock.now(), { leaseDurationSeconds: 3600 }))
  const b = candidate(store, clock, 'b')
  await runFor(clock, 0)
  clock.jump(100_000)
  assert.equal(b.elector.check(), undefined, 'a follower is always healthy')
  b.stop()
  await runFor(clock, 0)

  const store2 = new FakeLeaseStore()
  const a = candidate(store2, clock, 'a')
  await runFor(clock, 0)
  assert.equal(a.elector.healthy(), true)
  await runFor(clock, 5000)
  assert.equal(a.elector.healthy(), true, 'renewing')
  const lastWrite = a.lock.calls.at(-1)!.at
  // The event loop is wedged: time passes but no timer fires.
  clock.jump(lastWrite + 2000 + 1000 - clock.monotonic())
  assert.equal(a.elector.healthy(1000), true, 'exactly at deadline + tolerance')
  clock.jump(1)
  const err = a.elector.check(1000)
  assert.ok(isEdgeopError(err, 'EDGEOP_ERR_LEADER'))
  assert.match(err.message, /last renewal started 3001 ms ago/)
  assert.equal(a.elector.healthy(), true, 'within the default 20 s tolerance')
  clock.jump(20_000)
  assert.equal(a.elector.healthy(), false)
  await runFor(clock, 0)
  assert.equal(a.elector.isLeader(), false, 'once timers run, the deadline steps it down')
  assert.equal(a.elector.healthy(), true)
})

test('construction and run() validate: identity, callbacks, single use, timing', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  assert.throws(
    () => new LeaderElector({ lock: new FakeLock(store, '', clock) }),
    (e: unknown) => isEdgeopError(e, 'EDGEOP_ERR_INVALID') && /identity is empty/.test((e as Error).message),
  )
  assert.throws(
    () => new LeaderElector({ lock: new FakeLock(store, 'a', clock), renewDeadlineMs: 20_000 }),
    /leaseDurationMs \(15000\) must be greater than renewDeadlineMs \(20000\)/,
  )
  assert.throws(
    () => new LeaderElector({ ...FAST, lock: new FakeLock(store, 'a', clock), stopGraceMs: -1 }),
    /stopGraceMs must be a finite number ≥ 0, got -1/,
  )
  const e = new LeaderElector({ ...FAST, lock: new FakeLock(store, 'a', clock), clock })
  assert.equal(e.stopGraceMs, 1000, 'default grace: lease − renew deadline')
  await assert.rejects(
    e.run({ onStoppedLeading() {} } as never),
    (err: unknown) =>
      isEdgeopError(err, 'EDGEOP_ERR_INVALID') && /onStartedLeading is required/.test((err as Error).message),
  )
  await assert.rejects(e.run({ onStartedLeading() {} } as never), /onStoppedLeading is required/)
  const ac = new AbortController()
  ac.abort()
  await e.run({ onStartedLeading() {}, onStoppedLeading() {} }, ac.signal)
  await assert.rejects(e.run({ onStartedLeading() {}, onStoppedLeading() {} }), /already run/)
})

test('a conflict is an ApiError the lock surfaces as isConflict', () => {
  assert.equal(isConflict(apiError(409, 'Conflict', 'PUT')), true)
})

test('a renewal that hangs on one dead connection is cut short so the next attempt still renews within the deadline', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  const a = candidate(store, clock, 'a')
  await runFor(clock, 0)
  const t0 = clock.monotonic()
  // The first renewal goes out on a connection that died without a reset: it never answers.
  let hung = 0
  a.lock.intercept = (call) => (call.op !== 'get' && hung++ === 0 ? { type: 'hang' } : undefined)
  await runFor(clock, 3000)
  assert.equal(a.elector.isLeader(), true, 'still the leader')
  assert.equal(eventTime(a, 'aborted'), undefined)
  const renewals = a.lock.calls.slice(2).filter((c) => c.op === 'update')
  // Renew deadline 2 s: the hung attempt at 500 is given 2000 / 3 = 666 ms, the next one comes 500 ms later.
  assert.deepEqual(
    renewals.slice(0, 2).map((c) => c.at - t0),
    [500, 1666],
  )
  assert.equal(renewals[1]!.result, 'ok')
  a.stop()
  await a.done
})

test('after one cut-short renewal, the next attempt (a new connection, slow on a long link) gets the rest of the deadline', async () => {
  const clock = new ManualClock()
  const store = new FakeLeaseStore()
  // Renew deadline 7 s, retry 1 s (the soak's timing): the first attempt is cut at 2,333 ms.
  const a = candidate(store, clock, 'a', {
    leaseDurationMs: 10_000,
    renewDeadlineMs: 7000,
    retryPeriodMs: 1000,
  })
  await runFor(clock, 0)
  const t0 = clock.monotonic()
  let n = 0
  // The first renewal hangs; the second needs 2.5 s (a TCP and TLS handshake and the request over 800 ms RTT).
  a.lock.intercept = (call) =>
    call.op === 'get'
      ? undefined
      : n++ === 0
        ? { type: 'hang' }
        : n === 2
          ? { type: 'slow', ms: 2500 }
          : undefined
  await runFor(clock, 9000)
  assert.equal(eventTime(a, 'aborted'), undefined, 'still the leader')
  const writes = a.lock.calls.slice(2).filter((c) => c.op === 'update')
  assert.deepEqual(
    writes.slice(0, 2).map((c) => [c.at - t0, c.result]),
    [
      [1000, 'aborted'],
      [4333, 'ok'],
    ],
  )
  a.stop()
  await a.done
})
