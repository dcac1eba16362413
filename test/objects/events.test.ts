import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import {
  DEFAULT_SERIES_FINISH_MS,
  DEFAULT_SERIES_FLUSH_MS,
  EventRecorder,
  MAX_REMEMBERED_EVENTS,
} from '../../src/objects/events.ts'

/** A client that answers every Event write at once and records it (the recorder's only API use). */
function fakeClient() {
  const writes: { verb: string; body: unknown }[] = []
  const client = {
    resource: () => ({
      create: async (body: { metadata: { name: string } }) => {
        writes.push({ verb: 'create', body })
        return body
      },
      patch: async (_name: string, body: unknown) => {
        writes.push({ verb: 'patch', body })
        return {}
      },
    }),
  } as unknown as KubeClient
  return { client, writes }
}

const object = (uid: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${uid}`, namespace: 'a', uid },
})

test('EventRecorder memory is bounded: distinct events beyond the cap evict the oldest series and buckets', async () => {
  const clock = new ManualClock()
  const { client, writes } = fakeClient()
  const rec = new EventRecorder(client, { controller: 'c', instance: 'i', clock })
  for (let i = 0; i < MAX_REMEMBERED_EVENTS + 1000; i++)
    rec.event(object(`u${i}`), 'Normal', 'Synced', 'Sync', `note ${i}`)
  await rec.flush()
  assert.equal(writes.length, MAX_REMEMBERED_EVENTS + 1000, 'every distinct event was written')
  assert.deepEqual(rec.remembered, { series: MAX_REMEMBERED_EVENTS, buckets: MAX_REMEMBERED_EVENTS })
})

test('EventRecorder forgets a series 6 minutes after it was last observed, writing its count first (client-go finishTime)', async () => {
  const clock = new ManualClock()
  const { client, writes } = fakeClient()
  const rec = new EventRecorder(client, { controller: 'c', instance: 'i', clock })
  const cm = object('u1')
  rec.event(cm, 'Warning', 'Failed', 'Sync', 'boom')
  await rec.flush()
  rec.event(cm, 'Warning', 'Failed', 'Sync', 'boom') // a repeat: count 2, written within a flush interval
  assert.equal(rec.remembered.series, 1)
  await clock.advance(DEFAULT_SERIES_FINISH_MS)
  rec.event(object('u2'), 'Normal', 'Other', 'Sync', 'x') // any event sweeps
  await rec.flush()
  assert.deepEqual(
    writes.map((w) => w.verb),
    ['create', 'patch', 'create'],
    'the repeat was written as series.count before the series was forgotten',
  )
  assert.equal((writes[1]!.body as { series: { count: number } }).series.count, 2)
  assert.deepEqual(rec.remembered, { series: 1, buckets: 1 }, 'u1 forgotten; its full bucket too')

  rec.event(cm, 'Warning', 'Failed', 'Sync', 'boom') // the same event again, after the series finished
  await rec.flush()
  assert.equal(writes.at(-1)!.verb, 'create', 'a new Event, not a patch of the finished one')
})

test('EventRecorder keeps a series that is still being observed, and sweeps at most once per flush interval', async () => {
  const clock = new ManualClock()
  const { client, writes } = fakeClient()
  const rec = new EventRecorder(client, { controller: 'c', instance: 'i', clock })
  const cm = object('u1')
  for (let i = 0; i < 10; i++) {
    rec.event(cm, 'Normal', 'Tick', 'Sync', 'same')
    await clock.advance(DEFAULT_SERIES_FLUSH_MS)
  }
  await rec.flush()
  assert.equal(
    writes.filter((w) => w.verb === 'create').length,
    1,
    'one Event for ten repeats 10 minutes long',
  )
  assert.equal(rec.remembered.series, 1)
})
