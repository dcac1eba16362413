import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type Lease, LeaseQueue } from './lease.ts'

/** Lets granted promises settle. */
const tick = () => new Promise((resolve) => setImmediate(resolve))

/** Tracks a pending request; `lease()` is a call so assertions on it do not narrow its type. */
function track(p: Promise<Lease>): { lease(): Lease | undefined } {
  let value: Lease | undefined
  p.then(
    (l) => {
      value = l
    },
    () => {},
  )
  return { lease: () => value }
}

test('shared leases are granted together; an exclusive one waits for all of them', async () => {
  const q = new LeaseQueue()
  const a = await q.acquire('shared')
  const b = await q.acquire('shared')
  const x = track(q.acquire('exclusive'))
  await tick()
  assert.equal(x.lease(), undefined)
  a.release()
  await tick()
  assert.equal(x.lease(), undefined)
  b.release()
  await tick()
  assert.equal(x.lease()?.mode, 'exclusive')
  assert.equal(q.modeOf(x.lease()?.id ?? ''), 'exclusive')
})

test('a waiting exclusive request keeps later shared requests out (no starvation), first come first served', async () => {
  const q = new LeaseQueue()
  const a = await q.acquire('shared')
  const x = track(q.acquire('exclusive'))
  const s = track(q.acquire('shared'))
  await tick()
  assert.equal(s.lease(), undefined, 'shared waits behind the exclusive request')
  a.release()
  await tick()
  assert.ok(x.lease())
  assert.equal(s.lease(), undefined)
  x.lease()?.release()
  await tick()
  assert.equal(s.lease()?.mode, 'shared')
  assert.deepEqual(q.size, { holders: 1, waiting: 0 })
})

test('the after-exclusive hook runs before the next grant', async () => {
  const order: string[] = []
  let finishHeal: () => void = () => {}
  const q = new LeaseQueue(async () => {
    order.push('heal')
    await new Promise<void>((resolve) => {
      finishHeal = resolve
    })
  })
  const x = await q.acquire('exclusive')
  const s = track(q.acquire('shared'))
  x.release()
  x.release() // harmless
  await tick()
  assert.deepEqual(order, ['heal'])
  assert.equal(s.lease(), undefined, 'not granted while healing')
  finishHeal()
  await tick()
  assert.ok(s.lease())
})

test('aborting a waiting request withdraws it and lets the queue move on', async () => {
  const q = new LeaseQueue()
  const a = await q.acquire('shared')
  const abort = new AbortController()
  const x = q.acquire('exclusive', abort.signal)
  const s = track(q.acquire('shared'))
  abort.abort(new Error('gone'))
  await assert.rejects(x, /gone/)
  await tick()
  assert.ok(s.lease(), 'the shared request behind the withdrawn exclusive one is granted')
  a.release()
})
