import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import tls from 'node:tls'
import { isEdgeopError } from '../../src/core/errors.ts'
import { Transport } from '../../src/transport/transport.ts'
import { selfSignedCert } from '../support/self-signed.ts'

// A self-signed serving certificate, which the client also presents as its own (any
// cert+key pair will do for what is tested here: how the TLS material reaches OpenSSL).
const dir = mkdtempSync(join(tmpdir(), 'edgeop-tls-'))
const { cert, key } = selfSignedCert(dir)

let url = ''
let connections = 0
const server = createServer({ cert, key }, (_req, res) => {
  // `connection: close`: every request needs a new TLS connection.
  res.writeHead(200, { 'content-type': 'application/json', connection: 'close' })
  res.end('{"kind":"Status"}')
})
server.on('secureConnection', () => connections++)
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
})
after(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

test('one TLS context serves every connection of a pool (not one parsed per connection)', async (t) => {
  const seen: tls.ConnectionOptions[] = []
  const connect = tls.connect
  t.mock.method(tls, 'connect', (...args: Parameters<typeof tls.connect>) => {
    seen.push(args[0] as tls.ConnectionOptions)
    return (connect as (...a: unknown[]) => tls.TLSSocket)(...args)
  })
  const transport = new Transport(
    {
      server: url,
      tls: { ca: cert, cert, key, insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { qps: -1, http2: false },
  )
  try {
    for (let i = 0; i < 4; i++) await transport.request({ method: 'GET', path: '/api' })
  } finally {
    await transport.close()
  }
  assert.equal(connections, 4, 'each request came on a new connection')
  assert.equal(seen.length, 4)
  const context = seen[0]!.secureContext
  assert.ok(context !== undefined && 'context' in context, 'a prepared context is handed to tls.connect')
  for (const o of seen) {
    assert.equal(o.secureContext, context, 'the same context each time')
    assert.equal(o.ca, undefined, 'no PEM for Node to parse again')
    assert.equal(o.cert, undefined)
    assert.equal(o.key, undefined)
    assert.equal(o.rejectUnauthorized, true)
  }
})

test('a client key OpenSSL refuses fails once, as a config error naming its source, never the key', async () => {
  const badKey = '-----BEGIN PRIVATE KEY-----\nQUJDREVGR0hJSktMTU5PUA==\n-----END PRIVATE KEY-----\n'
  const before = connections
  const transport = new Transport(
    {
      server: url,
      tls: { ca: cert, cert, key: badKey, insecureSkipVerify: false },
      namespace: 'default',
      source: 'kubeconfig /k',
    },
    { qps: -1 },
  )
  try {
    await assert.rejects(transport.request({ method: 'GET', path: '/api' }), (err: unknown) => {
      assert.ok(isEdgeopError(err))
      assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
      assert.equal(err.retryable, false)
      assert.equal(err.step, 'load TLS material')
      assert.match(
        err.message,
        /^GET \/api: the CA or the client certificate and key from kubeconfig \/k cannot be used for TLS: /,
      )
      assert.ok(!err.message.includes('QUJDREVG'), 'no key material in the message')
      return true
    })
  } finally {
    await transport.close()
  }
  assert.equal(connections, before, 'no connection was attempted')
})
