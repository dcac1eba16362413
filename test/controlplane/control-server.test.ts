import assert from 'node:assert/strict'
import { type ClientRequest, request } from 'node:http'
import { after, before, test } from 'node:test'
import type { ControlPlane } from './control-plane.ts'
import { ControlServer, LEASE_HEADER } from './control-server.ts'

/** Records the calls a real control plane would get. */
const calls: string[] = []
const fakePlane = {
  info: { servers: { cached: 'https://127.0.0.1:1' } },
  timings: { pki: 1, etcd: 2, apiservers: 3, total: 6 },
  stats: async () => [],
  compact: async () => {
    calls.push('compact')
    return 42
  },
  createNamespace: async (prefix?: string) => `${prefix ?? 'test'}-abc`,
  heal: async () => {
    calls.push('heal')
  },
} as unknown as ControlPlane

let server: ControlServer

before(async () => {
  server = await ControlServer.start(fakePlane)
})
after(() => server.close())

function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  return new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      { method, agent: false, headers: { authorization: `Bearer ${server.token}`, ...headers } },
      (res) => {
        let text = ''
        res.on('data', (c) => {
          text += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }))
      },
    )
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** Opens a lease connection; resolves when granted. */
function lease(mode: 'shared' | 'exclusive'): { granted: Promise<string>; close(): void } {
  let req: ClientRequest | undefined
  const granted = new Promise<string>((resolve, reject) => {
    req = request(`${server.url}/v1/lease?mode=${mode}`, {
      agent: false,
      headers: { authorization: `Bearer ${server.token}` },
    })
    req.on('response', (res) =>
      res.once('data', (c: Buffer) => resolve((JSON.parse(c.toString()) as { id: string }).id)),
    )
    req.on('error', () => {})
    req.end()
    setTimeout(() => reject(new Error('not granted')), 5_000).unref()
  })
  return { granted, close: () => req?.destroy() }
}

test('rejects calls without the token', async () => {
  const res = await call('GET', '/v1/info', { authorization: 'Bearer wrong' })
  assert.equal(res.status, 401)
})

test('serves info and namespaces', async () => {
  assert.deepEqual((await call('GET', '/v1/info')).json, { servers: { cached: 'https://127.0.0.1:1' } })
  assert.deepEqual((await call('POST', '/v1/namespaces', {}, { prefix: 'x' })).json, { name: 'x-abc' })
  assert.equal((await call('POST', '/v1/nope')).status, 404)
})

test('disruptive controls need an exclusive lease, which waits for shared holders and heals afterwards', async () => {
  calls.length = 0
  const shared = lease('shared')
  const sharedId = await shared.granted
  const denied = await call('POST', '/v1/compact', { [LEASE_HEADER]: sharedId })
  assert.equal(denied.status, 409)
  assert.match(String(denied.json.error), /exclusive: true/)

  const exclusive = lease('exclusive')
  let grantedAt = 0
  void exclusive.granted.then(() => {
    grantedAt = Date.now()
  })
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(grantedAt, 0, 'waits while a shared lease is held')
  const closedAt = Date.now()
  shared.close()
  const id = await exclusive.granted
  assert.ok(grantedAt >= closedAt)
  assert.deepEqual((await call('POST', '/v1/compact', { [LEASE_HEADER]: id })).json, { revision: 42 })
  exclusive.close()
  const next = lease('shared')
  await next.granted
  next.close()
  assert.deepEqual(calls, ['compact', 'heal'])
})
