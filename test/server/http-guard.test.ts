import assert from 'node:assert/strict'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { after, describe, test } from 'node:test'
import { jsonDeeperThan } from '../../src/core/json-depth.ts'
import {
  createHardenedServer,
  type GuardedRoute,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_MAX_HEADER_BYTES,
  HttpRefusal,
  hardenedLimits,
  readBody,
  TLS_HANDSHAKE_TIMEOUT_MS,
} from '../../src/server/http-guard.ts'
import { listen } from '../../src/server/ops-server.ts'
import { issueCertificate } from '../../src/tls/self-signed-cert.ts'
import { rawConnection, rawRequest, statusOf } from '../support/raw-http.ts'
import { recordingLogger } from '../support/recording-logger.ts'

/**
 * Small limits for real sockets: each test waits for the server to act on one of them, and the
 * test's own timeout (far longer) is what fails it when the server never does. No duration is asserted.
 */
const SMALL = { timeoutCheckIntervalMs: 50, requestTimeoutMs: 30_000 }
const TEST_TIMEOUT = { timeout: 20_000 }

const servers: Server[] = []
after(async () => {
  for (const s of servers) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

async function serve(
  route: GuardedRoute,
  limits: Partial<Parameters<typeof hardenedLimits>[0]> = {},
  tls = false,
) {
  const logger = recordingLogger()
  const ca = issueCertificate({ isCA: true, commonName: 'guard-test-ca' })
  const server = createHardenedServer(route, {
    name: 'test',
    limits: hardenedLimits({ ...SMALL, ...limits }),
    logger,
    ...(tls ? { tls: issueCertificate({ hosts: ['localhost', '127.0.0.1'], issuer: ca }) } : {}),
  })
  servers.push(server)
  const address = await listen(server, '127.0.0.1:0', 'test')
  return { address, logger, server }
}

const ok: GuardedRoute = (_req, res, url) => {
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.end(`path ${url.pathname}\n`)
}
const GET = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`

describe('the defaults', () => {
  test('every limit is a named constant, and the servers no longer take Node’s 120 s handshake or 30 s checks', () => {
    const l = hardenedLimits({ requestTimeoutMs: 60_000 })
    assert.equal(l.headersTimeoutMs, HTTP_HEADERS_TIMEOUT_MS)
    assert.equal(l.handshakeTimeoutMs, TLS_HANDSHAKE_TIMEOUT_MS)
    assert.equal(l.maxConnections, HTTP_MAX_CONNECTIONS)
    assert.equal(l.maxHeaderBytes, HTTP_MAX_HEADER_BYTES)
    assert.ok(l.handshakeTimeoutMs < 120_000)
    assert.ok(l.timeoutCheckIntervalMs < 30_000)
    assert.equal(
      hardenedLimits({ requestTimeoutMs: 300 }).headersTimeoutMs,
      300,
      'never past the request timeout',
    )
  })
})

describe('D1: the request target', () => {
  test('D1: an absolute-form request target with port 99999 is answered 400, the server lives', async () => {
    const { address } = await serve(ok)
    const raw = await rawRequest(address, GET('http://a:99999/healthz'))
    assert.equal(statusOf(raw), 400, raw)
    assert.equal(statusOf(await rawRequest(address, GET('/healthz'))), 200)
  })

  test('other malformed targets are 400 or served by path; none ends the process', async () => {
    const { address } = await serve(ok)
    for (const target of [
      'http://[::1/x',
      'http://a:-1/',
      'https://@/x',
      'http://%zz/',
      '//',
      '*',
      'http://a/b?c#d',
    ]) {
      const status = statusOf(await rawRequest(address, GET(target)))
      assert.ok(status === 200 || status === 400, `${target}: ${status}`)
    }
    assert.match(await rawRequest(address, GET('http://a:80/ok')), /path \/ok/)
  })
})

describe('D19: timeouts, the connection cap and the head limit', () => {
  test(
    'D19: a connection that sends part of a head is answered 408 and closed once the head timeout passes',
    TEST_TIMEOUT,
    async () => {
      const { address } = await serve(ok, { headersTimeoutMs: 200 })
      const c = rawConnection(address, 'GET / HTTP/1.1\r\nhost: x\r\n')
      const raw = await c.closed
      assert.equal(statusOf(raw), 408, raw)
    },
  )

  test(
    'D19: a body that stops coming is answered 408 once the request timeout passes',
    TEST_TIMEOUT,
    async () => {
      const route: GuardedRoute = async (req, res) => {
        await readBody(req, { maxBytes: 1024 })
        res.end('read\n')
      }
      const { address } = await serve(route, { requestTimeoutMs: 300 })
      const c = rawConnection(address, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nab')
      const raw = await c.closed
      assert.equal(statusOf(raw), 408, raw)
    },
  )

  test(
    'D19: a TLS connection that never starts its handshake is closed once the handshake timeout passes',
    TEST_TIMEOUT,
    async () => {
      const { address } = await serve(ok, { handshakeTimeoutMs: 200 }, true)
      // A TCP connection that sends nothing: no ClientHello, so no handshake ever completes.
      const raw = await rawConnection(address).closed
      assert.equal(raw, '')
    },
  )

  test(
    'D19: an idle kept-alive connection is closed once the keep-alive timeout passes',
    TEST_TIMEOUT,
    async () => {
      const { address } = await serve(ok, { keepAliveTimeoutMs: 200 })
      const c = rawConnection(address, 'GET /a HTTP/1.1\r\nhost: x\r\n\r\n')
      const raw = await c.closed
      assert.equal(statusOf(raw), 200, 'answered, then closed by the server while idle')
    },
  )

  test(
    'D19: past maxConnections a new connection is closed unanswered; once one ends, requests are served again',
    TEST_TIMEOUT,
    async () => {
      const { address } = await serve(ok, { maxConnections: 2, headersTimeoutMs: 30_000 })
      const held = [rawConnection(address), rawConnection(address)]
      // Wait until both are accepted: each answers a request and stays open.
      for (const h of held) h.socket.write('GET /held HTTP/1.1\r\nhost: x\r\n\r\n')
      await Promise.all(held.map((h) => new Promise((r) => h.socket.once('data', r))))
      const refused = await rawRequest(address, GET('/third'))
      assert.equal(refused, '', 'the third connection got no answer')
      held[0]!.socket.destroy()
      await held[0]!.closed
      let status = 0
      // The server sees the close shortly after the client: retry until it has.
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = statusOf(await rawRequest(address, GET('/again')))
        if (status !== 200) await new Promise((r) => setTimeout(r, 20))
      }
      assert.equal(status, 200)
      held[1]!.socket.destroy()
    },
  )

  test('D19: a head larger than maxHeaderBytes is answered 431', async () => {
    const { address } = await serve(ok, { maxHeaderBytes: 1024 })
    const raw = await rawRequest(address, `GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(2048)}\r\n\r\n`)
    assert.equal(statusOf(raw), 431, raw)
    assert.equal(statusOf(await rawRequest(address, GET('/'))), 200)
  })
})

describe('every handler failure answered and logged once', () => {
  test('a route that throws, or rejects, is answered 500 and logged once; the server still serves', async () => {
    let mode = 'sync'
    const route: GuardedRoute = async (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/ok') return void res.end('fine\n')
      if (mode === 'sync') throw new Error('boom')
      await Promise.resolve()
      if (mode === 'refuse') throw new HttpRefusal(422, 'no thanks')
      if (mode === 'late') {
        res.writeHead(200)
        res.write('half')
      }
      throw new Error('late boom')
    }
    const { address, logger } = await serve(route)
    assert.equal(statusOf(await rawRequest(address, GET('/x'))), 500)
    mode = 'async'
    assert.equal(statusOf(await rawRequest(address, GET('/x'))), 500)
    mode = 'refuse'
    const refused = await rawRequest(address, GET('/x'))
    assert.equal(statusOf(refused), 422)
    assert.match(refused, /no thanks/)
    mode = 'late'
    const late = await rawRequest(address, GET('/x'))
    assert.doesNotMatch(late, / 500 /, 'the response had started: the connection is ended instead')
    assert.equal(statusOf(await rawRequest(address, GET('/ok'))), 200)
    const errors = logger.lines.filter((l) => l.level === 'error')
    assert.deepEqual(
      errors.map((l) => l.fields?.error),
      ['boom', 'late boom', 'late boom'],
      'one line per failed request; refusals are not errors',
    )
  })
})

describe('server errors', () => {
  test('an error of the listening server (a failed accept) is logged, not thrown', async () => {
    const { address, logger, server } = await serve(ok)
    server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }))
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error').map((l) => l.fields?.code),
      ['EMFILE'],
    )
    assert.equal(statusOf(await rawRequest(address, GET('/'))), 200)
  })
})

describe('bodies', () => {
  const echo: GuardedRoute = async (req, res) => {
    const body = await readBody(req, { maxBytes: 64, maxJsonDepth: 4 })
    res.end(`${body.length}\n`)
  }

  test('a declared length past maxBytes is 413 before reading; so is a chunked body that grows past it', async () => {
    const { address } = await serve(echo)
    const declared = await rawRequest(address, `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 65\r\n\r\n`)
    assert.equal(statusOf(declared), 413, declared)
    const chunk = 'a'.repeat(40)
    const chunked = await rawRequest(
      address,
      `POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n28\r\n${chunk}\r\n28\r\n${chunk}\r\n0\r\n\r\n`,
    )
    assert.equal(statusOf(chunked), 413, chunked)
  })

  test('JSON nested past maxJsonDepth is 400 before any parse; brackets in strings do not count', async () => {
    const { address } = await serve(echo)
    const post = (body: string) =>
      rawRequest(
        address,
        `POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      )
    assert.equal(statusOf(await post('[[[[[1]]]]]')), 400)
    assert.equal(statusOf(await post('[[[["[[[[[\\"[["]]]]')), 200)
  })

  test('jsonDeeperThan counts nesting outside strings only', () => {
    const enc = (s: string) => Buffer.from(s)
    assert.equal(jsonDeeperThan(enc('{}'), 1), false)
    assert.equal(jsonDeeperThan(enc('{"a":[{}]}'), 2), true)
    assert.equal(jsonDeeperThan(enc('{"a":[{}]}'), 3), false)
    assert.equal(jsonDeeperThan(enc('{"[[[\\"{{":"]]]"}'), 1), false)
    assert.equal(jsonDeeperThan(enc(`${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`), 512), true)
    assert.equal(jsonDeeperThan(enc('"unterminated [[['), 0), false)
  })
})
