import assert from 'node:assert/strict'
import { request } from 'node:https'
import { test } from 'node:test'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { issueCertificate } from '../../src/tls/self-signed-cert.ts'
import { MAX_REVIEW_DEPTH, WebhookServer } from '../../src/webhook/webhook-server.ts'
import { rawConnection, rawRequest, statusOf } from '../support/raw-http.ts'

const review = (request: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request })
const req = (object: unknown, extra: Record<string, unknown> = {}) =>
  review({ uid: 'u1', operation: 'CREATE', object, ...extra })

function server() {
  const registry = new MetricsRegistry()
  const s = new WebhookServer({ registry })
    .validate('/validate', (r) =>
      r.object?.metadata.name === 'bad'
        ? { allowed: false, message: 'bad name', warnings: ['w'] }
        : r.object?.metadata.name === 'boom'
          ? (() => {
              throw new Error('kaput')
            })()
          : { warnings: r.dryRun ? ['dry'] : [] },
    )
    .mutate('/mutate', (r, o) => {
      if (o.metadata.name === 'boom') throw new Error('kaput')
      o.metadata.labels = { ...o.metadata.labels, team: 'edge' }
      return r.dryRun ? { warnings: ['dry'] } : undefined
    })
  const count = (webhook: string, outcome: string) =>
    registry
      .counter({ name: 'edgeop_webhook_requests_total', help: '', labelNames: ['webhook', 'outcome'] })
      .get({ webhook, outcome })
  return { s, count, registry }
}

test('a validating webhook allows, denies with the message and code 403, and echoes the uid', async () => {
  const { s, count } = server()
  const ok = await s.serve('/validate', req({ metadata: { name: 'good' } }, { dryRun: true }))
  assert.deepEqual(ok, {
    status: 200,
    body: {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: true, warnings: ['dry'] },
    },
  })
  const no = await s.serve('/validate', req({ metadata: { name: 'bad' } }))
  assert.deepEqual((no.body as { response: unknown }).response, {
    uid: 'u1',
    allowed: false,
    status: { code: 403, message: 'bad name' },
    warnings: ['w'],
  })
  assert.equal(count('/validate', 'allowed'), 1)
  assert.equal(count('/validate', 'denied'), 1)
})

test('a mutating webhook answers the JSON Patch of its changes, base64', async () => {
  const { s, count } = server()
  const r = await s.serve('/mutate', req({ metadata: { name: 'a', labels: { x: '1' } } }))
  const response = (r.body as { response: { patch: string; patchType: string } }).response
  assert.equal(response.patchType, 'JSONPatch')
  assert.deepEqual(JSON.parse(Buffer.from(response.patch, 'base64').toString()), [
    { op: 'add', path: '/metadata/labels/team', value: 'edge' },
  ])
  assert.equal(count('/mutate', 'patched'), 1)
})

test('a malformed review is a 400 with a message; an unknown path 404', async () => {
  const { s, count } = server()
  for (const body of [
    '{',
    '"x"',
    '{}',
    review({ operation: 'CREATE' }),
    JSON.stringify({ kind: 'AdmissionReview', request: { uid: 'u' } }),
  ]) {
    const r = await s.serve('/validate', body)
    assert.equal(r.status, 400, body)
    assert.match(String(r.body), /not a JSON object|expected an admission.k8s.io\/v1 AdmissionReview/)
  }
  assert.equal(count('/validate', 'bad_request'), 5)
  assert.equal((await s.serve('/nope', req({}))).status, 404)
})

test('a throwing handler denies (validating) or answers 500 (mutating), counted as error', async () => {
  const { s, count } = server()
  const v = await s.serve('/validate', req({ metadata: { name: 'boom' } }))
  assert.deepEqual((v.body as { response: unknown }).response, {
    uid: 'u1',
    allowed: false,
    status: { code: 500, message: 'webhook /validate failed: kaput' },
  })
  const m = await s.serve('/mutate', req({ metadata: { name: 'boom' } }))
  assert.deepEqual(m, { status: 500, body: 'webhook /mutate failed: kaput' })
  assert.equal(count('/validate', 'error'), 1)
  assert.equal(count('/mutate', 'error'), 1)
})

test('over HTTPS: POST only, 413 beyond the limit, certificate swapped without restart', async (t) => {
  const { s, registry } = server()
  const ca = issueCertificate({ isCA: true, commonName: 'test-ca' })
  const address = await s.start('127.0.0.1:0', issueCertificate({ hosts: ['127.0.0.1'], issuer: ca }))
  t.after(() => s.close())
  const port = Number(address.split(':')[1])
  const call = (method: string, body: string, caPem = ca.cert) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const r = request(
        { host: '127.0.0.1', port, method, path: '/validate', ca: caPem, agent: false },
        (res) => {
          let text = ''
          res.on('data', (d) => (text += d))
          res.on('end', () => resolve({ status: res.statusCode!, text }))
        },
      )
      r.on('error', reject)
      r.end(body)
    })
  assert.equal((await call('GET', '')).status, 405)
  const ok = await call('POST', req({ metadata: { name: 'x' } }))
  assert.equal(ok.status, 200)
  assert.equal(JSON.parse(ok.text).response.allowed, true)
  assert.equal((await call('POST', 'x'.repeat(7 * 1024 * 1024 + 1))).status, 413)
  assert.match(
    registry.render(),
    /controller_runtime_webhook_latency_seconds_count\{webhook="\/validate"\} 1/,
  )
  const ca2 = issueCertificate({ isCA: true, commonName: 'test-ca-2' })
  s.setCertificate(issueCertificate({ hosts: ['127.0.0.1'], issuer: ca2 }))
  await assert.rejects(call('POST', req({})), /self-signed|unable to verify|certificate/)
  assert.equal((await call('POST', req({ metadata: { name: 'x' } }), ca2.cert)).status, 200)
})

const conversion = (request: unknown) =>
  JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request })

test('a conversion webhook converts every object to desiredAPIVersion in order, passes same-version ones through, and counts', async () => {
  const { s, count } = server()
  const seen: string[] = []
  s.convert('/convert', (o, to) => {
    seen.push(`${o.metadata.name}:${o.apiVersion}`)
    return { ...o, apiVersion: to, spec: { converted: true } }
  })
  const a = { apiVersion: 'x.io/v1', kind: 'K', metadata: { name: 'a' } }
  const b = { apiVersion: 'x.io/v2', kind: 'K', metadata: { name: 'b' } }
  const out = await s.serve(
    '/convert',
    conversion({ uid: 'c1', desiredAPIVersion: 'x.io/v2', objects: [a, b] }),
  )
  assert.deepEqual(out, {
    status: 200,
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c1',
        result: { status: 'Success' },
        convertedObjects: [{ ...a, apiVersion: 'x.io/v2', spec: { converted: true } }, b],
      },
    },
  })
  assert.deepEqual(seen, ['a:x.io/v1'])
  assert.equal(count('/convert', 'converted'), 1)
})

test('a converter that throws fails the review with its message; a malformed review gets a 400', async () => {
  const { s, count } = server()
  s.convert('/convert', () => {
    throw new Error('no such version')
  })
  const objects = [{ apiVersion: 'x.io/v1', kind: 'K', metadata: { name: 'a' } }]
  const failed = await s.serve('/convert', conversion({ uid: 'c2', desiredAPIVersion: 'x.io/v2', objects }))
  assert.equal(failed.status, 200)
  assert.deepEqual((failed.body as { response: unknown }).response, {
    uid: 'c2',
    result: { status: 'Failure', message: 'conversion to x.io/v2 failed: no such version' },
    convertedObjects: [],
  })
  assert.equal(count('/convert', 'error'), 1)
  for (const body of [
    conversion({ uid: 'c3', objects }), // no desiredAPIVersion
    conversion({ uid: 'c3', desiredAPIVersion: 'x.io/v2', objects: {} }),
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'ConversionReview',
      request: { uid: 'c3', desiredAPIVersion: 'x.io/v2', objects },
    }),
    req({ metadata: { name: 'a' } }), // an AdmissionReview
  ]) {
    const r = await s.serve('/convert', body)
    assert.equal(r.status, 400, body)
    assert.match(String(r.body), /expected an apiextensions\.k8s\.io\/v1 ConversionReview/)
  }
  assert.equal(count('/convert', 'bad_request'), 4)
})

/** An AdmissionReview of about 16 KiB whose request.object nests `levels` objects. */
const deepReview = (levels: number) =>
  req({ metadata: { name: 'x' }, spec: JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`) })
const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

async function started(t: { after(fn: () => unknown): void }, limits = {}) {
  const { s, count } = server()
  const ca = issueCertificate({ isCA: true, commonName: 'test-ca' })
  const webhooks = new WebhookServer({ limits })
    .validate('/validate', () => undefined)
    .mutate('/mutate', () => {})
  const address = await webhooks.start('127.0.0.1:0', issueCertificate({ hosts: ['127.0.0.1'], issuer: ca }))
  t.after(() => webhooks.close())
  return { s, count, address }
}

test('D1: an absolute-form request target with port 99999 is answered 400, the webhook server lives', async (t) => {
  const { address } = await started(t)
  const raw = await rawRequest(address, post('http://a:99999/validate', req({})), true)
  assert.equal(statusOf(raw), 400, raw)
  assert.equal(statusOf(await rawRequest(address, post('/validate', req({})), true)), 200)
})

test('D2: an AdmissionReview nesting 2,000 objects under request.object is refused before parsing, in words, and the server lives', async (t) => {
  const body = deepReview(2000)
  assert.ok(body.length < 20 * 1024, 'about 16 KiB')
  const { s, count, address } = await started(t)
  const message = `the review nests deeper than ${MAX_REVIEW_DEPTH} levels`
  const denial = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'u1', allowed: false, status: { code: 400, message } },
  }
  for (const path of ['/validate', '/mutate']) {
    assert.deepEqual(await s.serve(path, body), { status: 200, body: denial })
    assert.equal(count(path, 'bad_request'), 1)
    const raw = await rawRequest(address, post(path, body), true)
    assert.equal(statusOf(raw), 200, raw)
    assert.ok(raw.includes(JSON.stringify(denial.response)), raw)
  }
  const noUid = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":${'['.repeat(2000)}${']'.repeat(2000)}}`
  assert.deepEqual(
    await s.serve('/validate', noUid),
    { status: 400, body: message },
    'no uid to answer: a 400',
  )
  assert.equal(statusOf(await rawRequest(address, post('/validate', noUid), true)), 400)
  const fine = await s.serve('/mutate', deepReview(MAX_REVIEW_DEPTH - 10))
  assert.equal(fine.status, 200, 'depth within the limit is served')
  assert.equal(statusOf(await rawRequest(address, post('/validate', req({})), true)), 200)
})

test('D2: a ConversionReview nested too deep fails the conversion in words, unparsed', async () => {
  const s = new WebhookServer().convert('/convert', () => {
    throw new Error('never called')
  })
  const objects = [JSON.parse(`${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`)]
  const r = await s.serve('/convert', conversion({ uid: 'c1', desiredAPIVersion: 'x/v2', objects }))
  assert.deepEqual(r, {
    status: 200,
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c1',
        result: { status: 'Failure', message: `the review nests deeper than ${MAX_REVIEW_DEPTH} levels` },
        convertedObjects: [],
      },
    },
  })
})

test('D19: the webhook server takes its limits: a partial head is answered 408 and closed once the head timeout passes', {
  timeout: 20_000,
}, async (t) => {
  const { address } = await started(t, { headersTimeoutMs: 200, timeoutCheckIntervalMs: 50 })
  const raw = await rawConnection(address, 'POST /validate HTTP/1.1\r\nhost: x\r\n', true).closed
  assert.equal(statusOf(raw), 408, raw)
})
