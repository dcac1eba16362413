/**
 * An `https://` proxy (TLS to the proxy, then CONNECT, then TLS to the server inside it), which
 * neither Debian proxy of the integration tests serves: the proxy here is Node's HTTPS server
 * answering CONNECT, the server an HTTP/2 one; both present one self-signed certificate, which
 * the cluster's CA (that same certificate) verifies, as Go verifies an https proxy with the
 * transport's TLS settings.
 */
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { createSecureServer } from 'node:http2'
import { createServer as createHttpsServer } from 'node:https'
import { type AddressInfo, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Transport } from '../../src/transport/transport.ts'
import { selfSignedCert } from '../support/self-signed.ts'

const pem = selfSignedCert(mkdtempSync(join(tmpdir(), 'edgeop-https-proxy-')))
const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
})

async function listen(server: {
  listen(port: number, host: string): unknown
  address(): unknown
  once(e: string, f: () => void): unknown
}) {
  server.listen(0, '127.0.0.1')
  await new Promise<void>((r) => void server.once('listening', r))
  return (server.address() as AddressInfo).port
}

test('an https:// proxy-url: CONNECT over TLS with Basic auth, HTTP/2 to the server inside the tunnel', async () => {
  const api = createSecureServer({ ...pem, allowHTTP1: true }, (req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ httpVersion: req.httpVersion }))
  })
  const apiPort = await listen(api)
  const seen: { target: string | undefined; auth: string | undefined }[] = []
  const proxy = createHttpsServer(pem)
  proxy.on('connect', (req, client, head) => {
    seen.push({ target: req.url, auth: req.headers['proxy-authorization'] })
    if (req.headers['proxy-authorization'] !== `Basic ${Buffer.from('edge:s3cret').toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')
      return
    }
    const [host, port] = (req.url ?? '').split(':')
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n')
      upstream.write(head)
      upstream.pipe(client).pipe(upstream)
    })
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
  })
  const proxyPort = await listen(proxy)
  closers.push(
    () => api.close(),
    () => proxy.close(),
    () => proxy.closeAllConnections(),
  )
  const config = (user: string) => ({
    server: `https://127.0.0.1:${apiPort}`,
    tls: { ca: pem.cert, insecureSkipVerify: false },
    namespace: 'default',
    source: 'test',
    proxyUrl: `https://${user}@127.0.0.1:${proxyPort}`,
  })
  const t = new Transport(config('edge:s3cret'), { qps: -1, maxRetries: 0 })
  closers.push(() => void t.close())
  assert.deepEqual(await t.request({ method: 'GET', path: '/version' }), { httpVersion: '2.0' })
  assert.deepEqual(seen[0], {
    target: `127.0.0.1:${apiPort}`,
    auth: `Basic ${Buffer.from('edge:s3cret').toString('base64')}`,
  })
  assert.equal(t.proxy, `https://127.0.0.1:${proxyPort}`)

  const wrong = new Transport(config('edge:wr0ng'), { qps: -1, maxRetries: 0 })
  closers.push(() => void wrong.close())
  await assert.rejects(
    wrong.request({ method: 'GET', path: '/version' }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'EDGEOP_ERR_NETWORK')
      assert.equal(
        err.message,
        `GET /version: NetworkError: connection through proxy https://127.0.0.1:${proxyPort} failed (CONNECT 127.0.0.1:${apiPort} answered 407: the proxy wants other credentials, check the user in the proxy URL)`,
      )
      assert.doesNotMatch(JSON.stringify([String(err), String(err.cause), err.stack]), /wr0ng/)
      return true
    },
  )
})
