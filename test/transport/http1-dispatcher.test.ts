/**
 * HTTP/1.1 through node:http (src/transport/http1-dispatcher.ts), against local servers: undici's
 * error codes for each timeout (with the connect step noted), abort with the signal's reason,
 * keep-alive reuse, the body timeout held off while the reader is behind, a TLS server without
 * h2 taking the transport from undici to HTTP/1.1 for good, and a watch over chunked encoding.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { type AddressInfo, createServer as createTcpServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { ResourceClient } from '../../src/client/resource-client.ts'
import { connectTimeoutStep } from '../../src/transport/connect-timeout.ts'
import type { ExchangeRequest } from '../../src/transport/exchange.ts'
import { Http1Dispatcher, type Http1Options } from '../../src/transport/http1-dispatcher.ts'
import { Transport } from '../../src/transport/transport.ts'
import { json, startStub, until } from '../support/http-stub.ts'
import { neverAcceptingListener } from '../support/never-accepting.ts'
import { selfSignedCert } from '../support/self-signed.ts'

const dir = mkdtempSync(join(tmpdir(), 'edgeop-h1-'))
const cleanups: (() => unknown)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c()
  rmSync(dir, { recursive: true, force: true })
})

function dispatcher(origin: string, o: Partial<Http1Options> = {}): Http1Dispatcher {
  const d = new Http1Dispatcher(origin, {
    connections: 25,
    keepAliveMs: 60_000,
    tcpKeepAliveMs: 30_000,
    connectTimeoutMs: 10_000,
    rejectUnauthorized: true,
    ...o,
  })
  cleanups.push(() => d.close())
  return d
}

const get = (path: string, o: Partial<ExchangeRequest> = {}): ExchangeRequest => ({
  method: 'GET',
  path,
  headers: { accept: 'application/json' },
  body: undefined,
  signal: undefined,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
  ...o,
})

async function stub(...args: Parameters<typeof startStub>) {
  const s = await startStub(...args)
  cleanups.push(() => s.close())
  return s
}

test('a request and its response: status, lower-case headers, a body read whole, a string body sent with its length', async () => {
  const s = await stub((r, res) =>
    json(res, 201, { got: r.body }, { 'X-Mixed-Case': 'v', 'Retry-After': '3' }),
  )
  const res = await dispatcher(s.url).request(
    get('/x?y=1', { method: 'POST', body: '{"a":"é"}', headers: { 'content-type': 'application/json' } }),
  )
  assert.equal(res.statusCode, 201)
  assert.equal(res.headers['x-mixed-case'], 'v')
  assert.equal(res.headers['retry-after'], '3')
  assert.deepEqual(JSON.parse(await res.body.text()), { got: '{"a":"é"}' })
  assert.equal(s.seen[0]?.url, '/x?y=1')
  assert.equal(s.seen[0]?.headers['content-length'], '10', 'bytes, not characters')
})

test('keep-alive: sequential requests reuse one connection', async () => {
  const ports = new Set<number>()
  const s = await stub((_r, res) => {
    ports.add(res.socket!.remotePort!)
    json(res, 200, {})
  })
  const d = dispatcher(s.url)
  for (let i = 0; i < 3; i++) await (await d.request(get('/k'))).body.text()
  assert.equal(s.seen.length, 3)
  assert.equal(ports.size, 1, 'one client port: one connection')
  assert.equal(d.connections, 1)
})

test('TCP connect that never completes: UND_ERR_CONNECT_TIMEOUT, noted as the connect step', async () => {
  const listener = await neverAcceptingListener()
  cleanups.push(listener.stop)
  const d = dispatcher(`http://127.0.0.1:${listener.port}`, { connectTimeoutMs: 150 })
  await assert.rejects(d.request(get('/api')), (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, 'UND_ERR_CONNECT_TIMEOUT')
    assert.deepEqual(connectTimeoutStep(err), { step: 'connect', timeoutMs: 150 })
    return true
  })
})

test('TLS handshake that never completes, over HTTP/1.1 (http2: false): TLSHandshakeTimeout', async () => {
  // Reads the ClientHello and never answers it (reading, so that it sees the client's FIN and closes).
  const server = createTcpServer((c) => c.resume())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  const t = new Transport(
    {
      server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      tls: { insecureSkipVerify: true },
      namespace: 'default',
      source: 'test',
    },
    { qps: -1, maxRetries: 0, timeoutMs: 0, connectTimeoutMs: 150, http2: false },
  )
  cleanups.push(() => t.close())
  await assert.rejects(t.request({ method: 'GET', path: '/api' }), {
    code: 'EDGEOP_ERR_TIMEOUT',
    reason: 'TLSHandshakeTimeout',
    message: 'GET /api: TLSHandshakeTimeout: TLS handshake not done within 150 ms (connect timeout)',
  })
})

test('no response headers in time: UND_ERR_HEADERS_TIMEOUT; a body that stalls: UND_ERR_BODY_TIMEOUT', async () => {
  const s = await stub((r, res) => {
    if (r.url === '/no-headers') return
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"items":[')
  })
  const d = dispatcher(s.url)
  await assert.rejects(d.request(get('/no-headers', { headersTimeout: 100 })), {
    code: 'UND_ERR_HEADERS_TIMEOUT',
  })
  const res = await d.request(get('/stall', { bodyTimeout: 100 }))
  const chunks = res.body[Symbol.asyncIterator]()
  assert.match(String((await chunks.next()).value), /items/)
  await assert.rejects(chunks.next(), { code: 'UND_ERR_BODY_TIMEOUT' })
})

test('the body timeout is a limit on the gap between chunks, not on the whole body', async () => {
  const s = await stub((_r, res) => {
    res.writeHead(200)
    let n = 0
    const tick = setInterval(() => {
      if (++n < 8) res.write(`${n}\n`)
      else {
        clearInterval(tick)
        res.end()
      }
    }, 40) // 320 ms in all, never a 150 ms gap
  })
  const res = await dispatcher(s.url).request(get('/slow', { bodyTimeout: 150 }))
  assert.equal(await res.body.text(), '1\n2\n3\n4\n5\n6\n7\n')
})

test('the body timeout does not fire while the reader is behind (the socket is paused), as in undici', async () => {
  const size = 4 << 20
  let wrote = false
  const s = await stub((_r, res) => {
    res.writeHead(200)
    res.write(Buffer.alloc(size, 'x'), () => {
      wrote = true // then stalls, never ending the response
    })
  })
  const res = await dispatcher(s.url).request(get('/big', { bodyTimeout: 100 }))
  // Not reading: buffers fill and the socket pauses. The server's write completes only once the
  // reader has taken most of it, so every idle check until then sees a full buffer.
  await new Promise((resolve) => setTimeout(resolve, 300)) // the real timer under test, three periods
  let got = 0
  await assert.rejects(
    (async () => {
      for await (const chunk of res.body) got += (chunk as Buffer).length
    })(),
    { code: 'UND_ERR_BODY_TIMEOUT' },
  )
  assert.equal(got, size, 'everything sent was read before the stall timed out')
  assert.ok(wrote)
})

test('abort: before the request, while waiting for headers and while reading the body, with the signal’s reason', async () => {
  const s = await stub((r, res) => {
    if (r.url === '/wait') return
    res.writeHead(200)
    res.write('first')
  })
  const d = dispatcher(s.url)
  const reason = new Error('stop')
  await assert.rejects(d.request(get('/never', { signal: AbortSignal.abort(reason) })), (e) => e === reason)
  assert.equal(s.seen.length, 0, 'nothing was sent')

  const waiting = new AbortController()
  const pending = d.request(get('/wait', { signal: waiting.signal }))
  await until(() => s.seen.length === 1)
  waiting.abort(reason)
  await assert.rejects(pending, (e) => e === reason)

  const reading = new AbortController()
  const res = await d.request(get('/body', { signal: reading.signal }))
  const chunks = res.body[Symbol.asyncIterator]()
  assert.equal(String((await chunks.next()).value), 'first')
  reading.abort(reason)
  await assert.rejects(chunks.next(), (e) => e === reason)
})

test('a connection the server closes before answering is UND_ERR_SOCKET, as undici names it (GET retried)', async () => {
  const s = await stub((_r, res) => res.socket?.destroy())
  await assert.rejects(dispatcher(s.url).request(get('/x')), { code: 'UND_ERR_SOCKET' })
  const t = new Transport(
    { server: s.url, tls: { insecureSkipVerify: false }, namespace: 'default', source: 'test' },
    { qps: -1, maxRetries: 0 },
  )
  cleanups.push(() => t.close())
  await assert.rejects(t.request({ method: 'GET', path: '/y' }), {
    code: 'EDGEOP_ERR_NETWORK',
    message: 'GET /y: NetworkError: connection failed (UND_ERR_SOCKET)',
  })
})

test('a TLS server that offers only http/1.1: the transport moves from undici to node:http for good, sending each request once', async () => {
  const { cert, key } = selfSignedCert(dir)
  let handshakes = 0 // TCP connections: each one is a TLS handshake
  const versions: string[] = []
  const bodies: string[] = []
  const server = createHttpsServer({ cert, key, ALPNProtocols: ['http/1.1'] }, (req, res) => {
    versions.push(req.httpVersion)
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c
    })
    req.on('end', () => {
      bodies.push(body)
      json(res, 200, { method: req.method })
    })
  })
  server.on('connection', () => handshakes++)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanups.push(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const t = new Transport(
    {
      server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      tls: { ca: cert, insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { qps: -1, maxRetries: 0 }, // http2 on (the default); no retries: the re-send is not one
  )
  cleanups.push(() => t.close())
  assert.deepEqual(await t.request({ method: 'POST', path: '/a', body: { n: 1 } }), { method: 'POST' })
  assert.deepEqual(bodies, ['{"n":1}'], 'the POST that met the h1-only connection was sent once')
  assert.equal(handshakes, 2, 'the refused undici connection, then one for node:http')
  await Promise.all([1, 2, 3].map(() => t.request({ method: 'GET', path: '/b' })))
  await t.request({ method: 'GET', path: '/c' })
  assert.deepEqual(versions, ['1.1', '1.1', '1.1', '1.1', '1.1'])
  assert.equal(handshakes, 4, 'undici was not tried again: two more connections for three parallel requests')
})

test('a watch over HTTP/1.1 chunked encoding: events split across chunks are decoded in order', async () => {
  const event = (type: string, name: string) =>
    `${JSON.stringify({ type, object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, resourceVersion: '1' } } })}\n`
  const lines = event('ADDED', 'a') + event('MODIFIED', 'a') + event('DELETED', 'b')
  const s = await stub((_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }) // no length: chunked
    const cuts = [0, 7, 60, lines.length - 3, lines.length]
    for (let i = 1; i < cuts.length; i++) res.write(lines.slice(cuts[i - 1], cuts[i]))
    res.end()
  })
  const t = new Transport(
    { server: s.url, tls: { insecureSkipVerify: false }, namespace: 'default', source: 'test' },
    { qps: -1 },
  )
  cleanups.push(() => t.close())
  const cms = new ResourceClient(
    t,
    { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
    'default',
  )
  const seen: string[] = []
  for await (const e of cms.watch({ idleTimeoutMs: 5_000 })) seen.push(`${e.type} ${e.object.metadata?.name}`)
  assert.deepEqual(seen, ['ADDED a', 'MODIFIED a', 'DELETED b'])
  assert.match(s.seen[0]?.url ?? '', /^\/api\/v1\/namespaces\/default\/configmaps\?watch=1/)
})
