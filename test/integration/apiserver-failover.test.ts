/**
 * An API server that moves: two kube-apiservers on one etcd (the test plane's cached and uncached
 * ones) behind one address, a forwarder whose target switches from the first to the second while
 * the connections to the first are cut, as a virtual IP that fails over. The client reconnects to
 * the survivor and its watch resumes from its resourceVersion there, without a relist.
 *
 * Chain: client → switching forwarder (127.0.0.1) → fault proxy A or B (records requests) → apiserver A or B.
 */
import assert from 'node:assert/strict'
import { connect, createServer, type Socket } from 'node:net'
import { test } from 'node:test'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { serverState, watchInformer } from '../support/informers.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

/** A TCP forwarder on 127.0.0.1 whose target port can be switched; `cut()` resets every open flow. */
async function switchingForwarder(target: number) {
  const flows = new Set<Socket>()
  let to = target
  const server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: to })
    flows.add(client)
    client.pipe(upstream).pipe(client)
    const end = () => {
      flows.delete(client)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void server.once('listening', r))
  return {
    port: (server.address() as { port: number }).port,
    switchTo(port: number) {
      to = port
    },
    cut() {
      for (const f of flows) f.resetAndDestroy()
    },
    close() {
      server.close()
      for (const f of flows) f.destroy()
    },
  }
}

test('the address fails over to a second apiserver on the same etcd: the watch resumes there from its resourceVersion, no relist', async (t) => {
  const a = await env().startFaultProxy({ apiserver: 'cached' })
  const b = await env().startFaultProxy({ apiserver: 'uncached' })
  const address = await switchingForwarder(Number(new URL(a.url).port))
  const client = adminClient(env(), `https://127.0.0.1:${address.port}`)
  const direct = adminClient(env(), env().server)
  defer(
    () => a.close(),
    () => b.close(),
    () => address.close(),
    () => client.close(),
    () => direct.close(),
  )
  const ns = await env().createNamespace('failover')
  const api = direct.resource(CORE_TYPES.configMaps, ns)
  await api.create({ metadata: { name: 'before' } })
  const w = watchInformer(client, CORE_TYPES.configMaps, ns, { streaming: 'off' })
  defer(() => w.stop())
  await w.informer.waitForSync()
  await api.create({ metadata: { name: 'on-a' } })
  await eventually(() => w.seen.has(`${ns}/on-a`), { timeoutMs: 10_000, what: 'the watch on A delivers' })

  const cutAt = performance.now()
  address.switchTo(Number(new URL(b.url).port))
  address.cut()
  await api.create({ metadata: { name: 'after-failover' } })
  const expected = await serverState(direct, CORE_TYPES.configMaps, ns)
  await eventually(() => [...expected.keys()].every((k) => w.seen.has(k)), {
    timeoutMs: 30_000,
    what: 'the informer catches up through B',
  })
  t.diagnostic(`caught up through B ${Math.round(performance.now() - cutAt)} ms after the failover`)

  const onB = b.requests((r) => r.path.endsWith('/configmaps'))
  assert.ok(onB.length >= 1, 'the client reached B')
  assert.equal(onB.filter((r) => !r.watch).length, 0, 'no list on B: no relist')
  assert.ok(
    onB.every((r) => r.watch && (r.params.get('resourceVersion') ?? '') !== ''),
    'every watch on B resumed from a resourceVersion',
  )
})
