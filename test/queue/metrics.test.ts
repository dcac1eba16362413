import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import {
  createDelayingQueue,
  createWorkQueue,
  InMemoryQueueMetrics,
  type QueueMetrics,
  WORKQUEUE_METRIC_NAMES,
} from '../../src/queue/index.ts'
import { SUITE } from './support.ts'

function setup() {
  const clock = new ManualClock()
  const metrics = new InMemoryQueueMetrics()
  const q = createDelayingQueue<string>({ clock, metrics })
  return { clock, metrics, q }
}

describe('queue metrics', SUITE, () => {
  test('the hook names are the seven controller-runtime workqueue metrics', () => {
    assert.deepEqual(Object.values(WORKQUEUE_METRIC_NAMES).sort(), [
      'workqueue_adds_total',
      'workqueue_depth',
      'workqueue_longest_running_processor_seconds',
      'workqueue_queue_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_work_duration_seconds',
    ])
    assert.deepEqual(Object.keys(new InMemoryQueueMetrics().snapshot()).sort(), [
      ...Object.values(WORKQUEUE_METRIC_NAMES).sort(),
    ])
  })

  test('depth and adds count adds that are not deduplicated, including parked ones', async () => {
    const { metrics, q } = setup()
    q.add('a')
    q.add('a')
    q.add('b')
    assert.equal(metrics.adds, 2)
    assert.equal(metrics.depth, 2)
    await q.get() // a in flight
    assert.equal(metrics.depth, 1)
    q.add('a') // parked: counts
    q.add('a') // dedup: does not
    assert.equal(metrics.adds, 3)
    assert.equal(metrics.depth, 2)
    q.done('a') // re-queued: no change
    assert.equal(metrics.depth, 2)
  })

  test('queue duration runs from the first add to get', async () => {
    const { clock, metrics, q } = setup()
    q.add('a')
    await clock.advance(100)
    q.add('a')
    await clock.advance(50)
    await q.get()
    assert.deepEqual(metrics.queueDurations, [0.15])
  })

  test('a parked item measures queue time from its re-add, across the processing', async () => {
    const { clock, metrics, q } = setup()
    q.add('a')
    await q.get()
    await clock.advance(10)
    q.add('a')
    await clock.advance(30)
    q.done('a')
    await q.get()
    assert.deepEqual(metrics.queueDurations, [0, 0.03])
  })

  test('work duration runs from get to done', async () => {
    const { clock, metrics, q } = setup()
    q.add('a')
    await q.get()
    await clock.advance(200)
    q.done('a')
    q.done('a') // not in flight: nothing observed
    assert.deepEqual(metrics.workDurations, [0.2])
  })

  test('unfinished work and longest running processor are computed when read', async () => {
    const { clock, metrics, q } = setup()
    q.add('a')
    q.add('b')
    assert.deepEqual(metrics.inFlight(), { unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 })
    await q.get()
    await clock.advance(1000)
    await q.get()
    await clock.advance(500)
    assert.deepEqual(metrics.inFlight(), { unfinishedWorkSeconds: 2, longestRunningProcessorSeconds: 1.5 })
    q.done('a')
    assert.deepEqual(metrics.inFlight(), { unfinishedWorkSeconds: 0.5, longestRunningProcessorSeconds: 0.5 })
    const snap = metrics.snapshot()
    assert.equal(snap.workqueue_unfinished_work_seconds, 0.5)
    assert.equal(snap.workqueue_work_duration_seconds, 1, 'one observation')
  })

  test('retries count every accepted addAfter, including delays ≤ 0', () => {
    const { metrics, q } = setup()
    q.addAfter('a', 10)
    q.addAfter('a', 5)
    q.addAfter('b', 0)
    assert.equal(metrics.retries, 3)
    assert.equal(metrics.adds, 1, 'only b was added so far')
    q.shutDown()
    q.addAfter('c', 1)
    assert.equal(metrics.retries, 3)
  })

  test('a sink without setInFlightProbe is enough', async () => {
    const seen: string[] = []
    const sink: QueueMetrics = {
      incDepth: () => seen.push('depth+'),
      decDepth: () => seen.push('depth-'),
      incAdds: () => seen.push('adds'),
      observeQueueDuration: () => seen.push('queue'),
      observeWorkDuration: () => seen.push('work'),
      incRetries: () => seen.push('retries'),
    }
    const q = createWorkQueue<string>({ metrics: sink, clock: new ManualClock() })
    q.add('a')
    await q.get()
    q.done('a')
    assert.deepEqual(seen, ['adds', 'depth+', 'depth-', 'queue', 'work'])
  })

  test('a throwing sink never leaves the queue half-updated', async () => {
    const boom = (): void => {
      throw new Error('sink down')
    }
    const sink: QueueMetrics = {
      incDepth: boom,
      decDepth: boom,
      incAdds: boom,
      observeQueueDuration: boom,
      observeWorkDuration: boom,
      incRetries: boom,
    }
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock, metrics: sink })
    q.add('a')
    q.addAfter('b', 5)
    await clock.advance(5)
    const got: string[] = []
    while (q.len() > 0) {
      const next = await q.get()
      if (next.shutdown) break
      got.push(next.item)
      q.done(next.item)
    }
    assert.deepEqual(got, ['a', 'b'])
  })
})
