/**
 * A connection that died without a reset (a NAT or firewall dropping the flow) answers nothing:
 * an HTTP/2 request on it waits for headers until its deadline. The transport then retires that
 * connection, so the next request (the elector's next renewal) opens a new one instead of queuing
 * behind the dead one until TCP gives up (about 15 minutes).
 */
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { createSecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { EdgeopError } from '../../src/core/errors.ts'
import { Transport } from '../../src/transport/transport.ts'
import { selfSignedCert } from '../support/self-signed.ts'

const pem = selfSignedCert(mkdtempSync(join(tmpdir(), 'edgeop-dead-conn-')))
const closers: (() => unknown)[] = []
after(() => Promise.all(closers.map((c) => c())))

async function server() {
  let sessions = 0
  const s = createSecureServer(pem, (req, res) => {
    if (req.url?.startsWith('/hang')) return // headers never come, as on a dead flow
    res.setHeader('content-type', 'application/json')
    res.end('{}')
  })
  s.on('session', () => sessions++)
  s.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void s.once('listening', r))
  closers.push(() => s.close())
  const t = new Transport(
    {
      server: `https://127.0.0.1:${(s.address() as AddressInfo).port}`,
      tls: { ca: pem.cert, insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { qps: -1, maxRetries: 0, proxyEnvironment: {} },
  )
  closers.push(() => t.close())
  return { t, sessions: () => sessions }
}

test('an HTTP/2 request whose deadline passes before its headers retires the connection; the next one opens a new one', async () => {
  const { t, sessions } = await server()
  await t.request({ method: 'GET', path: '/ok' })
  await assert.rejects(t.request({ method: 'GET', path: '/hang', timeoutMs: 200 }), {
    code: 'EDGEOP_ERR_TIMEOUT',
  })
  await t.request({ method: 'GET', path: '/ok' })
  assert.equal(sessions(), 2)
})

test('so does a caller that gives up on it with a timeout reason (the elector bounding a renewal); other aborts do not', async () => {
  const { t, sessions } = await server()
  await t.request({ method: 'GET', path: '/ok' })
  const cancelled = new AbortController()
  const plain = t.request({ method: 'GET', path: '/hang', signal: cancelled.signal })
  await new Promise((r) => setTimeout(r, 50))
  cancelled.abort()
  await assert.rejects(plain, { code: 'EDGEOP_ERR_ABORTED' })
  await t.request({ method: 'GET', path: '/ok' })
  assert.equal(sessions(), 1, 'a shutdown abort keeps the connection')
  const bounded = new AbortController()
  const renewal = t.request({ method: 'PUT', path: '/hang', body: {}, signal: bounded.signal })
  await new Promise((r) => setTimeout(r, 50))
  bounded.abort(
    new EdgeopError('EDGEOP_ERR_TIMEOUT', 'lease attempt took longer than 3333 ms', { retryable: true }),
  )
  await assert.rejects(renewal, { code: 'EDGEOP_ERR_ABORTED' })
  await t.request({ method: 'GET', path: '/ok' })
  assert.equal(sessions(), 2)
})
