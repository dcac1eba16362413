/**
 * Edge sites behind an egress proxy: REST calls and watches reach the API server through real
 * proxies (tinyproxy for HTTP CONNECT, microsocks for SOCKS5, both from Debian's packages), over
 * HTTP/2 and HTTP/1.1, as a kubeconfig `proxy-url` with a user and password sends them; the
 * password never shows in an error; a proxy that restarts mid-watch costs a reconnect, not a relist.
 *
 * Chain: client → proxy → fault proxy (records each request and its HTTP version) → apiserver.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { serverState, watchInformer } from '../support/informers.ts'
import { adminClient, adminConfig } from '../support/kube.ts'
import { type ProxyServer, startMicrosocks, startTinyproxy } from '../support/proxy-servers.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

const USER = { name: 'edge', password: 'pr0xy-s3cret' }

const proxies: [string, (user: typeof USER) => Promise<ProxyServer>][] = [
  ['tinyproxy (HTTP CONNECT)', startTinyproxy],
  ['microsocks (SOCKS5)', startMicrosocks],
]

function proxiedClient(server: string, proxyUrl: string, http2 = true): KubeClient {
  return new KubeClient({ ...adminConfig(env(), server), proxyUrl }, { qps: -1, http2, proxyEnvironment: {} })
}

for (const [name, start] of proxies) {
  for (const http2 of [true, false]) {
    test(`${name}, HTTP/${http2 ? '2' : '1.1'}: REST calls and a watch go through proxy-url with its user`, async () => {
      const proxy = await start(USER)
      const fault = await env().startFaultProxy()
      const client = proxiedClient(fault.url, proxy.url, http2)
      defer(
        () => proxy.stop(),
        () => fault.close(),
        () => client.close(),
      )
      const ns = await env().createNamespace('proxied')
      const api = client.resource(CORE_TYPES.configMaps, ns)
      await api.create({ metadata: { name: 'a' }, data: { v: '1' } })
      const w = watchInformer(client, CORE_TYPES.configMaps, ns, { streaming: 'off' })
      defer(() => w.stop())
      await w.informer.waitForSync()
      await api.create({ metadata: { name: 'b' } })
      await eventually(() => w.seen.has(`${ns}/b`), { timeoutMs: 15_000, what: 'the watch delivers b' })

      const seen = fault.requests()
      assert.ok(
        seen.some((r) => r.watch && r.status === 200),
        'a watch went through the proxy',
      )
      assert.deepEqual(new Set(seen.map((r) => r.httpVersion)), new Set([http2 ? '2' : '1.1']))
      assert.equal(client.transport.proxy, `${new URL(proxy.url).protocol}//127.0.0.1:${proxy.port}`)
      const target = `127\\.0\\.0\\.1:${new URL(fault.url).port}`
      assert.match(proxy.log(), new RegExp(`(CONNECT|connected to) ${target}`), 'the proxy opened the tunnel')
    })
  }

  test(`${name}: a wrong password fails as EDGEOP_ERR_NETWORK naming the proxy, never the password`, async () => {
    const proxy = await start(USER)
    defer(() => proxy.stop())
    const wrong = proxy.url.replace(encodeURIComponent(USER.password), 'wr0ng-pa55')
    const client = proxiedClient(env().server, wrong)
    defer(() => client.close())
    const err = await client.request({ method: 'GET', path: '/version' }).then(
      () => assert.fail('the proxy let a wrong password through'),
      (e: Error & { code?: string }) => e,
    )
    assert.equal(err.code, 'EDGEOP_ERR_NETWORK')
    assert.match(err.message, new RegExp(`proxy [a-z0-9]+://127\\.0\\.0\\.1:${proxy.port} failed`))
    const everything = JSON.stringify([
      String(err),
      String(err.cause),
      (err.cause as Error)?.message,
      err.stack,
    ])
    assert.doesNotMatch(everything, /wr0ng-pa55|pr0xy-s3cret/)
    assert.match(
      err.message,
      name.startsWith('tinyproxy')
        ? /answered 40[17]: the proxy wants other credentials/
        : /refused the username and password/,
    )
  })
}

test('a SOCKS5 proxy restarting mid-watch: the watch resumes from its resourceVersion, no relist', async () => {
  const proxy = await startMicrosocks(USER)
  const fault = await env().startFaultProxy()
  const client = proxiedClient(fault.url, proxy.url)
  const direct = adminClient(env(), env().server)
  defer(
    () => proxy.stop(),
    () => fault.close(),
    () => client.close(),
    () => direct.close(),
  )
  const ns = await env().createNamespace('proxy-restart')
  const api = direct.resource(CORE_TYPES.configMaps, ns)
  await api.create({ metadata: { name: 'before' } })
  const w = watchInformer(client, CORE_TYPES.configMaps, ns, { streaming: 'off' })
  defer(() => w.stop())
  await w.informer.waitForSync()
  const lists = () => fault.requests((r) => !r.watch && r.path.endsWith('/configmaps')).length
  const listsBefore = lists()
  const watchesBefore = fault.requests((r) => r.watch).length

  await proxy.stop() // every tunnel breaks at once; reconnects are refused while it is down
  await api.create({ metadata: { name: 'while-down' } })
  await new Promise((r) => setTimeout(r, 2_000))
  await proxy.start()
  await api.create({ metadata: { name: 'after' } })

  const expected = await serverState(direct, CORE_TYPES.configMaps, ns)
  await eventually(() => [...expected.keys()].every((k) => w.seen.has(k)), {
    timeoutMs: 60_000,
    what: 'the informer catches up through the restarted proxy',
  })
  const resumed = fault.requests((r) => r.watch).slice(watchesBefore)
  assert.ok(resumed.length >= 1, 'a new watch went through the restarted proxy')
  assert.ok(
    resumed.every((r) => (r.params.get('resourceVersion') ?? '') !== ''),
    'every watch after the restart resumed from a resourceVersion',
  )
  assert.equal(lists(), listsBefore, 'no relist')
})
