import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { MAX_TIMER_DELAY_MS } from '../../src/queue/delaying-queue.ts'
import { createDelayingQueue, createWorkQueue, InMemoryQueueMetrics } from '../../src/queue/index.ts'
import { drainQueue } from '../support/queue-drain.ts'
import { seededRandom } from '../support/random.ts'
import { peek, SUITE } from './support.ts'

describe('delaying queue', SUITE, () => {
  test('addAfter adds the item once its delay has passed on the clock, not before', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 100)
    assert.equal(q.len(), 0)
    await clock.advance(99)
    assert.equal(q.len(), 0)
    await clock.advance(1)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('a delay of zero, below zero or NaN adds the item now', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('zero', 0)
    q.addAfter('negative', -5)
    q.addAfter('nan', Number.NaN)
    assert.equal(clock.pending, 0)
    assert.deepEqual(await drainQueue(q), ['zero', 'negative', 'nan'])
  })

  test('of several pending delays for one item the earliest wins', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 100)
    q.addAfter('a', 50)
    q.addAfter('a', 200) // later: must not postpone
    await clock.advance(50)
    assert.deepEqual(await drainQueue(q), ['a'])
    await clock.advance(1000)
    assert.equal(q.len(), 0, 'the item waited once, so it is added once')
  })

  test('a later addAfter does not postpone an earlier one requested before it', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 10)
    await clock.advance(5)
    q.addAfter('a', 10) // would be due at 15
    await clock.advance(5)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('waiting items are added in deadline order, ties in request order', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('c', 30)
    q.addAfter('a', 10)
    q.addAfter('b1', 20)
    q.addAfter('b2', 20)
    await clock.advance(30)
    assert.deepEqual(await drainQueue(q), ['a', 'b1', 'b2', 'c'])
  })

  test('one timer for the whole queue, armed at the earliest deadline', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    const start = clock.monotonic()
    q.addAfter('a', 300)
    q.addAfter('b', 200)
    q.addAfter('c', 400)
    assert.equal(clock.pending, 1)
    assert.equal(clock.nextDeadline(), start + 200)
    q.addAfter('d', 50)
    assert.equal(clock.pending, 1)
    assert.equal(clock.nextDeadline(), start + 50)
    await clock.advance(50)
    assert.equal(clock.pending, 1)
    assert.equal(clock.nextDeadline(), start + 200)
    await clock.advance(350)
    assert.equal(clock.pending, 0, 'no timer once nothing waits')
    assert.deepEqual(await drainQueue(q), ['d', 'b', 'a', 'c'])
  })

  test('an item that waits and is also queued is added once', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.add('a')
    q.addAfter('a', 10)
    await clock.advance(10)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('an item whose delay fires while it is processed is parked until done', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.add('a')
    const first = await q.get()
    q.addAfter('a', 10)
    await clock.advance(10)
    const second = q.get()
    assert.deepEqual(await peek(second), { done: false })
    q.done('a')
    assert.deepEqual(await peek(second), { done: true, value: { shutdown: false, item: 'a' } })
    assert.equal(first.shutdown, false)
  })

  test('a pending get receives a delayed item when its delay fires', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    const waiter = q.get()
    q.addAfter('a', 1000)
    assert.deepEqual(await peek(waiter), { done: false })
    await clock.advance(1000)
    assert.deepEqual(await peek(waiter), { done: true, value: { shutdown: false, item: 'a' } })
  })

  test('delays longer than the longest timer are reached by re-arming', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    const start = clock.monotonic()
    q.addAfter('far', 2 * MAX_TIMER_DELAY_MS + 5)
    assert.equal(clock.nextDeadline(), start + MAX_TIMER_DELAY_MS)
    await clock.advance(2 * MAX_TIMER_DELAY_MS)
    assert.equal(q.len(), 0)
    assert.equal(clock.pending, 1)
    await clock.advance(5)
    assert.deepEqual(await drainQueue(q), ['far'])
    q.addAfter('never', Number.POSITIVE_INFINITY)
    assert.equal(clock.pending, 1)
    await clock.advance(MAX_TIMER_DELAY_MS)
    assert.equal(q.len(), 0)
    q.shutDown()
    assert.equal(clock.pending, 0)
  })

  test('shutDown cancels the timer and drops waiting items', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 10)
    q.add('b')
    q.shutDown()
    assert.equal(clock.pending, 0)
    await clock.advance(100)
    assert.deepEqual(await q.get(), { shutdown: false, item: 'b' })
    assert.deepEqual(await q.get(), { shutdown: true })
  })

  test('shutDownWithDrain cancels the timer too', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 10)
    await q.shutDownWithDrain()
    assert.equal(clock.pending, 0)
  })

  test('addAfter after shutdown is ignored and arms nothing', async () => {
    const clock = new ManualClock()
    const metrics = new InMemoryQueueMetrics()
    const q = createDelayingQueue<string>({ clock, metrics })
    q.shutDown()
    q.addAfter('a', 10)
    q.addAfter('b', 0)
    assert.equal(clock.pending, 0)
    assert.equal(metrics.retries, 0)
    assert.equal(q.len(), 0)
  })

  test('wraps a given work queue', async () => {
    const clock = new ManualClock()
    const inner = createWorkQueue<string>()
    const q = createDelayingQueue<string>({ clock, queue: inner })
    q.addAfter('a', 5)
    await clock.advance(5)
    assert.equal(inner.len(), 1)
    q.shutDown()
    assert.equal(inner.shuttingDown(), true)
  })

  test('a waiting item is dropped at the next timer when the wrapped queue was shut down directly', async () => {
    const clock = new ManualClock()
    const inner = createWorkQueue<string>()
    const q = createDelayingQueue<string>({ clock, queue: inner })
    q.addAfter('a', 5)
    q.addAfter('b', 50)
    inner.shutDown()
    await clock.advance(5)
    assert.equal(clock.pending, 0)
    assert.equal(inner.len(), 0)
  })

  test('matches a model of earliest-deadline-wins over random delays and clock steps', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const rand = seededRandom(seed)
      const clock = new ManualClock()
      const q = createDelayingQueue<string>({ clock })
      /** Model: waiting item → the ready time it must be added at (the earliest requested). */
      const waiting = new Map<string, number>()
      /** Model: items added at once (delay ≤ 0); independent of a pending wait, as in client-go. */
      const now0 = new Set<string>()
      for (let step = 0; step < 300; step++) {
        const now = clock.monotonic()
        for (let i = Math.floor(rand() * 4); i > 0; i--) {
          const item = `k${Math.floor(rand() * 12)}`
          const delay = Math.floor(rand() * 60) - 5
          q.addAfter(item, delay)
          if (delay <= 0) {
            now0.add(item)
            continue
          }
          const prev = waiting.get(item)
          if (prev === undefined || now + delay < prev) waiting.set(item, now + delay)
        }
        assert.ok(clock.pending <= 1, 'never more than one timer')
        await clock.advance(Math.floor(rand() * 15))
        const t = clock.monotonic()
        const expected = new Set(now0)
        now0.clear()
        for (const [k, at] of waiting) {
          if (at > t) continue
          expected.add(k)
          waiting.delete(k)
        }
        const got = await drainQueue(q)
        assert.deepEqual(got.sort(), [...expected].sort(), `seed ${seed} step ${step} at ${t}`)
      }
    }
  })
})
