import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, afterEach, before, describe, test } from 'node:test'
import type { TLSSocket } from 'node:tls'
import { Agent, request } from 'undici'
import { FRONT_PROXY_CLIENT_NAME, TestPki } from '../../src/testing/pki.ts'
import { FaultProxy } from './fault-proxy.ts'

/** Chunks the fake upstream writes for `/stream`: 5 JSON lines of 100 bytes, 20 ms apart. */
const STREAM_CHUNKS = 5
const CHUNK_BYTES = 100

/** Size of the `/big` response, and the chunk it is written in. */
const BIG_BYTES = 16 * 1024 * 1024
const BIG_CHUNK = Buffer.alloc(64 * 1024, 'k')

function line(i: number): string {
  const prefix = `{"type":"ADDED","i":${i},"pad":"`
  return `${prefix}${'x'.repeat(CHUNK_BYTES - prefix.length - 3)}"}\n`
}

interface Seen {
  user: string | undefined
  groups: string[]
  authorization: string | undefined
  frontProxy: string | undefined
  body: string
}

let dir: string
let pki: TestPki
let upstream: Server
let upstreamUrl: string
let proxy: FaultProxy
let caPem: string
const seen: Seen[] = []

/** A stand-in for the apiserver: requires the front-proxy client cert and records what it was told. */
async function startUpstream(): Promise<void> {
  const serving = await pki.read(pki.apiserver)
  const frontProxyCa = (await pki.read(pki.frontProxyCa)).certPem
  upstream = createServer(
    {
      cert: serving.certPem,
      key: serving.keyPem,
      ca: frontProxyCa,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x')
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const groups: string[] = []
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          if (req.rawHeaders[i]?.toLowerCase() === 'x-remote-group') groups.push(req.rawHeaders[i + 1]!)
        }
        seen.push({
          user: req.headers['x-remote-user'] as string | undefined,
          groups,
          authorization: req.headers.authorization,
          frontProxy: (req.socket as TLSSocket).getPeerCertificate().subject?.CN as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
        })
        if (url.pathname === '/stream') {
          res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
          let i = 0
          const timer = setInterval(() => {
            res.write(line(i++))
            if (i === STREAM_CHUNKS) {
              clearInterval(timer)
              res.end()
            }
          }, 20)
          res.on('close', () => clearInterval(timer))
          return
        }
        if (url.pathname === '/big') {
          // More than every socket and HTTP/2 flow-control buffer on the way: exercises backpressure.
          res.writeHead(200, { 'content-type': 'application/octet-stream' })
          let left = BIG_BYTES / BIG_CHUNK.length
          const pump = (): void => {
            while (left > 0) {
              left--
              if (!res.write(BIG_CHUNK)) return void res.once('drain', pump)
            }
            res.end()
          }
          pump()
          return
        }
        if (url.pathname === '/open-stream') {
          // One event, then nothing until the client goes away (a quiet watch).
          res.writeHead(200, { 'content-type': 'application/json' })
          res.write(line(0))
          return
        }
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' })
        res.end(JSON.stringify({ path: url.pathname, query: url.search }))
      })
    },
  )
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const address = upstream.address()
  upstreamUrl = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-fault-proxy-test-'))
  pki = await TestPki.create(join(dir, 'pki'))
  caPem = (await pki.read(pki.ca)).certPem
  await startUpstream()
  proxy = await FaultProxy.start({
    upstream: upstreamUrl,
    upstreamCaPem: caPem,
    upstreamClientCert: await pki.read(pki.frontProxyClient),
    servingCert: await pki.read(pki.proxyServing),
    clientCaPem: caPem,
  })
})

after(async () => {
  await proxy?.close()
  upstream?.closeAllConnections()
  await new Promise((resolve) => upstream?.close(resolve))
  await rm(dir, { recursive: true, force: true })
})

afterEach(() => {
  proxy.clearFaults()
  proxy.clearLog()
  seen.length = 0
})

/** Reads a body to the end; returns the bytes read and the error that ended it early, if any. */
async function drain(body: AsyncIterable<Buffer>): Promise<{ text: string; error: unknown }> {
  const chunks: Buffer[] = []
  try {
    for await (const c of body) chunks.push(c)
    return { text: Buffer.concat(chunks).toString('utf8'), error: undefined }
  } catch (error) {
    return { text: Buffer.concat(chunks).toString('utf8'), error }
  }
}

for (const protocol of ['1.1', '2'] as const) {
  describe(`fault proxy over HTTP/${protocol}`, () => {
    const agents: Agent[] = []
    let admin: Agent
    const agent = (connect: Record<string, unknown>): Agent => {
      const a = new Agent({ allowH2: protocol === '2', connect: { ca: caPem, ...connect } })
      agents.push(a)
      return a
    }
    before(async () => {
      const cert = await pki.read(pki.admin)
      admin = agent({ cert: cert.certPem, key: cert.keyPem })
    })
    after(async () => {
      await Promise.all(agents.map((a) => a.destroy()))
    })

    test('forwards the client-cert identity as X-Remote-User/Group with the front-proxy cert', async () => {
      const res = await request(`${proxy.url}/api/v1/namespaces?limit=5`, {
        dispatcher: admin,
        headers: { 'x-remote-user': 'spoofed', 'x-remote-group': 'spoofed' },
      })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(await res.body.json(), { path: '/api/v1/namespaces', query: '?limit=5' })
      assert.deepEqual(seen[0], {
        user: 'edgeop-admin',
        groups: ['system:masters'],
        authorization: undefined,
        frontProxy: FRONT_PROXY_CLIENT_NAME,
        body: '',
      })
      const [rec] = proxy.requests()
      assert.equal(rec?.httpVersion, protocol)
      assert.equal(rec?.auth, 'cert')
      assert.equal(rec?.user, 'edgeop-admin')
      assert.equal(rec?.status, 200)
      assert.equal(rec?.params.get('limit'), '5')
    })

    test('passes every O of the certificate as a group, and request bodies through', async () => {
      const cert = await pki.issueClientCert('alice', ['team-a', 'team-b'])
      const alice = agent({ cert: cert.certPem, key: cert.keyPem })
      const res = await request(`${proxy.url}/apis/x/v1/things`, {
        dispatcher: alice,
        method: 'POST',
        body: '{"a":1}',
      })
      assert.equal(res.statusCode, 200)
      await res.body.dump()
      assert.equal(seen[0]?.user, 'alice')
      assert.deepEqual(seen[0]?.groups, ['team-a', 'team-b'])
      assert.equal(seen[0]?.body, '{"a":1}')
    })

    test('forwards a bearer token unchanged when there is no client cert', async () => {
      const res = await request(`${proxy.url}/api`, {
        dispatcher: agent({}),
        headers: { authorization: 'Bearer abc.def' },
      })
      assert.equal(res.statusCode, 200)
      await res.body.dump()
      assert.equal(seen[0]?.authorization, 'Bearer abc.def')
      assert.equal(seen[0]?.user, undefined)
      assert.equal(proxy.requests()[0]?.auth, 'bearer')
    })

    test('rejects callers without credentials or with a cert from another CA with a 401 Status', async () => {
      const rogue = await TestPki.create(join(dir, `rogue-${protocol}`))
      const rogueCert = await rogue.read(rogue.admin)
      for (const dispatcher of [agent({}), agent({ cert: rogueCert.certPem, key: rogueCert.keyPem })]) {
        const res = await request(`${proxy.url}/api`, { dispatcher })
        assert.equal(res.statusCode, 401)
        const body = (await res.body.json()) as { kind: string; code: number }
        assert.equal(body.kind, 'Status')
        assert.equal(body.code, 401)
      }
      assert.equal(seen.length, 0)
      assert.deepEqual(
        proxy.requests().map((r) => r.outcome),
        ['rejected', 'rejected'],
      )
    })

    test('a 429 rule answers N times with Retry-After and a Status body, then forwards', async () => {
      const fault = proxy.addFault({
        method: 'GET',
        path: /\/configmaps$/,
        times: 2,
        action: { type: 'status', status: 429, retryAfterSeconds: 2 },
      })
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) {
        const res = await request(`${proxy.url}/api/v1/namespaces/a/configmaps`, { dispatcher: admin })
        statuses.push(res.statusCode)
        if (res.statusCode === 429) {
          assert.equal(res.headers['retry-after'], '2')
          const body = (await res.body.json()) as Record<string, unknown>
          assert.equal(body.reason, 'TooManyRequests')
          assert.deepEqual(body.details, { retryAfterSeconds: 2 })
        } else {
          await res.body.dump()
        }
      }
      assert.deepEqual(statuses, [429, 429, 200])
      assert.equal(fault.hits, 2)
      assert.equal(fault.remaining, 0)
      assert.equal(seen.length, 1)
      assert.deepEqual(
        proxy.requests().map((r) => [r.fault, r.status]),
        [
          ['status', 429],
          ['status', 429],
          [undefined, 200],
        ],
      )
    })

    test('500 and 503 rules, matched by method, until cleared', async () => {
      for (const status of [500, 503]) {
        const fault = proxy.addFault({ method: ['PUT', 'get'], action: { type: 'status', status } })
        for (let i = 0; i < 2; i++) {
          const res = await request(`${proxy.url}/api/v1/x`, { dispatcher: admin })
          assert.equal(res.statusCode, status)
          assert.equal(((await res.body.json()) as { code: number }).code, status)
        }
        const post = await request(`${proxy.url}/api/v1/x`, { dispatcher: admin, method: 'POST', body: '{}' })
        assert.equal(post.statusCode, 200)
        await post.body.dump()
        fault.clear()
      }
      const res = await request(`${proxy.url}/api/v1/x`, { dispatcher: admin })
      assert.equal(res.statusCode, 200)
      await res.body.dump()
    })

    test('latency delays the request and then forwards it', async () => {
      proxy.addFault({ path: '/api', times: 1, action: { type: 'latency', ms: 300 } })
      const t0 = performance.now()
      const res = await request(`${proxy.url}/api`, { dispatcher: admin })
      await res.body.dump()
      assert.equal(res.statusCode, 200)
      assert.ok(performance.now() - t0 >= 290, 'delayed')
      assert.equal(proxy.requests()[0]?.fault, 'latency')
    })

    test('stall accepts the request and never answers', async () => {
      proxy.addFault({ action: { type: 'stall' } })
      await assert.rejects(
        request(`${proxy.url}/api`, { dispatcher: admin, signal: AbortSignal.timeout(300) }),
      )
      assert.equal(seen.length, 0, 'nothing reached the upstream')
      const rec = await proxy.waitFor((r) => r.endedAt !== undefined)
      assert.equal(rec.fault, 'stall')
      assert.equal(rec.status, undefined)
      assert.equal(rec.outcome, 'client-closed')
    })

    test('watch responses are forwarded chunk by chunk, and dropAll cuts them', async () => {
      const res = await request(`${proxy.url}/open-stream?watch=1&resourceVersion=7`, { dispatcher: admin })
      assert.equal(res.statusCode, 200)
      const iterator = res.body[Symbol.asyncIterator]()
      const first = await iterator.next()
      assert.equal(first.value?.toString('utf8'), line(0), 'first event arrives while the stream stays open')
      const rec = proxy.requests()[0]!
      assert.equal(rec.watch, true)
      assert.equal(rec.params.get('resourceVersion'), '7')
      proxy.dropAll()
      await assert.rejects(iterator.next())
      assert.equal(rec.outcome, 'dropped')
    })

    test('cut ends a streaming response after N bytes, mid-chunk', async () => {
      proxy.addFault({ watch: true, times: 1, action: { type: 'cut', afterBytes: 150 } })
      const cut = await request(`${proxy.url}/stream?watch=true`, { dispatcher: admin })
      assert.equal(cut.statusCode, 200)
      const { text, error } = await drain(cut.body)
      assert.ok(error !== undefined, 'the body ends with an error')
      assert.equal(text, (line(0) + line(1)).slice(0, 150))
      assert.equal(proxy.requests()[0]?.outcome, 'cut')
      // The rule was used up; a second watch streams to the end.
      const whole = await request(`${proxy.url}/stream?watch=1`, { dispatcher: admin })
      const rest = await drain(whole.body)
      assert.equal(rest.error, undefined)
      assert.equal(rest.text, Array.from({ length: STREAM_CHUNKS }, (_, i) => line(i)).join(''))
    })

    test('a response larger than every buffer on the way arrives intact (backpressure)', async () => {
      const res = await request(`${proxy.url}/big`, { dispatcher: admin })
      let bytes = 0
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length
        if (bytes % (4 * 1024 * 1024) < (chunk as Buffer).length) await new Promise((r) => setTimeout(r, 50))
      }
      assert.equal(bytes, BIG_BYTES)
      assert.equal(proxy.requests()[0]?.bytes, BIG_BYTES)
      assert.equal(proxy.requests()[0]?.outcome, 'completed')
    })

    test('watch:false rules leave watches alone; drop kills the connection without a response', async () => {
      proxy.addFault({ watch: false, action: { type: 'drop' } })
      await assert.rejects(request(`${proxy.url}/api`, { dispatcher: admin }))
      const res = await request(`${proxy.url}/stream?watch=1`, { dispatcher: admin })
      assert.equal(res.statusCode, 200)
      assert.equal((await drain(res.body)).error, undefined)
      assert.deepEqual(
        proxy.requests().map((r) => [r.watch, r.fault, r.outcome]),
        [
          [false, 'drop', 'dropped'],
          [true, undefined, 'completed'],
        ],
      )
    })
  })
}

test('HTTP/2: a stream-scoped drop resets one stream and leaves the others on the connection alive', async () => {
  const cert = await pki.read(pki.admin)
  const dispatcher = new Agent({
    allowH2: true,
    connect: { ca: caPem, cert: cert.certPem, key: cert.keyPem },
  })
  try {
    const watch = await request(`${proxy.url}/open-stream?watch=1`, { dispatcher })
    const iterator = watch.body[Symbol.asyncIterator]()
    assert.equal((await iterator.next()).value?.toString('utf8'), line(0))
    proxy.addFault({ path: '/api', times: 1, action: { type: 'drop', scope: 'stream' } })
    await assert.rejects(request(`${proxy.url}/api`, { dispatcher }))
    const after = await request(`${proxy.url}/api`, { dispatcher })
    assert.equal(after.statusCode, 200)
    await after.body.dump()
    const open = proxy.requests((r) => r.path === '/open-stream')[0]
    assert.equal(open?.endedAt, undefined, 'the watch on the same connection is still open')
    watch.body.destroy()
  } finally {
    proxy.clearFaults()
    proxy.clearLog()
    await dispatcher.destroy()
  }
})

test('an unreachable upstream gives a 502 Status', async () => {
  const cert = await pki.read(pki.admin)
  const dead = await FaultProxy.start({
    upstream: 'https://127.0.0.1:1',
    upstreamCaPem: caPem,
    upstreamClientCert: await pki.read(pki.frontProxyClient),
    servingCert: await pki.read(pki.proxyServing),
    clientCaPem: caPem,
  })
  const dispatcher = new Agent({ connect: { ca: caPem, cert: cert.certPem, key: cert.keyPem } })
  try {
    const res = await request(`${dead.url}/api`, { dispatcher })
    assert.equal(res.statusCode, 502)
    assert.equal(((await res.body.json()) as { kind: string }).kind, 'Status')
    assert.equal(dead.requests()[0]?.outcome, 'upstream-error')
  } finally {
    await dispatcher.destroy()
    await dead.close()
  }
})
