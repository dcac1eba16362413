import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createWorkQueue, type GetResult, type WorkQueue } from '../../src/queue/index.ts'
import { drainQueue } from '../support/queue-drain.ts'
import { peek, SUITE } from './support.ts'

/** Gets the next item, failing the test if the queue reports shutdown. */
async function take<T>(q: WorkQueue<T>): Promise<T> {
  const next = await q.get()
  assert.equal(next.shutdown, false, 'expected an item, got shutdown')
  return (next as { item: T }).item
}

describe('work queue', SUITE, () => {
  test('hands items out in the order they were added', async () => {
    const q = createWorkQueue<string>()
    for (const k of ['c', 'a', 'b']) q.add(k)
    assert.deepEqual(await drainQueue(q), ['c', 'a', 'b'])
  })

  test('an item added while it waits is stored once, keeping its place', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.add('b')
    q.add('a')
    q.add('a')
    assert.equal(q.len(), 2)
    assert.deepEqual(await drainQueue(q), ['a', 'b'])
  })

  test('an item added while it is processed is not handed to a second worker until done', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    const a = await take(q)
    q.add('a')
    assert.equal(q.len(), 0, 'a parked item is not ready')
    const second = q.get()
    assert.deepEqual(await peek(second), { done: false })
    q.done(a)
    assert.deepEqual(await peek(second), { done: true, value: { shutdown: false, item: 'a' } })
  })

  test('a parked item re-enters at the back of the queue on done', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.add('b')
    const a = await take(q)
    q.add('a')
    q.add('c')
    q.done(a)
    assert.deepEqual(await drainQueue(q), ['b', 'c', 'a'])
  })

  test('an item parked several times is queued once', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    const a = await take(q)
    q.add('a')
    q.add('a')
    q.done(a)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('an item processed and done without a re-add is not queued again', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.done(await take(q))
    assert.equal(q.len(), 0)
    q.add('a')
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('done of an item that is not being processed changes nothing', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.done('a')
    q.done('zzz')
    assert.equal(q.len(), 1)
    assert.deepEqual(await drainQueue(q), ['a'])
  })

  test('get waits for an item, and waiters are served in arrival order', async () => {
    const q = createWorkQueue<string>()
    const w1 = q.get()
    const w2 = q.get()
    const w3 = q.get()
    assert.deepEqual(await peek(w1), { done: false })
    q.add('x')
    q.add('y')
    assert.deepEqual(await peek(w1), { done: true, value: { shutdown: false, item: 'x' } })
    assert.deepEqual(await peek(w2), { done: true, value: { shutdown: false, item: 'y' } })
    assert.deepEqual(await peek(w3), { done: false })
    q.add('x') // x is being processed by w1's worker: parked, not handed to w3
    assert.deepEqual(await peek(w3), { done: false })
    q.add('z')
    assert.deepEqual(await peek(w3), { done: true, value: { shutdown: false, item: 'z' } })
  })

  test('len counts ready items only, not items in flight or parked', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.add('b')
    assert.equal(q.len(), 2)
    await take(q)
    assert.equal(q.len(), 1)
    q.add('a')
    assert.equal(q.len(), 1)
  })

  test('items compare like Map keys: the same object dedups, an equal copy does not', async () => {
    const q = createWorkQueue<{ k: string }>()
    const a = { k: 'a' }
    q.add(a)
    q.add(a)
    q.add({ k: 'a' })
    assert.equal(q.len(), 2)
  })

  test('shutDown wakes every pending get with shutdown and ignores later adds', async () => {
    const q = createWorkQueue<string>()
    const waiters = [q.get(), q.get(), q.get()]
    assert.equal(q.shuttingDown(), false)
    q.shutDown()
    assert.equal(q.shuttingDown(), true)
    for (const w of waiters) assert.deepEqual(await peek(w), { done: true, value: { shutdown: true } })
    q.add('late')
    assert.equal(q.len(), 0)
    assert.deepEqual(await q.get(), { shutdown: true })
  })

  test('items queued before shutdown are still handed out, then get reports shutdown', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.add('b')
    q.shutDown()
    const results: GetResult<string>[] = [await q.get(), await q.get(), await q.get()]
    assert.deepEqual(results, [
      { shutdown: false, item: 'a' },
      { shutdown: false, item: 'b' },
      { shutdown: true },
    ])
  })

  test('done after shutdown still re-queues an item parked before it', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    const a = await take(q)
    q.add('a')
    q.shutDown()
    q.done(a)
    assert.deepEqual(await q.get(), { shutdown: false, item: 'a' })
    q.done('a')
    assert.deepEqual(await q.get(), { shutdown: true })
  })

  test('shutDown is idempotent', async () => {
    const q = createWorkQueue<string>()
    const w = q.get()
    q.shutDown()
    q.shutDown()
    assert.deepEqual(await w, { shutdown: true })
    assert.equal(q.shuttingDown(), true)
  })

  test('shutDownWithDrain waits for in-flight items only', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    q.add('b')
    q.add('c')
    const a = await take(q)
    const b = await take(q)
    const drained = q.shutDownWithDrain()
    assert.equal(q.shuttingDown(), true)
    q.done(a)
    assert.deepEqual(await peek(drained), { done: false }, 'b is still in flight')
    q.done(b)
    assert.deepEqual(await peek(drained), { done: true, value: undefined }, 'c is queued, not in flight')
    assert.equal(q.len(), 1)
  })

  test('shutDownWithDrain resolves when the last in-flight item is done, even if it was re-added', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    const a = await take(q)
    q.add('a') // parked
    const drained = q.shutDownWithDrain()
    q.done(a) // re-queued, no longer in flight
    assert.deepEqual(await peek(drained), { done: true, value: undefined })
    assert.equal(q.len(), 1)
  })

  test('shutDownWithDrain resolves at once when nothing is in flight, and wakes waiters', async () => {
    const q = createWorkQueue<string>()
    const w = q.get()
    await q.shutDownWithDrain()
    assert.deepEqual(await w, { shutdown: true })
  })

  test('a drain that started after shutDown still waits for in-flight items', async () => {
    const q = createWorkQueue<string>()
    q.add('a')
    const a = await take(q)
    q.shutDown()
    const drained = q.shutDownWithDrain()
    assert.deepEqual(await peek(drained), { done: false })
    q.done(a)
    assert.deepEqual(await peek(drained), { done: true, value: undefined })
  })
})
