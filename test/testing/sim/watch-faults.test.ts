/**
 * The watch views faults set (lag, coalescing), the streaming list, and the seeded clock's tie-breaks.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES, KubeClient } from '../../../src/client/index.ts'
import type { KubeObject, WatchEvent } from '../../../src/core/index.ts'
import { ApiServerModel, Prng, VirtualClock } from '../../../src/testing/index.ts'

const settle = () => new Promise((r) => setImmediate(r))

function setup() {
  const clock = new VirtualClock(new Prng(7))
  const model = new ApiServerModel(clock)
  const client = new KubeClient(
    {
      server: 'https://simulated.invalid',
      tls: { insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { exchange: model.exchange('p'), clock, qps: -1 },
  )
  return { clock, model, cms: client.resource(CORE_TYPES.configMaps, 'default') }
}

async function collect(
  clock: VirtualClock,
  events: AsyncIterable<WatchEvent<KubeObject>>,
  act: () => Promise<void>,
  untilMs: number,
) {
  const got: string[] = []
  const reading = (async () => {
    for await (const e of events) got.push(`${e.type} ${e.object.metadata.name ?? ''}`)
  })().catch(() => {})
  await settle()
  await act()
  while (clock.fireNext(clock.now() + untilMs)) await settle()
  await settle()
  return { got, reading }
}

test("a coalescing view merges one object's undelivered events: created then changed arrives as one ADDED, created then deleted not at all", async () => {
  const { clock, model, cms } = setup()
  model.views.set('p', { lagMs: 1_000, coalesce: true })
  const watch = await cms.openWatch({ resourceVersion: '1' })
  const { got } = await collect(
    clock,
    watch.events,
    async () => {
      const a = await cms.create({ metadata: { name: 'a' } })
      await cms.update({ ...a, data: { x: '1' } } as KubeObject)
      await cms.create({ metadata: { name: 'b' } })
      await cms.delete('b')
    },
    5_000,
  )
  watch.close()
  assert.deepEqual(got, ['ADDED a'])
})

test('a lagging view delivers nothing before its lag and everything in order after it', async () => {
  const { clock, model, cms } = setup()
  model.views.set('p', { lagMs: 10_000, coalesce: false })
  const watch = await cms.openWatch({ resourceVersion: '1' })
  const { got } = await collect(
    clock,
    watch.events,
    async () => {
      await cms.create({ metadata: { name: 'a' } })
      await cms.create({ metadata: { name: 'b' } })
    },
    9_000,
  )
  assert.deepEqual(got, [])
  while (clock.fireNext(clock.now() + 2_000)) await settle()
  await settle()
  watch.close()
  assert.deepEqual(got, ['ADDED a', 'ADDED b'])
})

test('a streaming list sends the current objects, then the initial-events-end bookmark', async () => {
  const { cms } = setup()
  await cms.create({ metadata: { name: 'a' } })
  const watch = await cms.openWatch({
    sendInitialEvents: true,
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: true,
  })
  const seen: WatchEvent<KubeObject>[] = []
  for await (const e of watch.events) {
    seen.push(e)
    if (e.type === 'BOOKMARK') break
  }
  watch.close()
  assert.deepEqual(
    seen.map((e) => e.type),
    ['ADDED', 'BOOKMARK'],
  )
  assert.equal(seen[1]?.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true')
})

test('timers due at the same instant fire in an order the seed chooses, the same for the same seed', () => {
  const order = (seed: number) => {
    const clock = new VirtualClock(new Prng(seed))
    const fired: number[] = []
    for (let i = 0; i < 8; i++) clock.setTimer(() => fired.push(i), 100)
    while (clock.fireNext(clock.now() + 1_000));
    return fired.join(',')
  }
  assert.equal(order(1), order(1))
  const orders = new Set([1, 2, 3, 4, 5].map(order))
  assert.ok(orders.size > 1, 'different seeds, different interleavings')
})
