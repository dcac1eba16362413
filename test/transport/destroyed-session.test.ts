/**
 * An HTTP/2 session can be destroyed while its socket stays open: Node then ends the socket and
 * waits for its writable side to finish, which on a link that stopped acknowledging takes until
 * TCP gives up (minutes). undici keeps such a session as its connection (its PINGs stop on a
 * destroyed session), and Node (24.x) fails each new stream on it with `ERR_HTTP2_INVALID_SESSION`
 * instead of throwing from `request()`, where undici would drop the session. The soak over an
 * emulated satellite link saw a standby's lists fail that way for minutes.
 */
import assert from 'node:assert/strict'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdtempSync } from 'node:fs'
import { type ClientHttp2Session, createSecureServer } from 'node:http2'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type Clock, realClock } from '../../src/core/clock.ts'
import { Transport } from '../../src/transport/transport.ts'
import { selfSignedCert } from '../support/self-signed.ts'

const pem = selfSignedCert(mkdtempSync(join(tmpdir(), 'edgeop-destroyed-session-')))
const closers: (() => unknown)[] = []
after(() => Promise.all(closers.map((c) => c())))

/** Retry waits pass at once: the test counts attempts, it does not sleep through them. */
const noWait: Clock = {
  ...realClock,
  setTimer(fn) {
    const t = setImmediate(fn)
    return () => clearImmediate(t)
  },
}

/** Windows large enough that a body fills the socket buffers of a link that stopped reading. */
const WINDOW = 2 ** 31 - 1
/** More than loopback's socket buffers hold (Linux autotunes them to a few MiB each way). */
const STUCK_BODY_BYTES = 32 << 20

/** An HTTP/2 server behind a TCP relay whose links can be frozen (nothing forwarded, nothing read). */
async function relayedServer() {
  let sessions = 0
  const s = createSecureServer({ ...pem, settings: { initialWindowSize: WINDOW } }, (req, res) => {
    req.resume()
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end('{}')
    })
  })
  s.on('session', (session) => {
    sessions++
    session.setLocalWindowSize(WINDOW)
  })
  s.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void s.once('listening', r))
  const links: Socket[] = []
  const relay = createServer((client) => {
    const upstream = connect((s.address() as AddressInfo).port, '127.0.0.1')
    client.pipe(upstream).pipe(client)
    links.push(client, upstream)
  })
  relay.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void relay.once('listening', r))
  closers.push(() => {
    for (const l of links) l.destroy()
    relay.close()
    s.close()
  })
  const freeze = () => {
    for (const l of links) {
      l.unpipe()
      l.pause()
    }
  }
  return { port: (relay.address() as AddressInfo).port, sessions: () => sessions, freeze }
}

test('ERR_HTTP2_INVALID_SESSION: a request on an HTTP/2 session destroyed while its link is unresponsive goes to a new connection', async () => {
  const server = await relayedServer()
  let session: ClientHttp2Session | undefined
  const onStream = (m: unknown) => {
    session = (m as { stream: { session: ClientHttp2Session } }).stream.session
  }
  subscribe('http2.client.stream.created', onStream)
  closers.push(() => unsubscribe('http2.client.stream.created', onStream))
  const t = new Transport(
    {
      server: `https://127.0.0.1:${server.port}`,
      tls: { ca: pem.cert, insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { qps: -1, maxRetries: 2, proxyEnvironment: {}, clock: noWait },
  )
  closers.push(() => t.close())
  await t.request({ method: 'GET', path: '/ok' })
  const first = session
  assert.ok(first)

  // The link stops acknowledging while a write is under way: the socket cannot finish.
  server.freeze()
  const stuck = t
    .request({ method: 'PUT', path: '/big', body: { data: 'x'.repeat(STUCK_BODY_BYTES) } })
    .catch((err: unknown) => err)
  // All of it handed to the socket, which the relay no longer reads: the write stays pending.
  while ((first.state.remoteWindowSize ?? WINDOW) > WINDOW - STUCK_BODY_BYTES)
    await new Promise((r) => setImmediate(r))
  // Node destroys the session (as on a session error); its socket stays open.
  first.destroy()
  await new Promise((r) => setImmediate(r))
  assert.equal(first.socket?.destroyed ?? false, false, 'the socket of the destroyed session is still open')

  await t.request({ method: 'GET', path: '/ok' })
  await t.request({ method: 'GET', path: '/ok' })
  assert.equal(server.sessions(), 2)
  assert.equal(((await stuck) as { code?: unknown }).code, 'EDGEOP_ERR_NETWORK')
})
