/** The Shard's pass against a recording fake client (narrow: the real apiserver runs in test/integration/sharding.test.ts). */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject, Lease } from '../../src/core/types.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { MOVES_IN_FLIGHT, Shard } from '../../src/sharding/shard.ts'

const LABEL = 'shard.edgeop.io/ring'

test('a pass over many unassigned objects has at most MOVES_IN_FLIGHT relabels in flight (a Lease renewal queues behind no more)', async () => {
  const clock = new ManualClock()
  const orphans: KubeObject[] = Array.from({ length: 200 }, (_, i) => ({
    metadata: { name: `app-${i}`, namespace: 'ns', resourceVersion: `${i}` },
  }))
  const lease: Lease = {
    metadata: { name: 'ring-me', resourceVersion: '1', labels: { [LABEL]: 'me' } },
    spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
  }
  let inFlight = 0
  let most = 0
  const patched: string[] = []
  const client = {
    resource: () => ({
      listMetadata: async () => ({ items: orphans }),
      list: async () => ({ items: [lease] }),
      patch: async (name: string) => {
        most = Math.max(most, ++inFlight)
        await new Promise((r) => setImmediate(r))
        inFlight--
        patched.push(name)
        return {}
      },
    }),
  } as unknown as KubeClient
  const shard = new Shard({ client, ring: 'ring', namespace: 'ns', id: 'me', clock })
  shard.own(APPSERVICES, { store: { get: () => undefined, list: () => [], size: 0 }, namespaces: ['ns'] })
  const stop = new AbortController()
  const running = shard.run(stop.signal)
  // The first pass learns the members; the second takes every orphan (this member is the only one).
  await clock.advance(2000)
  for (let i = 0; i < 50 && patched.length < orphans.length; i++) await new Promise((r) => setImmediate(r))
  stop.abort()
  await clock.advance(2000)
  await running
  assert.equal(patched.length, orphans.length, 'every orphan taken')
  assert.equal(most, MOVES_IN_FLIGHT)
})
