import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { TokenBucket } from '../../src/core/token-bucket.ts'
import {
  bucketRateLimiter,
  DEFAULT_BUCKET_BURST,
  DEFAULT_BUCKET_QPS,
  DEFAULT_ITEM_BASE_DELAY_MS,
  DEFAULT_ITEM_MAX_DELAY_MS,
  defaultControllerRateLimiter,
  itemExponentialRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
  withMaxWaitRateLimiter,
} from '../../src/queue/index.ts'
import { SUITE } from './support.ts'

function whens<T>(limiter: RateLimiter<T>, item: T, n: number): number[] {
  return Array.from({ length: n }, () => limiter.when(item))
}

const invalid = (err: unknown): boolean => isEdgeopError(err, 'EDGEOP_ERR_INVALID')

describe('item exponential rate limiter', SUITE, () => {
  test('defaults are client-go controller defaults: 5 ms doubling to a 1000 s cap', () => {
    assert.equal(DEFAULT_ITEM_BASE_DELAY_MS, 5)
    assert.equal(DEFAULT_ITEM_MAX_DELAY_MS, 1_000_000)
    const l = itemExponentialRateLimiter<string>()
    assert.deepEqual(whens(l, 'a', 5), [5, 10, 20, 40, 80])
  })

  test('the cap is first hit at the 19th consecutive failure and holds after that', () => {
    const d = whens(itemExponentialRateLimiter<string>(), 'a', 25)
    assert.equal(d[17], 5 * 2 ** 17) // 18th failure: 655.36 s
    assert.equal(d[18], 1_000_000) // 19th: 5 ms · 2^18 = 1310.72 s > cap
    assert.ok(d.slice(18).every((x) => x === 1_000_000))
  })

  test('counts failures per item, and forget starts an item over', () => {
    const l = itemExponentialRateLimiter<string>({ baseMs: 1, maxMs: 1000 })
    assert.deepEqual(whens(l, 'a', 3), [1, 2, 4])
    assert.deepEqual(whens(l, 'b', 2), [1, 2])
    assert.equal(l.numRequeues('a'), 3)
    assert.equal(l.numRequeues('b'), 2)
    assert.equal(l.numRequeues('never'), 0)
    l.forget('a')
    assert.equal(l.numRequeues('a'), 0)
    assert.equal(l.when('a'), 1)
    assert.equal(l.when('b'), 4)
  })

  test('a huge failure count yields the cap, never Infinity or NaN', () => {
    const l = itemExponentialRateLimiter<string>({ baseMs: 5, maxMs: 1000 })
    const d = whens(l, 'a', 2000)
    assert.equal(d[1999], 1000)
    const zero = itemExponentialRateLimiter<string>({ baseMs: 0, maxMs: 1000 })
    assert.equal(whens(zero, 'a', 2000)[1999], 0)
  })

  test('optional jitter is upward and applied after the cap', () => {
    const l = itemExponentialRateLimiter<string>({ baseMs: 10, maxMs: 30, jitter: 1, random: () => 0.5 })
    assert.deepEqual(whens(l, 'a', 3), [15, 30, 45])
  })

  test('rejects negative or NaN options', () => {
    assert.throws(() => itemExponentialRateLimiter({ baseMs: -1 }), invalid)
    assert.throws(() => itemExponentialRateLimiter({ maxMs: Number.NaN }), invalid)
    assert.throws(() => itemExponentialRateLimiter({ jitter: -0.5 }), invalid)
  })
})

describe('item fast-slow rate limiter', SUITE, () => {
  test('fast for the first attempts, slow after, per item', () => {
    const l = itemFastSlowRateLimiter<string>(10, 60_000, 3)
    assert.deepEqual(whens(l, 'a', 5), [10, 10, 10, 60_000, 60_000])
    assert.equal(l.when('b'), 10)
    assert.equal(l.numRequeues('a'), 5)
    l.forget('a')
    assert.equal(l.when('a'), 10)
  })
})

describe('token bucket', SUITE, () => {
  test('starts full, then reserves future tokens 1/qps apart', () => {
    const clock = new ManualClock()
    const b = new TokenBucket({ qps: 10, burst: 100, clock })
    const d = Array.from({ length: 103 }, () => b.reserve())
    assert.ok(d.slice(0, 100).every((x) => x === 0))
    assert.deepEqual(d.slice(100), [100, 200, 300])
  })

  test('refills on the injected clock, up to the burst', async () => {
    const clock = new ManualClock()
    const b = new TokenBucket({ qps: 10, burst: 5, clock })
    for (let i = 0; i < 7; i++) b.reserve() // 2 tokens into the future
    assert.ok(Math.abs(b.tokens() - -2) < 1e-9)
    await clock.advance(500) // +5 tokens
    assert.ok(Math.abs(b.tokens() - 3) < 1e-9)
    await clock.advance(60_000)
    assert.equal(b.tokens(), 5, 'never more than burst')
    assert.deepEqual(
      Array.from({ length: 6 }, () => b.reserve()),
      [0, 0, 0, 0, 0, 100],
    )
  })

  test('a reserved future token is due exactly when the refill reaches it', async () => {
    const clock = new ManualClock()
    const b = new TokenBucket({ qps: 4, burst: 1, clock })
    assert.equal(b.reserve(), 0)
    assert.equal(b.reserve(), 250)
    await clock.advance(250)
    assert.equal(b.reserve(), 250, 'the token at 250 ms was already taken')
  })

  test('tryTake takes only a token available now', async () => {
    const clock = new ManualClock()
    const b = new TokenBucket({ qps: 1, burst: 2, clock })
    assert.equal(b.tryTake(), true)
    assert.equal(b.tryTake(), true)
    assert.equal(b.tryTake(), false)
    assert.equal(b.reserve(), 1000, 'a failed tryTake reserved nothing')
    await clock.advance(2000)
    assert.equal(b.tryTake(), true)
  })

  test('qps Infinity never delays', () => {
    const b = new TokenBucket({ qps: Number.POSITIVE_INFINITY, burst: 1, clock: new ManualClock() })
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0])
  })

  test('rejects qps ≤ 0 and bursts that are not positive integers', () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), invalid)
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), invalid)
    assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), invalid)
  })
})

describe('bucket rate limiter', SUITE, () => {
  test('defaults to 10 qps / burst 100 shared by all items, without per-item history', () => {
    assert.equal(DEFAULT_BUCKET_QPS, 10)
    assert.equal(DEFAULT_BUCKET_BURST, 100)
    const l = bucketRateLimiter<string>({ clock: new ManualClock() })
    for (let i = 0; i < 100; i++) assert.equal(l.when(`item-${i}`), 0)
    assert.equal(l.when('other'), 100)
    assert.equal(l.when('again'), 200)
    assert.equal(l.numRequeues('other'), 0)
    l.forget('other')
    assert.equal(l.when('other'), 300, 'forget does not return tokens')
  })

  test('accepts a shared token bucket', () => {
    const bucket = new TokenBucket({ qps: 1, burst: 1, clock: new ManualClock() })
    const a = bucketRateLimiter<string>(bucket)
    const b = bucketRateLimiter<string>(bucket)
    assert.equal(a.when('x'), 0)
    assert.equal(b.when('y'), 1000)
  })
})

describe('combinators', SUITE, () => {
  test('maxOf asks every limiter, returns the largest delay and count, forwards forget', () => {
    const fast = itemExponentialRateLimiter<string>({ baseMs: 1, maxMs: 1000 })
    const slow = itemFastSlowRateLimiter<string>(3, 500, 2)
    const l = maxOfRateLimiter(fast, slow)
    assert.deepEqual(whens(l, 'a', 4), [3, 3, 500, 500])
    assert.equal(fast.numRequeues('a'), 4, 'every limiter recorded every failure')
    assert.equal(slow.numRequeues('a'), 4)
    fast.forget('a')
    assert.equal(l.numRequeues('a'), 4, 'the largest count')
    l.forget('a')
    assert.equal(slow.numRequeues('a'), 0)
    assert.equal(maxOfRateLimiter<string>().when('a'), 0)
  })

  test('withMaxWait caps the delay while the wrapped limiter still counts', () => {
    const inner = itemExponentialRateLimiter<string>({ baseMs: 100, maxMs: 100_000 })
    const l = withMaxWaitRateLimiter(inner, 250)
    assert.deepEqual(whens(l, 'a', 4), [100, 200, 250, 250])
    assert.equal(l.numRequeues('a'), 4)
    l.forget('a')
    assert.equal(inner.numRequeues('a'), 0)
  })
})

describe('default controller rate limiter', SUITE, () => {
  test('per-item backoff while the overall burst lasts', () => {
    const l = defaultControllerRateLimiter<string>({ clock: new ManualClock() })
    assert.deepEqual(whens(l, 'hot', 12), [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240])
    assert.equal(l.numRequeues('hot'), 12)
  })

  test('the overall bucket spreads retries of many items to 10 per second', async () => {
    const clock = new ManualClock()
    const l = defaultControllerRateLimiter<string>({ clock })
    const first = Array.from({ length: 100 }, (_, i) => l.when(`item-${i}`))
    assert.ok(
      first.every((d) => d === 5),
      'burst of 100: only the 5 ms per-item delay',
    )
    assert.equal(l.when('item-100'), 100)
    assert.equal(l.when('item-101'), 200)
    await clock.advance(10_000) // refill: 100 tokens, −2 reserved → 98
    assert.equal(l.when('item-102'), 5)
  })
})
