/**
 * Each step of a request that can run out of time, against a local server that stalls at
 * exactly that step, with short injected limits: the error names the step (stable `reason`)
 * and its actual limit, with code `EDGEOP_ERR_TIMEOUT` and `retryable: true`.
 */
import assert from 'node:assert/strict'
import { type AddressInfo, createServer } from 'node:net'
import { after, test } from 'node:test'
import { Transport, type TransportOptions } from '../../src/transport/transport.ts'
import { startStub } from '../support/http-stub.ts'
import { neverAcceptingListener } from '../support/never-accepting.ts'

const cleanups: (() => unknown)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c()
})

function transport(server: string, options: TransportOptions, insecureSkipVerify = false): Transport {
  const t = new Transport(
    { server, tls: { insecureSkipVerify }, namespace: 'default', source: 'test' },
    { qps: -1, maxRetries: 0, ...options },
  )
  cleanups.push(() => t.close())
  return t
}

const timeout = (reason: string, message: string) => ({
  code: 'EDGEOP_ERR_TIMEOUT',
  retryable: true,
  status: 0,
  reason,
  message,
})

test('TCP connect that never completes: ConnectTimeout with the connect timeout', async () => {
  const listener = await neverAcceptingListener()
  cleanups.push(listener.stop)
  const t = transport(`http://127.0.0.1:${listener.port}`, { connectTimeoutMs: 150, timeoutMs: 0 })
  try {
    await assert.rejects(
      t.request({ method: 'GET', path: '/api' }),
      timeout(
        'ConnectTimeout',
        'GET /api: ConnectTimeout: TCP connect not done within 150 ms (connect timeout)',
      ),
    )
  } finally {
    listener.stop() // before the pool closes: the kernel then resets what it queued
  }
})

test('TLS handshake that never completes: TLSHandshakeTimeout with the connect timeout', async () => {
  const server = createServer(() => {}) // accepts, then never answers the ClientHello
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  const port = (server.address() as AddressInfo).port
  const t = transport(`https://127.0.0.1:${port}`, { connectTimeoutMs: 150, timeoutMs: 0 }, true)
  await assert.rejects(
    t.request({ method: 'GET', path: '/api' }),
    timeout(
      'TLSHandshakeTimeout',
      'GET /api: TLSHandshakeTimeout: TLS handshake not done within 150 ms (connect timeout)',
    ),
  )
})

async function stallingStub() {
  const stub = await startStub((r, res) => {
    if (r.url.startsWith('/no-headers')) return
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"items":[') // ... and never the rest
  })
  cleanups.push(() => stub.close())
  return stub
}

test('a server that never sends headers: HeadersTimeout with the headers timeout', async () => {
  const stub = await stallingStub()
  const t = transport(stub.url, { headersTimeoutMs: 150, timeoutMs: 0 })
  await assert.rejects(
    t.request({ method: 'GET', path: '/no-headers?limit=1' }),
    timeout(
      'HeadersTimeout',
      'GET /no-headers: HeadersTimeout: no response headers within 150 ms (headers timeout)',
    ),
  )
})

test('a body that stalls midway: BodyTimeout with the body timeout, for a request and a watch', async () => {
  const stub = await stallingStub()
  const t = transport(stub.url, { bodyTimeoutMs: 150, timeoutMs: 0 })
  const message = (p: string, ms: number) =>
    `GET ${p}: BodyTimeout: the response body stalled: no data for ${ms} ms (body timeout)`
  await assert.rejects(
    t.request({ method: 'GET', path: '/list' }),
    timeout('BodyTimeout', message('/list', 150)),
  )

  const watch = await t.stream({ method: 'GET', path: '/watch?watch=1', idleTimeoutMs: 120 })
  const chunks = watch.body[Symbol.asyncIterator]()
  assert.match(Buffer.from((await chunks.next()).value as Uint8Array).toString(), /items/)
  await assert.rejects(chunks.next(), timeout('BodyTimeout', message('/watch', 120)))
})

test('our own request deadline, before the headers and during the body: RequestDeadline with timeoutMs', async () => {
  const stub = await stallingStub()
  const t = transport(stub.url, { timeoutMs: 150, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000 })
  await assert.rejects(
    t.request({ method: 'GET', path: '/no-headers' }),
    timeout(
      'RequestDeadline',
      'GET /no-headers: RequestDeadline: the request deadline of 150 ms (timeoutMs) passed before the response headers came',
    ),
  )
  await assert.rejects(
    t.request({ method: 'GET', path: '/list', timeoutMs: 200 }),
    timeout(
      'RequestDeadline',
      'GET /list: RequestDeadline: the request deadline of 200 ms (timeoutMs) passed while the response body was read',
    ),
  )
})
