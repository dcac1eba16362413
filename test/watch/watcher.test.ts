/**
 * The watch driver with a scripted ListerWatcher and a manual clock: it never sleeps
 * for real, so every delay below is asserted exactly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Backoff } from '../../src/core/backoff.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import type { WatcherEvent } from '../../src/watch/events.ts'
import { Watcher } from '../../src/watch/watcher.ts'
import { FakeStream, list, scripted } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'

const obj = (name: string, rv: string): KubeObject => ({
  metadata: { name, resourceVersion: rv, managedFields: [{ manager: 'm' }] },
})

const apiErr = (status: number, extra: Partial<ConstructorParameters<typeof ApiError>[0]> = {}) =>
  new ApiError({
    status,
    reason: status === 429 ? 'TooManyRequests' : 'InternalError',
    message: 'x',
    method: 'GET',
    path: '/p',
    ...extra,
  })

test('list failures back off 0.8 s, 1.6 s, 3.2 s (jitter 0) on the injected clock; the watch gets a random timeout + idle margin', async () => {
  const clock = new ManualClock()
  const stream = new FakeStream()
  const lw = scripted([apiErr(500), apiErr(500), apiErr(500), list('10', obj('a', '9'))], [stream])
  const w = new Watcher(lw, {
    streaming: 'off',
    clock,
    random: () => 0.5,
    backoff: new Backoff({ clock, random: () => 0 }),
  })
  const ac = new AbortController()
  const got: WatcherEvent[] = []
  const done = w.run((e) => void got.push(e), ac.signal)
  const listCalls = () => lw.calls.filter((c) => c.kind === 'list').length
  for (const [delay, n] of [
    [800, 2],
    [1600, 3],
    [3200, 4],
  ] as const) {
    await until(() => clock.pending === 1)
    await clock.advance(delay - 1)
    assert.equal(listCalls(), n - 1, `not before ${delay} ms`)
    await clock.advance(1)
    await until(() => listCalls() === n)
  }
  await until(() => lw.calls.length === 5)
  const watch = lw.calls[4]
  assert.ok(watch?.kind === 'watch')
  assert.deepEqual(watch.call, {
    resourceVersion: '10',
    allowWatchBookmarks: true,
    timeoutSeconds: 450,
    idleTimeoutMs: 455_000,
  })
  assert.equal(w.health().consecutiveFailures, 0)
  assert.equal(w.health().synced, true)
  ac.abort()
  await done
  assert.equal(got[0]?.type, 'replace')
})

test('Retry-After on a 429 watch start is a floor under the backoff; the watch re-opens without a relist', async () => {
  const clock = new ManualClock()
  const stream = new FakeStream()
  const lw = scripted([list('10')], [apiErr(429, { retryAfter: 5 }), stream])
  const w = new Watcher(lw, { streaming: 'off', clock, backoff: new Backoff({ clock, random: () => 0 }) })
  const ac = new AbortController()
  const done = w.run(() => {}, ac.signal)
  await until(() => lw.calls.length === 2 && clock.pending === 1)
  await clock.advance(4999)
  assert.equal(lw.calls.length, 2)
  await clock.advance(1)
  await until(() => lw.calls.length === 3)
  assert.deepEqual(
    lw.calls.map((c) => c.kind),
    ['list', 'watch', 'watch'],
  )
  ac.abort()
  await done
})

test('a transport error mid-stream resumes from the last RV at once; the transform runs on every object', async () => {
  const clock = new ManualClock()
  const s1 = new FakeStream()
  const s2 = new FakeStream()
  const lw = scripted([list('10', obj('a', '9'))], [s1, s2])
  const strip = (o: KubeObject): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, managedFields: undefined },
  })
  const w = new Watcher(lw, { streaming: 'off', clock, transform: strip })
  const ac = new AbortController()
  const got: WatcherEvent[] = []
  const done = w.run((e) => void got.push(e), ac.signal)
  await until(() => lw.calls.length === 2)
  s1.push({ type: 'ADDED', object: obj('b', '11') })
  s1.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } })
  s1.push(
    new ApiError({
      code: 'EDGEOP_ERR_NETWORK',
      status: 0,
      reason: 'NetworkError',
      message: 'reset',
      method: 'GET',
      path: '/p',
    }),
  )
  await until(() => lw.calls.length === 3)
  const resumed = lw.calls[2]
  assert.ok(resumed?.kind === 'watch')
  assert.equal(resumed.call.resourceVersion, '15')
  assert.equal(clock.pending, 0, 'no backoff wait')
  assert.ok(s1.closed)
  assert.deepEqual(
    got.map((e) => e.type),
    ['replace', 'added'],
  )
  const added = got[1]
  assert.ok(added?.type === 'added')
  assert.equal(added.object.metadata.managedFields, undefined)
  ac.abort()
  await done
  assert.equal(w.health().resourceVersion, '15')
})

test('abort during a backoff wait ends run() promptly and cancels the timer', async () => {
  const clock = new ManualClock()
  const lw = scripted([apiErr(500)], [])
  const w = new Watcher(lw, { streaming: 'off', clock })
  const ac = new AbortController()
  const done = w.run(() => {}, ac.signal)
  await until(() => clock.pending === 1)
  ac.abort()
  await done
  assert.equal(w.health().consecutiveFailures, 1)
  assert.match(w.health().lastError ?? '', /500 InternalError/)
})

test('a decode error mid-stream (by its code) backs off, then relists; the stream had events, so it is no very-short watch', async () => {
  const clock = new ManualClock()
  const s1 = new FakeStream()
  const lw = scripted([list('10'), list('20')], [s1])
  const w = new Watcher(lw, { streaming: 'off', clock, backoff: new Backoff({ clock, random: () => 0 }) })
  const ac = new AbortController()
  const done = w.run(() => {}, ac.signal)
  await until(() => lw.calls.length === 2)
  s1.push({ type: 'ADDED', object: obj('b', '11') })
  s1.push(new EdgeopError('EDGEOP_ERR_DECODE', 'event 2 is not JSON'))
  await until(() => clock.pending === 1)
  assert.equal(w.health().phase, 'waiting')
  await clock.advance(800)
  await until(() => lw.calls.length >= 3)
  assert.deepEqual(lw.calls[2], { kind: 'list', request: { resourceVersion: '11' } })
  ac.abort()
  await done
})
