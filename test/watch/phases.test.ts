/**
 * The state's shape: each phase carries only its own data, buffers have one owner
 * (a state holding one can be stepped once), and large initial lists are exact.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isEdgeopError } from '../../src/core/errors.ts'
import type { KubeObject } from '../../src/core/types.ts'
import type { Input } from '../../src/watch/events.ts'
import { OwnedBuffer } from '../../src/watch/owned-buffer.ts'
import { initialState, type Step, step, type WatchState } from '../../src/watch/state.ts'

const obj = (name: string, rv: string): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion: rv },
})
const endBookmark = (rv: string): Input => ({
  type: 'event',
  event: {
    type: 'BOOKMARK',
    object: { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } },
  },
})
function run(s: WatchState, inputs: Iterable<Input>): Step<KubeObject>[] {
  const out: Step<KubeObject>[] = []
  for (const i of inputs) {
    const r = step(s, i)
    out.push(r)
    s = r.state
  }
  return out
}
const isWatchError = (err: unknown) => isEdgeopError(err, 'EDGEOP_ERR_WATCH')

const COMMON = [
  'failures',
  'lastError',
  'lastSyncRV',
  'pageSize',
  'paginatedResult',
  'rvUnavailable',
  'streaming',
  'synced',
]
const keysBeyondCommon = (s: WatchState) =>
  Object.keys(s)
    .filter((k) => !COMMON.includes(k))
    .sort()

test('each phase carries only its own data beside the common fields', () => {
  const listing = run(initialState({ streaming: 'off' }), [
    { type: 'start' },
    { type: 'list-page', items: [obj('a', '1')], resourceVersion: '10', continue: 'c' },
    { type: 'list-page', items: [obj('b', '2')], resourceVersion: '10' },
    { type: 'watch-opened' },
    { type: 'stream-ended', durationMs: 10, events: 0 },
  ]).map((r) => r.state)
  const streaming = run(initialState({}), [
    { type: 'start' },
    { type: 'watch-opened' },
    { type: 'event', event: { type: 'ADDED', object: obj('a', '1') } },
    endBookmark('20'),
  ]).map((r) => r.state)
  assert.deepEqual(keysBeyondCommon(initialState()), ['phase'])
  assert.deepEqual(
    [...listing, ...streaming].map((s) => [s.phase, keysBeyondCommon(s)]),
    [
      ['listing', ['list', 'phase', 'streamFallback']],
      ['listing', ['list', 'phase', 'streamFallback']],
      ['opening-watch', ['phase', 'syntheticAdds']],
      ['watching', ['phase', 'syntheticAdds']],
      ['waiting', ['afterWait', 'phase']],
      ['stream-listing', ['initial', 'phase']],
      ['stream-listing', ['initial', 'phase']],
      ['stream-listing', ['initial', 'phase']],
      ['watching', ['phase', 'syntheticAdds']],
    ],
  )
})

test('a state whose buffer moved on cannot be stepped again (paginated list and streaming list)', () => {
  const listing = step(initialState({ streaming: 'off' }), { type: 'start' }).state
  step(listing, { type: 'list-page', items: [obj('a', '1')], resourceVersion: '10', continue: 'c' })
  assert.throws(() => step(listing, { type: 'list-page', items: [], resourceVersion: '10' }), isWatchError)

  const streaming = step(initialState({}), { type: 'start' }).state
  step(streaming, { type: 'event', event: { type: 'ADDED', object: obj('a', '1') } })
  assert.throws(() => step(streaming, endBookmark('20')), isWatchError)
})

test('an input the phase cannot receive is refused with EDGEOP_ERR_WATCH, naming both', () => {
  const idle = initialState()
  assert.throws(() => step(idle, { type: 'resume' }), /input resume in phase idle/)
  const listing = step(initialState({ streaming: 'off' }), { type: 'start' }).state
  assert.throws(
    () => step(listing, { type: 'event', event: { type: 'ADDED', object: obj('a', '1') } }),
    isWatchError,
  )
  assert.throws(() => step(listing, { type: 'watch-opened' }), isWatchError)
})

test('the owned buffer is handed on, not copied; a spent handle throws', () => {
  const items: number[] = []
  const first = new OwnedBuffer(items)
  const second = first.update((b) => b.push(1))
  assert.equal(first.owned, false)
  assert.equal(second.owned, true)
  assert.throws(() => first.take(), isWatchError)
  assert.throws(() => first.update(() => {}), isWatchError)
  assert.equal(second.take(), items, 'the same array')
  assert.deepEqual(items, [1])
  assert.throws(() => second.take(), isWatchError)
})

test('10,000 objects: 20 pages of 500 and a streaming list of 10,000 events each emit exactly one full replace', () => {
  const objects = Array.from({ length: 10_000 }, (_, i) => obj(`o${i}`, String(i + 1)))
  function* pages(): Generator<Input> {
    yield { type: 'start' }
    for (let p = 0; p < 20; p++) {
      const last = p === 19
      yield {
        type: 'list-page',
        items: objects.slice(p * 500, (p + 1) * 500),
        resourceVersion: '20000',
        ...(last ? {} : { continue: `c${p}` }),
      }
    }
  }
  const listed = run(initialState({ streaming: 'off' }), pages()).flatMap((r) => r.emit)
  assert.deepEqual(listed, [{ type: 'replace', objects, resourceVersion: '20000' }])

  function* events(): Generator<Input> {
    yield { type: 'start' }
    yield { type: 'watch-opened' }
    for (const object of objects) yield { type: 'event', event: { type: 'ADDED', object } }
    yield endBookmark('20000')
  }
  const streamed = run(initialState({}), events()).flatMap((r) => r.emit)
  assert.deepEqual(streamed, [{ type: 'replace', objects, resourceVersion: '20000' }])
})
