import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import type { ClusterConfig, CredentialProvider, Credentials } from '../../src/config/cluster-config.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { isNotFound } from '../../src/transport/api-error.ts'
import { Transport } from '../../src/transport/transport.ts'
import { json, type StubHandler, startStub, until } from '../support/http-stub.ts'

const SECRET = 'sekret-token-4f9a'
const stubs: { close(): Promise<void> }[] = []
after(() => Promise.all(stubs.map((s) => s.close())))

async function setup(
  handler: StubHandler,
  config: Partial<ClusterConfig> = {},
  opts: ConstructorParameters<typeof Transport>[1] = {},
) {
  const stub = await startStub(handler)
  stubs.push(stub)
  const transport = new Transport(
    { server: stub.url, tls: { insecureSkipVerify: false }, namespace: 'default', source: 'test', ...config },
    { qps: -1, ...opts },
  )
  stubs.push({ close: () => transport.close() })
  return { stub, transport }
}

const notFound = {
  kind: 'Status',
  status: 'Failure',
  code: 404,
  reason: 'NotFound',
  message: 'configmaps "x" not found',
}

test('sends User-Agent, Accept, bearer token and a server-side timeout', async () => {
  const creds: CredentialProvider = { describe: 'static token', get: async () => ({ token: SECRET }) }
  const { stub, transport } = await setup((_r, res) => json(res, 200, { ok: true }), { credentials: creds })
  assert.deepEqual(await transport.request({ method: 'GET', path: '/api/v1/namespaces?limit=2' }), {
    ok: true,
  })
  const h = stub.seen[0]!.headers
  assert.match(String(h['user-agent']), /^edgeop\/\d+\.\d+\.\d+ \(linux\/x64\) node\/v\d+/)
  assert.equal(h.accept, 'application/json')
  assert.equal(h.authorization, `Bearer ${SECRET}`)
  assert.equal(stub.seen[0]!.url, '/api/v1/namespaces?limit=2&timeout=60s')
})

test('a server path prefix is kept (server: https://host/prefix)', async () => {
  const stub = await startStub((_r, res) => json(res, 200, {}))
  stubs.push(stub)
  const t = new Transport(
    {
      server: `${stub.url}/k8s/clusters/c1/`,
      tls: { insecureSkipVerify: false },
      namespace: 'd',
      source: 't',
    },
    { qps: -1, timeoutMs: 0 },
  )
  await t.request({ method: 'GET', path: '/version' })
  await t.close()
  assert.equal(stub.seen[0]!.url, '/k8s/clusters/c1/version')
})

test('429 with Retry-After is retried after that many seconds, passing the limiter again', async () => {
  const clock = new ManualClock()
  const { stub, transport } = await setup(
    (_r, res, n) =>
      n < 2
        ? json(
            res,
            429,
            { kind: 'Status', status: 'Failure', code: 429, reason: 'TooManyRequests' },
            { 'retry-after': '3' },
          )
        : json(res, 200, { n }),
    {},
    { clock },
  )
  const p = transport.request({ method: 'GET', path: '/x' })
  await until(() => clock.pending > 0, 50_000)
  await clock.advance(2999)
  assert.equal(stub.seen.length, 1, 'not before Retry-After')
  await clock.advance(1)
  await until(() => stub.seen.length === 2 && clock.pending > 0, 50_000)
  await clock.advance(3000)
  assert.deepEqual(await p, { n: 2 })
})

test('any verb is retried on 5xx with Retry-After; never without it', async () => {
  const { stub, transport } = await setup((_r, res, n) =>
    n === 0 ? json(res, 503, {}, { 'retry-after': '0' }) : json(res, 201, { created: true }),
  )
  assert.deepEqual(await transport.request({ method: 'POST', path: '/x', body: { a: 1 } }), { created: true })
  assert.equal(stub.seen.length, 2)
  assert.equal(stub.seen[1]!.body, '{"a":1}', 'the body is re-sent')

  const b = await setup((_r, res) =>
    json(res, 500, {
      kind: 'Status',
      status: 'Failure',
      code: 500,
      reason: 'InternalError',
      message: 'boom',
    }),
  )
  await assert.rejects(b.transport.request({ method: 'GET', path: '/y' }), {
    code: 'EDGEOP_ERR_API',
    status: 500,
    retryable: true,
  })
  assert.equal(b.stub.seen.length, 1)
})

test('at most 10 retries, then the last error (with the previous one noted)', async () => {
  const { stub, transport } = await setup((_r, res, n) =>
    json(
      res,
      429,
      { kind: 'Status', status: 'Failure', code: 429, reason: 'TooManyRequests', message: `busy ${n}` },
      { 'retry-after': '0' },
    ),
  )
  await assert.rejects(
    transport.request({ method: 'GET', path: '/x' }),
    (err: Error & { status: number }) => {
      assert.equal(err.status, 429)
      assert.match(err.message, /busy 10 - error from a previous attempt: busy 9/)
      return true
    },
  )
  assert.equal(stub.seen.length, 11)
})

test('GET is retried after a connection reset; a write is not', async () => {
  const clock = new ManualClock()
  const reset: StubHandler = (_r, res, n) => (n === 0 ? res.socket?.destroy() : json(res, 200, { ok: n }))
  const { stub, transport } = await setup(reset, {}, { clock })
  const p = transport.request({ method: 'GET', path: '/x' })
  await until(() => stub.seen.length === 1)
  await until(() => clock.pending > 0, 50_000)
  await clock.advance(1000)
  assert.deepEqual(await p, { ok: 1 })

  const w = await setup(reset, {}, { clock })
  await assert.rejects(w.transport.request({ method: 'PUT', path: '/x', body: {} }), {
    code: 'EDGEOP_ERR_NETWORK',
    retryable: true,
  })
  assert.equal(w.stub.seen.length, 1)
})

test('a watch whose connection is reset before it opens is retried after 1 s (client-go Watch())', async () => {
  const clock = new ManualClock()
  const { stub, transport } = await setup(
    (_r, res, n) => {
      if (n === 0) return res.socket?.destroy()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n')
    },
    {},
    { clock },
  )
  const p = transport.stream({ method: 'GET', path: '/w?watch=1' })
  await until(() => stub.seen.length === 1)
  await until(() => clock.pending > 0, 50_000)
  assert.equal(stub.seen.length, 1, 'not before the second has passed')
  await clock.advance(1000)
  const s = await p
  const first = await s.body[Symbol.asyncIterator]().next()
  assert.match(Buffer.from(first.value as Uint8Array).toString(), /"name":"a"/)
  assert.equal(stub.seen.length, 2)
  s.close()
})

test('401: fresh credentials are fetched and the request retried once', async () => {
  let calls = 0
  const provider: CredentialProvider = {
    describe: 'exec plugin "fake"',
    get: async () => ({ token: `${SECRET}-${calls++}` }),
    invalidate: (used: Credentials) => used.token !== undefined,
  }
  const { stub, transport } = await setup(
    (r, res) =>
      r.headers.authorization === `Bearer ${SECRET}-1`
        ? json(res, 200, { ok: true })
        : json(res, 401, { kind: 'Status', status: 'Failure', code: 401, reason: 'Unauthorized' }),
    { credentials: provider },
  )
  assert.deepEqual(await transport.request({ method: 'GET', path: '/x' }), { ok: true })
  assert.equal(stub.seen.length, 2)

  const always401 = await setup((_r, res) => json(res, 401, {}), { credentials: provider })
  await assert.rejects(always401.transport.request({ method: 'GET', path: '/x' }), (e: Error) => {
    assert.equal((e as { status?: number }).status, 401)
    assert.ok(
      !JSON.stringify(e).includes(SECRET) && !e.message.includes(SECRET) && !String(e.cause).includes(SECRET),
    )
    return true
  })
  assert.equal(always401.stub.seen.length, 2, 'one retry only')
})

test('errors: 404 mapping, timeout, abort, garbage body', async () => {
  const { transport } = await setup((r, res) => {
    if (r.url.startsWith('/missing')) return json(res, 404, notFound)
    if (r.url.startsWith('/html')) {
      res.writeHead(200, { 'content-type': 'text/html' })
      return res.end('<html>proxy login</html>')
    }
    // /hang: never answer
  })
  const e404 = (await transport
    .request({ method: 'GET', path: '/missing' })
    .catch((e: unknown) => e)) as Error
  assert.ok(isNotFound(e404))
  assert.equal(e404.message, 'GET /missing: 404 NotFound: configmaps "x" not found')
  await assert.rejects(transport.request({ method: 'GET', path: '/hang', timeoutMs: 150 }), {
    code: 'EDGEOP_ERR_TIMEOUT',
    retryable: true,
  })
  const ac = new AbortController()
  const p = transport.request({ method: 'GET', path: '/hang', signal: ac.signal, timeoutMs: 0 })
  setImmediate(() => ac.abort())
  await assert.rejects(p, { code: 'EDGEOP_ERR_ABORTED', retryable: false })
  await assert.rejects(transport.request({ method: 'GET', path: '/html' }), {
    code: 'EDGEOP_ERR_DECODE',
    message: 'GET /html: the response is not JSON (markup of 24 characters)',
  })
})

test('a watch stream is not throttled on its first attempt and yields chunks until closed', async () => {
  const clock = new ManualClock()
  const { transport } = await setup(
    (r, res) => {
      if (!r.url.includes('watch=1')) return json(res, 200, {})
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n')
    },
    {},
    { clock, qps: 1, burst: 1 },
  )
  await transport.request({ method: 'GET', path: '/drain-the-bucket', timeoutMs: 0 }).catch(() => {})
  const s = await transport.stream({ method: 'GET', path: '/w?watch=1' })
  const it = s.body[Symbol.asyncIterator]()
  const first = await it.next()
  assert.match(Buffer.from(first.value as Uint8Array).toString(), /"name":"a"/)
  s.close()
  await assert.rejects(it.next())
})

test('a CA together with insecure-skip-tls-verify is refused, as client-go does', () => {
  assert.throws(
    () =>
      new Transport({
        server: 'https://x',
        tls: { ca: 'PEM', insecureSkipVerify: true },
        namespace: 'd',
        source: 'kubeconfig /k',
      }),
    {
      code: 'EDGEOP_ERR_CONFIG',
      message: 'kubeconfig /k: certificate-authority and insecure-skip-tls-verify are both set; remove one',
    },
  )
})

test('a proxy-url with an unsupported scheme is refused without quoting the URL or its password', () => {
  assert.throws(
    () =>
      new Transport({
        server: 'https://x',
        tls: { insecureSkipVerify: false },
        namespace: 'd',
        source: 'kubeconfig /k',
        proxyUrl: 'ftp://user:pr0xy-pass@p:21',
      }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
      assert.equal(
        err.message,
        'kubeconfig /k: proxy-url scheme ftp: is not supported; use http, https or socks5 (as client-go)',
      )
      assert.doesNotMatch(String(err) + String(err.cause), /pr0xy-pass/)
      return true
    },
  )
})

test('the transport names its proxy without the credentials of proxy-url', () => {
  const t = new Transport(
    {
      server: 'https://api.example:6443',
      tls: { insecureSkipVerify: false },
      namespace: 'd',
      source: 'kubeconfig /k',
      proxyUrl: 'socks5://user:pr0xy-pass@socks.example',
    },
    { proxyEnvironment: {} },
  )
  assert.equal(t.proxy, 'socks5://socks.example:1080')
})
