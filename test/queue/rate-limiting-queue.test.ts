import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import {
  createDelayingQueue,
  createRateLimitingQueue,
  InMemoryQueueMetrics,
  itemExponentialRateLimiter,
  type RateLimiter,
} from '../../src/queue/index.ts'
import { drainQueue } from '../support/queue-drain.ts'
import { SUITE } from './support.ts'

describe('rate-limiting queue', SUITE, () => {
  test('addRateLimited waits the limiter delay: 5 ms, then 10 ms, until forget', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    q.addRateLimited('a')
    await clock.advance(4)
    assert.equal(q.len(), 0)
    await clock.advance(1)
    assert.deepEqual(await drainQueue(q), ['a'])

    q.addRateLimited('a')
    await clock.advance(9)
    assert.equal(q.len(), 0)
    await clock.advance(1)
    assert.deepEqual(await drainQueue(q), ['a'])
    assert.equal(q.numRequeues('a'), 2)

    q.forget('a')
    assert.equal(q.numRequeues('a'), 0)
    q.addRateLimited('a')
    await clock.advance(5)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('the default limiter token bucket runs on the queue clock', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    for (let i = 0; i < 100; i++) q.addRateLimited(`item-${i}`)
    q.addRateLimited('item-100') // bucket exhausted: 100 ms
    await clock.advance(5)
    assert.equal(q.len(), 100)
    await drainQueue(q)
    await clock.advance(94)
    assert.equal(q.len(), 0)
    await clock.advance(1)
    assert.deepEqual(await drainQueue(q), ['item-100'])
  })

  test('forget clears history but does not remove a queued or waiting item', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    q.addRateLimited('a')
    q.forget('a')
    await clock.advance(5)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('uses a given limiter and a given delaying queue', async () => {
    const clock = new ManualClock()
    const calls: string[] = []
    const limiter: RateLimiter<string> = {
      when: (item) => {
        calls.push(item)
        return 42
      },
      forget: () => {},
      numRequeues: () => 7,
    }
    const delaying = createDelayingQueue<string>({ clock })
    const q = createRateLimitingQueue<string>({ rateLimiter: limiter, delayingQueue: delaying })
    q.addRateLimited('a')
    assert.deepEqual(calls, ['a'])
    assert.equal(q.numRequeues('a'), 7)
    await clock.advance(42)
    assert.equal(delaying.len(), 1)
  })

  test('add, addAfter, get, done and len pass through', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    q.add('a')
    q.addAfter('b', 10)
    assert.equal(q.len(), 1)
    await clock.advance(10)
    assert.deepEqual(await drainQueue(q), ['a', 'b'])
  })

  test('addRateLimited after shutdown still records the failure but adds nothing', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    q.shutDown()
    q.addRateLimited('a')
    assert.equal(q.numRequeues('a'), 1)
    assert.equal(clock.pending, 0)
    assert.deepEqual(await q.get(), { shutdown: true })
  })

  test('each addRateLimited counts one retry in the metrics', async () => {
    const clock = new ManualClock()
    const metrics = new InMemoryQueueMetrics()
    const q = createRateLimitingQueue<string>({
      clock,
      metrics,
      rateLimiter: itemExponentialRateLimiter({ baseMs: 1, maxMs: 10 }),
    })
    q.addRateLimited('a')
    q.addRateLimited('a')
    q.addRateLimited('b')
    assert.equal(metrics.retries, 3)
    await clock.advance(2)
    assert.equal(metrics.adds, 2)
  })

  test('shutDownWithDrain waits for in-flight items and cancels timers', async () => {
    const clock = new ManualClock()
    const q = createRateLimitingQueue<string>({ clock })
    q.add('a')
    const got = await q.get()
    q.addRateLimited('b')
    let drained = false
    const p = q.shutDownWithDrain().then(() => {
      drained = true
    })
    assert.equal(clock.pending, 0)
    await clock.advance(1)
    assert.equal(drained, false)
    if (!got.shutdown) q.done(got.item)
    await p
    assert.equal(drained, true)
  })
})
