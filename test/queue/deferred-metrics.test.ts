/**
 * A queue whose metrics sink is bound after items were queued reads as if it had been bound from the start.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { DeferredQueueMetrics } from '../../src/queue/deferred-metrics.ts'
import { InMemoryQueueMetrics } from '../../src/queue/memory-metrics.ts'
import { createRateLimitingQueue } from '../../src/queue/rate-limiting-queue.ts'

test('binding late replays depth, adds, retries and the in-flight probe, then forwards', async () => {
  const clock = new ManualClock()
  const deferred = new DeferredQueueMetrics()
  const q = createRateLimitingQueue<string>({ clock, metrics: deferred })
  q.add('a')
  q.add('b')
  q.add('a') // deduplicated: no add
  q.addAfter('c', 1000) // a retry, not yet an add
  const sink = new InMemoryQueueMetrics()
  assert.equal(deferred.bound, false)
  deferred.bind(sink)
  assert.equal(deferred.bound, true)
  assert.deepEqual([sink.depth, sink.adds, sink.retries], [2, 2, 1])
  const got = await q.get()
  assert.ok(!got.shutdown)
  await clock.advance(3000)
  assert.equal(sink.inFlight().longestRunningProcessorSeconds, 3, 'the probe reached the late sink')
  q.done(got.item!)
  await clock.advance(1000)
  assert.deepEqual([sink.depth, sink.adds, sink.workDurations.length], [2, 3, 1])
  assert.throws(() => deferred.bind(new InMemoryQueueMetrics()), /already bound/)
  q.shutDown()
})
