/**
 * The list/watch state machine, one transition per test. Regression tests are named
 * after the upstream bug whose rule they guard (controller-semantics §8).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeObject } from '../../src/core/types.ts'
import type { FailureInfo, Input } from '../../src/watch/events.ts'
import { initialState, type Step, step, type WatchingState, type WatchState } from '../../src/watch/state.ts'

const obj = (name: string, rv: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv, ...extra },
})
const fail = (f: Partial<FailureInfo> = {}): FailureInfo => ({
  expired: false,
  tooLargeRv: false,
  throttledOrRefused: false,
  error: new Error('x'),
  ...f,
})
const status = (code: number, extra: object = {}) =>
  ({ kind: 'Status', code, ...extra }) as unknown as KubeObject

/** Feeds inputs in order; returns every step. */
function run(s: WatchState, ...inputs: Input[]): Step<KubeObject>[] {
  const out: Step<KubeObject>[] = []
  let cur = s
  for (const i of inputs) {
    const r = step(cur, i)
    out.push(r)
    cur = r.state
  }
  return out
}
const last = (steps: Step<KubeObject>[]) => steps[steps.length - 1]!
const listMode = () => initialState({ streaming: 'off' })
/** A synced, watching state at RV 100. */
function watching(): WatchingState {
  const s = last(
    run(
      listMode(),
      { type: 'start' },
      { type: 'list-page', items: [obj('a', '90')], resourceVersion: '100' },
      { type: 'watch-opened' },
    ),
  ).state
  assert.equal(s.phase, 'watching')
  return s as WatchingState
}

test('first list: RV "0" (served from the watch cache), page size 500', () => {
  assert.deepEqual(step(listMode(), { type: 'start' }).next, {
    op: 'list',
    request: { resourceVersion: '0', limit: 500 },
  })
})

test('a listed page set becomes one replace, then a watch from the list RV with bookmarks', () => {
  const steps = run(
    listMode(),
    { type: 'start' },
    { type: 'list-page', items: [obj('a', '1')], resourceVersion: '100', continue: 'c1' },
    { type: 'list-page', items: [obj('b', '2')], resourceVersion: '999' },
  )
  assert.deepEqual(
    steps[1]!.next,
    { op: 'list', request: { continue: 'c1', limit: 500 } },
    'continued page drops RV (kubernetes/kubernetes#85221), keeps limit',
  )
  const done = steps[2]!
  assert.deepEqual(
    done.emit,
    [{ type: 'replace', objects: [obj('a', '1'), obj('b', '2')], resourceVersion: '100' }],
    'RV of the first page',
  )
  assert.deepEqual(done.next, { op: 'watch', request: { resourceVersion: '100', allowWatchBookmarks: true } })
  assert.equal(done.state.synced, true)
})

test('kubernetes/kubernetes#83520: a relist after sync asks "not older than" the last RV, unpaginated', () => {
  const s = { ...watching(), lastSyncRV: '150' }
  const r = run(s, { type: 'stream-ended', durationMs: 5000, events: 3, failure: fail() }, { type: 'resume' })
  assert.deepEqual(last(r).next, { op: 'list', request: { resourceVersion: '150' } })
})

test('kubernetes/kubernetes#83520: 410 on the first list page relists from "" at once, without backoff', () => {
  const s = { ...watching(), lastSyncRV: '150' }
  const r = run(
    s,
    { type: 'stream-ended', durationMs: 5000, events: 1, failure: fail() },
    { type: 'resume' },
    { type: 'list-failed', failure: fail({ expired: true }) },
  )
  assert.deepEqual(last(r).next, { op: 'list', request: { limit: 500 } })
  assert.equal(last(r).state.rvUnavailable, true)
})

test('kubernetes/kubernetes#92537: "too large resource version" on a list relists from "" at once; a second failure backs off', () => {
  const s = { ...watching(), lastSyncRV: '150' }
  const r = run(
    s,
    { type: 'stream-ended', durationMs: 5000, events: 1, failure: fail() },
    { type: 'resume' },
    { type: 'list-failed', failure: fail({ tooLargeRv: true }) },
    { type: 'list-failed', failure: fail({ tooLargeRv: true }) },
  )
  assert.deepEqual(r[2]!.next, { op: 'list', request: { limit: 500 } })
  assert.equal(r[3]!.next.op, 'wait')
})

test('pager: an expired continue token on page 2 retries once as one unpaginated list at the original RV', () => {
  const r = run(
    listMode(),
    { type: 'start' },
    { type: 'list-page', items: [obj('a', '1')], resourceVersion: '100', continue: 'c1' },
    { type: 'list-failed', failure: fail({ expired: true }) },
    { type: 'list-page', items: [obj('a', '1'), obj('b', '3')], resourceVersion: '120' },
  )
  assert.deepEqual(r[2]!.next, { op: 'list', request: { resourceVersion: '0' } })
  assert.deepEqual(
    r[3]!.emit,
    [{ type: 'replace', objects: [obj('a', '1'), obj('b', '3')], resourceVersion: '120' }],
    'partial pages are discarded',
  )
})

test('an RV "0" list that came back paginated keeps paginating later relists (watch cache off)', () => {
  const r = run(
    listMode(),
    { type: 'start' },
    { type: 'list-page', items: [], resourceVersion: '100', continue: 'c' },
    { type: 'list-page', items: [], resourceVersion: '100' },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ERROR', object: status(410) } },
    { type: 'resume' },
  )
  assert.deepEqual(last(r).next, { op: 'list', request: { resourceVersion: '100', limit: 500 } })
})

test('events are emitted and advance the resume RV; bookmarks advance it and emit nothing', () => {
  const r = run(
    watching(),
    { type: 'event', event: { type: 'ADDED', object: obj('b', '101') } },
    { type: 'event', event: { type: 'MODIFIED', object: obj('b', '102') } },
    { type: 'event', event: { type: 'DELETED', object: obj('a', '103') } },
    { type: 'event', event: { type: 'BOOKMARK', object: obj('', '150') } },
  )
  assert.deepEqual(
    r.flatMap((x) => x.emit.map((e) => e.type)),
    ['added', 'modified', 'deleted'],
  )
  assert.deepEqual(
    r.map((x) => x.state.lastSyncRV),
    ['101', '102', '103', '150'],
  )
  assert.ok(r.every((x) => x.next.op === 'read'))
})

test('a clean close re-watches at once from the last RV: no relist, no wait', () => {
  const r = run(
    watching(),
    { type: 'event', event: { type: 'BOOKMARK', object: obj('', '140') } },
    { type: 'stream-ended', durationMs: 300_000, events: 1 },
  )
  assert.deepEqual(last(r).next, {
    op: 'watch',
    request: { resourceVersion: '140', allowWatchBookmarks: true },
  })
  assert.deepEqual(last(r).emit, [])
})

test('a watch that ends within 1 s with no event backs off, then relists', () => {
  const r = run(watching(), { type: 'stream-ended', durationMs: 200, events: 0 }, { type: 'resume' })
  assert.deepEqual(r[0]!.next, { op: 'wait', reason: 'very-short-watch' })
  assert.deepEqual(r[1]!.next, { op: 'list', request: { resourceVersion: '100' } })
})

test('ERROR 410 on the watch: back off, relist from the last RV (not "")', () => {
  const r = run(
    watching(),
    { type: 'event', event: { type: 'ERROR', object: status(410, { reason: 'Expired' }) } },
    { type: 'resume' },
  )
  assert.deepEqual(r[0]!.next, { op: 'wait', reason: 'watch-failed' })
  assert.deepEqual(r[1]!.next, { op: 'list', request: { resourceVersion: '100' } })
})

test('ERROR 429 with retryAfterSeconds: wait at least that long, then re-watch without relisting', () => {
  const r = run(
    watching(),
    { type: 'event', event: { type: 'ERROR', object: status(429, { details: { retryAfterSeconds: 7 } }) } },
    { type: 'resume' },
  )
  assert.deepEqual(r[0]!.next, { op: 'wait', reason: 'throttled', minMs: 7000 })
  assert.deepEqual(r[1]!.next, {
    op: 'watch',
    request: { resourceVersion: '100', allowWatchBookmarks: true },
  })
})

test('watch start: 429 or connection refused → wait and re-watch; any other failure → wait and relist', () => {
  const opening = last(
    run(listMode(), { type: 'start' }, { type: 'list-page', items: [], resourceVersion: '100' }),
  ).state
  const busy = run(
    opening,
    { type: 'watch-start-failed', failure: fail({ throttledOrRefused: true, retryAfterSeconds: 2 }) },
    { type: 'resume' },
  )
  assert.deepEqual(busy[0]!.next, { op: 'wait', reason: 'watch-start-failed', minMs: 2000 })
  assert.equal(busy[1]!.next.op, 'watch')
  const broken = run(opening, { type: 'watch-start-failed', failure: fail() }, { type: 'resume' })
  assert.deepEqual(broken[1]!.next, { op: 'list', request: { resourceVersion: '100' } })
})

test('a decode failure mid-stream backs off and relists', () => {
  const r = run(
    watching(),
    { type: 'stream-ended', durationMs: 9000, events: 4, failure: fail() },
    { type: 'resume' },
  )
  assert.equal(r[0]!.next.op, 'wait')
  assert.equal(r[1]!.next.op, 'list')
})

test('kubernetes/kubernetes#136583: synthetic ADDEDs of a watch from "" do not move the resume RV; the first bookmark does', () => {
  const s: WatchState = { ...watching(), lastSyncRV: '', syntheticAdds: true }
  const r = run(
    s,
    { type: 'event', event: { type: 'ADDED', object: obj('x', '9') } },
    { type: 'event', event: { type: 'ADDED', object: obj('y', '5') } },
    { type: 'stream-ended', durationMs: 5000, events: 2 },
  )
  assert.equal(r[1]!.state.lastSyncRV, '', 'still the pre-watch value')
  const afterBookmark = step(
    { ...r[1]!.state },
    { type: 'event', event: { type: 'BOOKMARK', object: obj('', '12') } },
  )
  assert.equal(afterBookmark.state.lastSyncRV, '12')
  const afterModified = step(
    { ...r[0]!.state },
    { type: 'event', event: { type: 'MODIFIED', object: obj('x', '11') } },
  )
  assert.equal(afterModified.state.lastSyncRV, '11')
})

test('failure count grows across failures and resets on success', () => {
  const r = run(
    listMode(),
    { type: 'start' },
    { type: 'list-failed', failure: fail() },
    { type: 'resume' },
    { type: 'list-failed', failure: fail() },
    { type: 'resume' },
    { type: 'list-page', items: [], resourceVersion: '5' },
  )
  assert.deepEqual(
    r.map((x) => x.state.failures),
    [0, 1, 1, 2, 2, 0],
  )
})

test('streaming list: first request is a consistent sendInitialEvents watch; ADDEDs are buffered, not emitted', () => {
  const s = initialState({})
  const r = run(
    s,
    { type: 'start' },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ADDED', object: obj('a', '50') } },
    { type: 'event', event: { type: 'ADDED', object: obj('b', '40') } },
    {
      type: 'event',
      event: {
        type: 'BOOKMARK',
        object: obj('', '60', { annotations: { 'k8s.io/initial-events-end': 'true' } }),
      },
    },
    { type: 'event', event: { type: 'MODIFIED', object: obj('a', '61') } },
  )
  assert.deepEqual(r[0]!.next, {
    op: 'watch',
    request: {
      resourceVersion: '',
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    },
  })
  assert.deepEqual(r[2]!.emit, [])
  assert.equal(r[3]!.state.lastSyncRV, '', 'RV not taken from initial ADDEDs')
  assert.deepEqual(r[4]!.emit, [
    { type: 'replace', objects: [obj('a', '50'), obj('b', '40')], resourceVersion: '60' },
  ])
  assert.equal(r[4]!.next.op, 'read', 'the same stream goes on as the watch')
  assert.deepEqual(r[5]!.emit, [{ type: 'modified', object: obj('a', '61') }])
  assert.equal(r[5]!.state.lastSyncRV, '61')
})

test('streaming list closed before its end bookmark restarts with an empty buffer (no stale objects)', () => {
  const r = run(
    initialState({}),
    { type: 'start' },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ADDED', object: obj('stale', '50') } },
    { type: 'stream-ended', durationMs: 3000, events: 1 },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ADDED', object: obj('fresh', '70') } },
    {
      type: 'event',
      event: {
        type: 'BOOKMARK',
        object: obj('', '80', { annotations: { 'k8s.io/initial-events-end': 'true' } }),
      },
    },
  )
  assert.equal(r[3]!.next.op, 'watch')
  assert.deepEqual(last(r).emit, [{ type: 'replace', objects: [obj('fresh', '70')], resourceVersion: '80' }])
})

test('streaming list refused by the server → paginated list this cycle, streaming again at the next relist', () => {
  const r = run(
    initialState({}),
    { type: 'start' },
    { type: 'watch-start-failed', failure: fail() },
    { type: 'list-page', items: [obj('a', '1')], resourceVersion: '10' },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ERROR', object: status(410) } },
    { type: 'resume' },
  )
  assert.deepEqual(r[1]!.next, { op: 'list', request: { resourceVersion: '0', limit: 500 } })
  assert.deepEqual(last(r).next, {
    op: 'watch',
    request: {
      resourceVersion: '10',
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    },
  })
})

test('streaming list: 410 marks the RV unavailable and restarts from "" at once; 429 waits', () => {
  const s = { ...initialState({}), lastSyncRV: '300', synced: true }
  const expired = run(s, { type: 'start' }, { type: 'watch-start-failed', failure: fail({ expired: true }) })
  assert.deepEqual(last(expired).next, {
    op: 'watch',
    request: {
      resourceVersion: '',
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    },
  })
  const busy = run(
    s,
    { type: 'start' },
    { type: 'watch-start-failed', failure: fail({ throttledOrRefused: true }) },
  )
  assert.equal(last(busy).next.op, 'wait')
})

test('seeded with resumeFrom (a restored snapshot): start watches from that RV, lists nothing; a 410 then relists', () => {
  const s = initialState({ resumeFrom: '42' })
  assert.equal(s.synced, false)
  const started = run(s, { type: 'start' })
  assert.deepEqual(last(started).next, {
    op: 'watch',
    request: { resourceVersion: '42', allowWatchBookmarks: true },
  })
  const gone = run(
    s,
    { type: 'start' },
    { type: 'watch-opened' },
    {
      type: 'event',
      event: { type: 'ERROR', object: { kind: 'Status', code: 410, metadata: {} } as unknown as KubeObject },
    },
    { type: 'resume' },
  )
  assert.equal(gone[2]!.next.op, 'wait')
  assert.equal(last(gone).next.op, 'watch')
  assert.deepEqual(last(gone).next, {
    op: 'watch',
    request: {
      resourceVersion: '42',
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    },
  })
})
