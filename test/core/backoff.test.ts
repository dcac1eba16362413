import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Backoff } from '../../src/core/backoff.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { TokenBucket } from '../../src/core/token-bucket.ts'

test('kubernetes/kubernetes#87795: consecutive failures back off in [0.8,1.6), [1.6,3.2), … capped at [30,60) s', () => {
  const clock = new ManualClock()
  for (const r of [0, 0.999]) {
    const b = new Backoff({ clock, random: () => r })
    const got = Array.from({ length: 8 }, () => b.next())
    const bases = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]
    assert.deepEqual(
      got.map((g) => Math.round(g)),
      bases.map((d) => Math.round(d + r * d)),
    )
  }
})

test('backoff resets to the initial delay after 2 minutes without a failure', async () => {
  const clock = new ManualClock()
  const b = new Backoff({ clock, random: () => 0 })
  b.next()
  b.next()
  assert.equal(b.next(), 3200)
  await clock.advance(119_999)
  assert.equal(b.next(), 6400, 'still inside the reset window')
  await clock.advance(120_000)
  assert.equal(b.next(), 800)
})

test('token bucket starts full, refills at qps, and queues reservations', async () => {
  const clock = new ManualClock()
  const bucket = new TokenBucket({ qps: 5, burst: 10, clock })
  for (let i = 0; i < 10; i++) assert.equal(bucket.reserve(), 0)
  assert.equal(bucket.reserve(), 200, 'the 11th token is 1/5 s away')
  assert.equal(bucket.reserve(), 400, 'the 12th queues behind it')
  await clock.advance(400)
  assert.equal(bucket.tryTake(), false)
  await clock.advance(10_000)
  assert.equal(Math.round(bucket.tokens()), 10, 'never more than burst')
  assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), /qps must be > 0/)
})

test('a pending sleep on the real clock keeps the process alive until it resolves', async () => {
  const { execFile } = await import('node:child_process')
  const code = "import { sleep } from './src/core/clock.ts'; await sleep(200); process.stdout.write('woke')"
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code],
      { cwd: new URL('../..', import.meta.url).pathname },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  )
  assert.equal(out, 'woke')
})
