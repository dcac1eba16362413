/**
 * A controller over an informer started from a cache snapshot: by default it reconciles nothing
 * while the cache is `restored` and starts once the resumed watch caught up (its first bookmark);
 * with `actOnRestored` it works on the snapshot at once (the node agent's choice).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { SharedInformer } from '../../src/cache/informer.ts'
import { encodeSnapshot, type SnapshotIdentity } from '../../src/cache/snapshot-format.ts'
import { Controller } from '../../src/controller/controller.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { FakeStream, scripted } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'

const ID: SnapshotIdentity = {
  resource: '/v1/configmaps',
  namespace: 'ns',
  labelSelector: '',
  fieldSelector: '',
  metadataOnly: false,
  tag: 't',
}
const cm = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv },
})

let dir = ''
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-restored-'))
})
after(() => rm(dir, { recursive: true, force: true }))

async function start(name: string, actOnRestored: boolean) {
  const path = join(dir, `${name}.snapshot`)
  // The snapshot still holds `gone`, deleted on the server while the process was down.
  await writeFile(path, encodeSnapshot(ID, '42', [cm('kept', '40'), cm('gone', '41')]))
  const stream = new FakeStream()
  const lw = scripted([], [stream])
  const clock = new ManualClock()
  const informer = new SharedInformer(lw, { clock, snapshot: { path, identity: ID } })
  const seen: string[] = []
  const ctl = new Controller({
    name,
    for: { source: informer, kind: 'ConfigMap', group: '', namespaced: true },
    reconcile: async (r) => {
      seen.push(`${r.name}:${informer.store.get(`ns/${r.name}`) ? 'present' : 'absent'}`)
    },
    clock,
    logger: noopLogger,
    ...(actOnRestored ? { actOnRestored } : {}),
  })
  const ac = new AbortController()
  const running = Promise.all([informer.run(ac.signal), ctl.run(ac.signal)])
  await informer.whenRestored()
  await until(() => lw.calls.length === 2) // the limit=1 list (never answered here) and the watch
  const stop = async (): Promise<void> => {
    ac.abort()
    await running
  }
  return { informer, ctl, stream, clock, seen, stop }
}

async function settle(clock: ManualClock): Promise<void> {
  await clock.advance(100)
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
}

test('a controller does not reconcile a restored cache: it waits for the watch to catch up (a bookmark here), and then sees the deletion', async () => {
  const t = await start('strict', false)
  await settle(t.clock)
  assert.deepEqual(t.seen, [], 'nothing reconciled on the snapshot')
  assert.equal(t.ctl.hasSynced(), false)
  t.stream.push({ type: 'DELETED', object: cm('gone', '43') })
  await settle(t.clock)
  assert.deepEqual(t.seen, [], 'an event is not the end of the backlog')
  t.stream.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '50' } } })
  await until(() => t.seen.length === 2)
  assert.deepEqual(t.seen.sort(), ['gone:absent', 'kept:present'])
  await t.stop()
})

test('a controller with actOnRestored reconciles the snapshot before the watch caught up', async () => {
  const t = await start('trusting', true)
  await until(() => t.seen.length === 2)
  assert.deepEqual(t.seen.sort(), ['gone:present', 'kept:present'])
  assert.equal(t.informer.syncState(), 'restored')
  await t.stop()
})
