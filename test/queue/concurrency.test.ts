/**
 * Many simulated async workers on one queue, with items re-added while they are processed.
 *
 * Properties checked, for every seed:
 * - no item is ever processed by two workers at once;
 * - for every item, its last processing start comes after its last add (so every add, including one
 *   made while the item was being processed, is eventually followed by processing);
 * - the queue drains and every worker exits on shutdown.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import {
  createRateLimitingQueue,
  createWorkQueue,
  itemExponentialRateLimiter,
  type RateLimitingQueue,
  type WorkQueue,
} from '../../src/queue/index.ts'
import { seededRandom } from '../support/random.ts'
import { nextTurn, SUITE } from './support.ts'

/** Event-loop turns allowed for the queue to go idle once producers stop (it takes a few dozen). */
const MAX_IDLE_TURNS = 10_000

const KEYS = Array.from({ length: 24 }, (_, i) => `ns/obj-${i}`)

/** Bookkeeping shared by the simulated workers and producers. */
class Observer {
  seq = 0
  readonly inFlight = new Set<string>()
  readonly lastAdd = new Map<string, number>()
  readonly lastStart = new Map<string, number>()
  overlaps = 0
  starts = 0

  added(item: string): void {
    this.lastAdd.set(item, ++this.seq)
  }

  started(item: string): void {
    if (this.inFlight.has(item)) this.overlaps++
    this.inFlight.add(item)
    this.lastStart.set(item, ++this.seq)
    this.starts++
  }

  finished(item: string): void {
    this.inFlight.delete(item)
  }

  assertEveryAddProcessed(label: string): void {
    assert.equal(this.overlaps, 0, `${label}: an item was processed by two workers at once`)
    for (const [item, added] of this.lastAdd) {
      const started = this.lastStart.get(item) ?? 0
      assert.ok(started > added, `${label}: ${item} added at #${added}, last processed at #${started}`)
    }
  }
}

/** Yields 0–4 microtask turns, adding a random key (sometimes the item itself) on some of them. */
async function busy(rand: () => number, maybeAdd: () => void): Promise<void> {
  for (let i = Math.floor(rand() * 5); i > 0; i--) {
    await Promise.resolve()
    if (rand() < 0.3) maybeAdd()
  }
}

describe('concurrency', SUITE, () => {
  test('workers never share an item, and every add is eventually processed', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const rand = seededRandom(seed)
      const q: WorkQueue<string> = createWorkQueue<string>()
      const obs = new Observer()
      const add = (item: string): void => {
        obs.added(item)
        q.add(item)
      }
      const randomAdd = (): void => add(KEYS[Math.floor(rand() * KEYS.length)] as string)

      const worker = async (): Promise<void> => {
        for (;;) {
          const next = await q.get()
          if (next.shutdown) return
          obs.started(next.item)
          if (rand() < 0.2) add(next.item) // re-add itself while processing
          await busy(rand, randomAdd)
          obs.finished(next.item)
          q.done(next.item)
        }
      }
      const producer = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) {
          randomAdd()
          await busy(rand, randomAdd)
        }
      }

      const workers = Array.from({ length: 8 }, worker)
      await Promise.all([producer(1500), producer(1500), producer(1500)])
      for (let turn = 0; q.len() > 0 || obs.inFlight.size > 0; turn++) {
        assert.ok(turn < MAX_IDLE_TURNS, `seed ${seed}: the queue never went idle`)
        await nextTurn()
      }
      await q.shutDownWithDrain()
      await Promise.all(workers)
      obs.assertEveryAddProcessed(`seed ${seed}`)
      assert.ok(obs.starts > 1000, `seed ${seed}: only ${obs.starts} processing starts`)
    }
  })

  test('the same holds with rate-limited retries on a manual clock', async () => {
    for (const seed of [11, 12, 13, 14]) {
      const rand = seededRandom(seed)
      const clock = new ManualClock()
      const q: RateLimitingQueue<string> = createRateLimitingQueue<string>({
        clock,
        rateLimiter: itemExponentialRateLimiter({ baseMs: 1, maxMs: 40 }),
      })
      const obs = new Observer()
      const add = (item: string): void => {
        obs.added(item)
        q.add(item)
      }
      const randomAdd = (): void => add(KEYS[Math.floor(rand() * KEYS.length)] as string)
      let retries = 0

      const worker = async (): Promise<void> => {
        for (;;) {
          const next = await q.get()
          if (next.shutdown) return
          obs.started(next.item)
          await busy(rand, randomAdd)
          obs.finished(next.item)
          if (rand() < 0.3) {
            obs.added(next.item) // the retry must be processed too
            q.addRateLimited(next.item)
            retries++
          } else {
            q.forget(next.item)
          }
          q.done(next.item)
        }
      }
      const producer = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) {
          randomAdd()
          await busy(rand, randomAdd)
          if (rand() < 0.1) await clock.advance(1)
        }
      }

      const workers = Array.from({ length: 6 }, worker)
      await Promise.all([producer(800), producer(800)])
      for (let turn = 0; q.len() > 0 || obs.inFlight.size > 0 || clock.pending > 0; turn++) {
        assert.ok(turn < MAX_IDLE_TURNS, `seed ${seed}: the queue never went idle`)
        await clock.advance(1)
        await nextTurn()
      }
      await q.shutDownWithDrain()
      await Promise.all(workers)
      obs.assertEveryAddProcessed(`seed ${seed}`)
      assert.ok(retries > 100, `seed ${seed}: only ${retries} retries`)
    }
  })
})
