/**
 * Upstream workqueue bugs that became rules (controller-semantics §8), one test per issue.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ManualClock } from '../../src/core/clock.ts'
import { RING_BUFFER_MIN_CAPACITY, RingBuffer } from '../../src/core/ring-buffer.ts'
import {
  createDelayingQueue,
  createRateLimitingQueue,
  createWorkQueue,
  type WorkQueue,
} from '../../src/queue/index.ts'
import { seededRandom } from '../support/random.ts'
import { nextTurn, peek, SUITE } from './support.ts'

const run = promisify(execFile)

/** A full GC in this process (`--expose-gc` set at run time; the gc function lives in a new context). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}
const MB = 1024 * 1024

describe('regressions', SUITE, () => {
  test('kubernetes/kubernetes#83945: the delaying queue keeps one timer, not one per item or per wake-up', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    const rand = seededRandom(83945)
    let delivered = 0
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 40; i++) {
        q.addAfter(`r${round}-i${i}`, 1 + Math.floor(rand() * 500))
        assert.ok(clock.pending <= 1, `${clock.pending} timers armed`)
      }
      await clock.advance(Math.floor(rand() * 100))
      assert.ok(clock.pending <= 1, `${clock.pending} timers armed after firing`)
      while (q.len() > 0) {
        const next = await q.get()
        if (!next.shutdown) q.done(next.item)
        delivered++
      }
    }
    await clock.advance(1000)
    assert.equal(clock.pending, 0, 'no timer once nothing waits')
    delivered += q.len()
    assert.equal(delivered, 50 * 40)
  })

  test('kubernetes/kubernetes#105031: popped slots are released', async () => {
    const fifo = new RingBuffer<object>()
    const refs: WeakRef<object>[] = []
    for (let i = 0; i < 1000; i++) {
      const o = { i }
      refs.push(new WeakRef(o))
      fifo.push(o)
    }
    for (let i = 0; i < 700; i++) fifo.shift() // 300 left of 1024 slots: no shrink, so no copy hides a leak
    assert.equal(fifo.capacity, 1024)
    await nextTurn() // WeakRef targets stay alive until the current job ends
    collectGarbage()
    const alive = refs.filter((r) => r.deref() !== undefined).length
    assert.equal(alive, 300, 'only the items still queued are reachable')
  })

  test('kubernetes/kubernetes#105031: the FIFO shrinks back to its minimum after a burst', () => {
    const fifo = new RingBuffer<number>()
    for (let i = 0; i < 100_000; i++) fifo.push(i)
    while (fifo.length > 0) fifo.shift()
    assert.equal(fifo.capacity, RING_BUFFER_MIN_CAPACITY)
  })

  test('kubernetes/kubernetes#105031: 1,000,000 keys through the queue leave the heap near its baseline', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/memory-burst.ts', import.meta.url))
    const { stdout } = await run(process.execPath, ['--expose-gc', fixture, '1000000', '250000'], {
      timeout: 60_000,
    })
    const r = JSON.parse(stdout) as { processed: number; baseline: number; after: number; peak: number }
    assert.equal(r.processed, 1_000_000 + 2 * 250_000)
    assert.ok(r.peak - r.baseline > 50 * MB, 'the burst really filled the queue')
    const retained = r.after - r.baseline
    assert.ok(retained < 1 * MB, `retained ${(retained / MB).toFixed(2)} MB after the burst`)
  })

  test('kubernetes/kubernetes#119554: shutDown racing shutDownWithDrain does not leave the drain waiter blocked', async () => {
    const queues: [string, () => WorkQueue<string>][] = [
      ['work queue', () => createWorkQueue<string>()],
      ['delaying queue', () => createDelayingQueue<string>({ clock: new ManualClock() })],
      ['rate-limiting queue', () => createRateLimitingQueue<string>({ clock: new ManualClock() })],
    ]
    for (const [name, make] of queues) {
      const q = make()
      q.add('stuck')
      const got = await q.get() // in flight; the worker never calls done
      assert.equal(got.shutdown, false)
      const drained = q.shutDownWithDrain()
      assert.deepEqual(await peek(drained), { done: false }, `${name}: drain waits for the in-flight item`)
      q.shutDown()
      assert.deepEqual(await peek(drained), { done: true, value: undefined }, `${name}: shutDown releases it`)
    }
  })

  test('kubernetes/kubernetes#119554: a drain racing shutDown from another task resolves', async () => {
    const q = createWorkQueue<string>()
    q.add('stuck')
    await q.get()
    const both = Promise.all([q.shutDownWithDrain(), Promise.resolve().then(() => q.shutDown())])
    assert.deepEqual(await peek(both), { done: true, value: [undefined, undefined] })
  })

  test('kubernetes/kubernetes#77170: shutting a delaying queue down twice is harmless', async () => {
    const clock = new ManualClock()
    const q = createDelayingQueue<string>({ clock })
    q.addAfter('a', 10)
    const waiter = q.get()
    q.shutDown()
    assert.doesNotThrow(() => q.shutDown())
    await assert.doesNotReject(q.shutDownWithDrain())
    assert.doesNotThrow(() => q.shutDown())
    assert.deepEqual(await waiter, { shutdown: true })
    assert.equal(clock.pending, 0)
    assert.equal(q.shuttingDown(), true)

    const r = createRateLimitingQueue<string>({ clock })
    await r.shutDownWithDrain()
    assert.doesNotThrow(() => r.shutDown())
    assert.doesNotThrow(() => r.shutDown())
  })
})
