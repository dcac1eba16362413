import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import type { Socket } from 'node:net'
import { after, describe, test } from 'node:test'
import { HealthChecks, ping } from '../../src/health/health-checks.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { type MetricsAuthDecision, MetricsAuthFilter } from '../../src/server/metrics-auth.ts'
import { type OpsServer, parseBindAddress, startOpsServer } from '../../src/server/ops-server.ts'
import type { RequestSpec } from '../../src/transport/request-spec.ts'
import { freePort } from '../support/ports.ts'
import { rawConnection, rawRequest, statusOf } from '../support/raw-http.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { scrape } from '../support/scrape.ts'

interface Reply {
  status: number
  body: string
  headers: Record<string, string | string[] | undefined>
  socket: Socket
}

function get(
  address: string,
  path: string,
  options: { method?: string; agent?: Agent } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      `http://${address}${path}`,
      { method: options.method ?? 'GET', agent: options.agent },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          body += c
        })
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers, socket: req.socket! }),
        )
      },
    )
    req.on('error', reject)
    req.end()
  })
}

function setup() {
  const registry = new MetricsRegistry()
  registry.counter({ name: 'up_total', help: 'Up.' }).inc()
  const healthz = new HealthChecks('healthz')
  healthz.add('ping', ping)
  const readyz = new HealthChecks('readyz')
  let ready = false
  readyz.add('informers', () => {
    if (!ready) throw new Error('configmaps: not synced')
  })
  return { registry, healthz, readyz, setReady: (v: boolean) => (ready = v) }
}

const servers: OpsServer[] = []
after(async () => {
  for (const s of servers) await s.close()
})

async function start(options: Parameters<typeof startOpsServer>[0]): Promise<OpsServer> {
  const s = await startOpsServer(options)
  servers.push(s)
  return s
}

describe('ops server over loopback HTTP', () => {
  test('/metrics on the metrics address, probes on the probe address, and nothing crosses over', async () => {
    const s = setup()
    const ops = await start({
      ...s,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
    })
    assert.match(ops.metricsAddress!, /^127\.0\.0\.1:\d+$/)
    assert.notEqual(ops.metricsAddress, ops.healthProbeAddress)
    const m = await get(ops.metricsAddress!, '/metrics')
    assert.equal(m.status, 200)
    assert.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
    assert.equal(m.body, '# HELP up_total Up.\n# TYPE up_total counter\nup_total 1\n')
    assert.equal((await get(ops.metricsAddress!, '/healthz')).status, 404)
    assert.equal((await get(ops.healthProbeAddress!, '/metrics')).status, 404)
    const h = await get(ops.healthProbeAddress!, '/healthz')
    assert.deepEqual([h.status, h.body, h.headers['cache-control']], [200, 'ok', 'no-store'])
  })

  test('readiness answers 500 with the failing check, then 200 once it passes', async () => {
    const s = setup()
    const ops = await start({ ...s, metricsBindAddress: '0', healthProbeBindAddress: '127.0.0.1:0' })
    const before = await get(ops.healthProbeAddress!, '/readyz?verbose')
    assert.deepEqual(
      [before.status, before.body],
      [500, '[-]informers failed: configmaps: not synced\nreadyz check failed\n'],
    )
    s.setReady(true)
    assert.deepEqual(
      [
        (await get(ops.healthProbeAddress!, '/readyz')).status,
        (await get(ops.healthProbeAddress!, '/readyz/informers')).body,
      ],
      [200, 'ok'],
    )
    assert.equal((await get(ops.healthProbeAddress!, '/readyz/nope')).status, 404)
    assert.equal(
      (await get(ops.healthProbeAddress!, '/healthz?verbose')).body,
      '[+]ping ok\nhealthz check passed\n',
    )
  })

  test('"0" disables an address; one shared address serves all three paths', async () => {
    const s = setup()
    const off = await start({ ...s, metricsBindAddress: '0', healthProbeBindAddress: '' })
    assert.deepEqual([off.metricsAddress, off.healthProbeAddress], [undefined, undefined])
    const port = await freePort()
    const both = await start({
      ...s,
      metricsBindAddress: `127.0.0.1:${port}`,
      healthProbeBindAddress: `127.0.0.1:${port}`,
    })
    assert.equal(both.metricsAddress, `127.0.0.1:${port}`)
    assert.equal(both.healthProbeAddress, both.metricsAddress)
    assert.equal((await get(both.metricsAddress!, '/metrics')).status, 200)
    assert.equal((await get(both.metricsAddress!, '/healthz')).status, 200)
  })

  test('only GET and HEAD are served', async () => {
    const s = setup()
    const ops = await start({ ...s, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' })
    const post = await get(ops.metricsAddress!, '/metrics', { method: 'POST' })
    assert.deepEqual([post.status, post.headers.allow], [405, 'GET, HEAD'])
    const head = await get(ops.metricsAddress!, '/metrics', { method: 'HEAD' })
    assert.deepEqual([head.status, head.body], [200, ''])
  })

  test('close() ends keep-alive connections at once and stops accepting', async () => {
    const s = setup()
    const ops = await startOpsServer({
      ...s,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
    })
    const agent = new Agent({ keepAlive: true })
    const first = await get(ops.metricsAddress!, '/metrics', { agent })
    const second = await get(ops.metricsAddress!, '/metrics', { agent })
    assert.equal(first.socket, second.socket, 'the connection was kept alive')
    const closed = new Promise((r) => first.socket.once('close', r))
    const t0 = performance.now()
    await ops.close()
    await closed
    assert.ok(performance.now() - t0 < 1000, 'did not wait for the keep-alive timeout')
    await assert.rejects(get(ops.metricsAddress!, '/metrics'), /ECONNREFUSED/)
    await assert.rejects(get(ops.healthProbeAddress!, '/healthz'), /ECONNREFUSED/)
    agent.destroy()
  })

  test('close() does not wait for a request still in progress', async () => {
    const s = setup()
    let release = () => {}
    s.readyz.add('slow', () => new Promise<void>((r) => (release = r)))
    const ops = await startOpsServer({ ...s, metricsBindAddress: '0', healthProbeBindAddress: '127.0.0.1:0' })
    const pending = get(ops.healthProbeAddress!, '/readyz')
    await new Promise((r) => setTimeout(r, 20)) // the request is now waiting on the check
    const closed = await Promise.race([
      ops.close().then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 2000).unref()),
    ])
    release()
    assert.equal(closed, true, 'close() returned while the check was still pending')
    await assert.rejects(pending, /socket hang up|ECONNRESET/)
  })

  test('a port in use fails with EDGEOP_ERR_CONFIG naming the address, and closes what had started', async () => {
    const s = setup()
    const taken = await start({ ...s, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' })
    const metricsBindAddress = `127.0.0.1:${await freePort()}`
    const err = (await startOpsServer({
      ...s,
      metricsBindAddress,
      healthProbeBindAddress: taken.metricsAddress!,
    }).then(
      () => assert.fail('expected EADDRINUSE'),
      (e: unknown) => e,
    )) as Error & { code: string }
    assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
    assert.match(
      err.message,
      new RegExp(`cannot listen on ${taken.metricsAddress!.replace(/\./g, '\\.')}: .*EADDRINUSE`),
    )
    await assert.rejects(get(metricsBindAddress, '/metrics'), /ECONNREFUSED/, 'the metrics server was closed')
  })
})

describe('secure metrics', () => {
  /** A filter that lets `good` in, refuses `other` with 403 and anything else with 401. */
  const filter = {
    seen: [] as (string | undefined)[],
    async decide(h: string | undefined): Promise<MetricsAuthDecision> {
      this.seen.push(h)
      if (h === 'Bearer good') return { status: 200, reason: 'allowed' }
      if (h === 'Bearer other') return { status: 403, reason: 'Authorization denied for user "bob"' }
      return { status: 401, reason: 'Unauthorized' }
    },
  }
  const loopback = { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' }

  test('/metrics is HTTPS (self-signed) and answers what the filter decides; probes stay plain HTTP without it', async () => {
    const s = setup()
    const ops = await start({ ...s, ...loopback, secureMetrics: { filter } })
    const url = `https://${ops.metricsAddress}/metrics`
    const ok = await scrape(url, 'good')
    assert.equal(ok.status, 200)
    assert.match(ok.body, /^up_total 1$/m)
    assert.match(ok.fingerprint256 ?? '', /^[0-9A-F:]{95}$/)
    const none = await scrape(url)
    assert.deepEqual([none.status, none.body, none.wwwAuthenticate], [401, 'Unauthorized\n', 'Bearer'])
    const denied = await scrape(url, 'other')
    assert.deepEqual([denied.status, denied.body], [403, 'Authorization denied for user "bob"\n'])
    assert.equal((await scrape(`https://${ops.metricsAddress}/nothing`, 'good')).status, 404)
    await assert.rejects(scrape(`http://${ops.metricsAddress}/metrics`), 'no plain HTTP on the TLS port')
    filter.seen.length = 0
    assert.equal((await get(ops.healthProbeAddress!, '/healthz')).status, 200)
    assert.deepEqual(filter.seen, [], 'probes are not filtered')
  })

  test('secure metrics on the probes address are refused: the kubelet probes plain HTTP', async () => {
    const port = await freePort()
    const at = `127.0.0.1:${port}`
    await assert.rejects(
      startOpsServer({
        ...setup(),
        metricsBindAddress: at,
        healthProbeBindAddress: at,
        secureMetrics: { filter },
      }),
      /secure metrics need their own address/,
    )
  })
})

describe('bind addresses', () => {
  const cases: [string, ReturnType<typeof parseBindAddress> | 'error'][] = [
    ['0', undefined],
    ['', undefined],
    [':8080', { host: undefined, port: 8080 }],
    ['127.0.0.1:9090', { host: '127.0.0.1', port: 9090 }],
    ['[::1]:8081', { host: '::1', port: 8081 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
    ['8080', 'error'],
    [':http', 'error'],
    [':70000', 'error'],
    ['a b:80', 'error'],
  ]
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected) ?? 'disabled'}`, () => {
      if (expected === 'error') assert.throws(() => parseBindAddress(input), /is not \[host\]:port or "0"/)
      else assert.deepEqual(parseBindAddress(input), expected)
    })
  }
})

describe('the dead-letter view', () => {
  const entry = {
    controller: 'appservice',
    key: 'shop/web',
    reason: 'attempts',
    errorClass: 'forbidden',
    lastError: '"PATCH /apis/apps/v1/namespaces/shop/deployments/web: 403 Forbidden"',
    attempts: 5,
    firstFailure: '2023-11-14T22:13:20.000Z',
    lastFailure: '2023-11-14T22:15:20.000Z',
  }
  const view = () => {
    const parked = [entry]
    const retried: string[] = []
    return {
      retried,
      parked: () => parked,
      retryParked: (key: string) => {
        retried.push(key)
        return key === entry.key ? 1 : 0
      },
    }
  }

  test('GET /debug/parked lists the parked keys as JSON; POST …/<key>/retry re-arms one, 404 when not parked', async () => {
    const parked = view()
    const ops = await start({
      ...setup(),
      parked,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
    })
    const list = await get(ops.metricsAddress!, '/debug/parked')
    assert.equal(list.status, 200)
    assert.equal(list.headers['content-type'], 'application/json')
    assert.deepEqual(JSON.parse(list.body), [entry])
    const ok = await get(ops.metricsAddress!, '/debug/parked/shop%2Fweb/retry', { method: 'POST' })
    assert.equal(ok.status, 200)
    const plain = await get(ops.metricsAddress!, '/debug/parked/shop/web/retry', { method: 'POST' })
    assert.equal(plain.status, 200, 'the key need not be encoded')
    const missing = await get(ops.metricsAddress!, '/debug/parked/shop/db/retry', { method: 'POST' })
    assert.equal(missing.status, 404)
    assert.deepEqual(parked.retried, ['shop/web', 'shop/web', 'shop/db'])
    const wrong = await get(ops.metricsAddress!, '/debug/parked/shop/web/retry')
    assert.equal(wrong.status, 405, 'a retry is a POST')
    assert.equal(wrong.headers.allow, 'POST')
    const elsewhere = await get(ops.metricsAddress!, '/metrics', { method: 'POST' })
    assert.equal(elsewhere.status, 405, 'POST nowhere else')
    assert.equal(parked.retried.length, 3)
  })

  test('without a view, and on the probe server, /debug/parked is 404', async () => {
    const none = await start({ ...setup(), metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' })
    assert.equal((await get(none.metricsAddress!, '/debug/parked')).status, 404)
    const probes = await start({
      ...setup(),
      parked: view(),
      metricsBindAddress: '0',
      healthProbeBindAddress: '127.0.0.1:0',
    })
    assert.equal((await get(probes.healthProbeAddress!, '/debug/parked')).status, 404)
  })
})

describe('one hardened request path', () => {
  const GET = (target: string) => `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`
  const loopback = { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' }

  test('D1: an absolute-form request target with port 99999 is answered 400 on the probe, metrics and secure metrics addresses; each server lives', async () => {
    const plain = await start({ ...setup(), ...loopback })
    const secure = await start({
      ...setup(),
      ...loopback,
      secureMetrics: { filter: { decide: async () => ({ status: 200, reason: 'allowed' }) } },
    })
    for (const [address, tls] of [
      [plain.healthProbeAddress!, false],
      [plain.metricsAddress!, false],
      [secure.metricsAddress!, true],
    ] as const) {
      const raw = await rawRequest(address, GET('http://a:99999/healthz'), tls)
      assert.equal(statusOf(raw), 400, raw)
    }
    assert.equal((await get(plain.healthProbeAddress!, '/healthz')).status, 200)
    assert.equal((await get(plain.metricsAddress!, '/metrics')).status, 200)
    assert.equal(statusOf(await rawRequest(secure.metricsAddress!, GET('/metrics'), true)), 200)
  })

  test('D19: the ops servers take their limits: a partial head is answered 408 and closed once the head timeout passes', {
    timeout: 20_000,
  }, async () => {
    const ops = await start({
      ...setup(),
      ...loopback,
      limits: { headersTimeoutMs: 200, timeoutCheckIntervalMs: 50 },
    })
    const raw = await rawConnection(ops.healthProbeAddress!, 'GET /healthz HTTP/1.1\r\nhost: x\r\n').closed
    assert.equal(statusOf(raw), 408, raw)
    assert.equal((await get(ops.healthProbeAddress!, '/healthz')).status, 200)
  })

  test('a handler that throws (a parked view, a health check) is answered 500, logged once, and the server still serves', async () => {
    const logger = recordingLogger()
    const s = setup()
    s.healthz.respond = () => {
      throw new Error('checks broke')
    }
    const ops = await start({
      ...s,
      ...loopback,
      logger,
      parked: {
        parked: () => {
          throw new Error('view broke')
        },
        retryParked: () => 0,
      },
    })
    assert.equal((await get(ops.metricsAddress!, '/debug/parked')).status, 500)
    assert.equal((await get(ops.healthProbeAddress!, '/healthz')).status, 500)
    assert.equal((await get(ops.metricsAddress!, '/metrics')).status, 200)
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error').map((l) => l.fields?.error),
      ['view broke', 'checks broke'],
    )
  })

  test('D18: POST /debug/parked/<key>/retry with a metrics-reader token is 403: re-arming needs create on /debug/parked', async () => {
    /** The apiserver: `reader` may get /metrics, `operator` may also create /debug/parked. */
    const grants: Record<string, string[]> = {
      reader: ['get /metrics'],
      operator: ['get /metrics', 'create /debug/parked'],
    }
    const reviewer = {
      async request<T>(spec: RequestSpec): Promise<T> {
        const body = spec.body as {
          spec: { token?: string; user?: string; nonResourceAttributes?: { path: string; verb: string } }
        }
        if (spec.path.endsWith('/tokenreviews'))
          return { status: { authenticated: true, user: { username: body.spec.token } } } as T
        const a = body.spec.nonResourceAttributes!
        return { status: { allowed: grants[body.spec.user!]?.includes(`${a.verb} ${a.path}`) ?? false } } as T
      },
    }
    const retried: string[] = []
    const ops = await start({
      ...setup(),
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '0',
      parked: { parked: () => [], retryParked: (k) => retried.push(k) },
      secureMetrics: { filter: new MetricsAuthFilter(reviewer) },
    })
    const post = (token: string) =>
      rawRequest(
        ops.metricsAddress!,
        `POST /debug/parked/shop%2Fweb/retry HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
        true,
      )
    const asReader = await post('reader')
    assert.equal(statusOf(asReader), 403, asReader)
    assert.deepEqual(retried, [], 'nothing re-armed')
    assert.equal((await scrape(`https://${ops.metricsAddress}/metrics`, 'reader')).status, 200)
    assert.equal((await scrape(`https://${ops.metricsAddress}/debug/parked`, 'reader')).status, 200)
    assert.equal(statusOf(await post('operator')), 200)
    assert.deepEqual(retried, ['shop/web'])
  })
})
