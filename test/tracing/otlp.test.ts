/**
 * OTLP/HTTP JSON: the body's shape, the exporter against a loopback receiver (headers sent, failures
 * as retryable errors that never quote a header), and the configuration from the OTEL_* variables.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEFAULT_OTLP_ENDPOINT, otlpConfigFromEnv } from '../../src/tracing/otlp-config.ts'
import { otlpHttpExporter, otlpJson } from '../../src/tracing/otlp-exporter.ts'
import type { SpanData } from '../../src/tracing/span.ts'
import { json, startStub } from '../support/http-stub.ts'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const span: SpanData = {
  name: 'GET /api/v1/pods',
  kind: 'client',
  context: { traceId: TRACE, spanId: '00f067aa0ba902b7', sampled: true },
  parentSpanId: '1111111111111111',
  links: [{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), sampled: true }],
  attributes: { s: 'x', i: 200, d: 0.5, b: true },
  startMs: 1_700_000_000_000.25,
  endMs: 1_700_000_000_001.5,
  error: 'boom',
}

test('otlpJson: hex IDs, nanosecond strings, kinds and typed attribute values, links, error status', () => {
  const body = JSON.parse(otlpJson([span], { 'service.name': 'edgeop' }))
  const rs = body.resourceSpans[0]
  assert.deepEqual(rs.resource.attributes, [{ key: 'service.name', value: { stringValue: 'edgeop' } }])
  assert.equal(rs.scopeSpans[0].scope.name, 'edgeop')
  assert.deepEqual(rs.scopeSpans[0].spans[0], {
    traceId: TRACE,
    spanId: '00f067aa0ba902b7',
    parentSpanId: '1111111111111111',
    name: 'GET /api/v1/pods',
    kind: 3,
    startTimeUnixNano: '1700000000000250000',
    endTimeUnixNano: '1700000000001500000',
    attributes: [
      { key: 's', value: { stringValue: 'x' } },
      { key: 'i', value: { intValue: 200 } },
      { key: 'd', value: { doubleValue: 0.5 } },
      { key: 'b', value: { boolValue: true } },
    ],
    links: [{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16) }],
    status: { code: 2, message: 'boom' },
  })
  const root = JSON.parse(
    otlpJson([{ ...span, kind: 'internal', parentSpanId: undefined, error: undefined }]),
  )
  const s = root.resourceSpans[0].scopeSpans[0].spans[0]
  assert.equal(s.kind, 1)
  assert.equal('parentSpanId' in s, false)
  assert.deepEqual(s.status, {})
})

test('the exporter POSTs JSON with the configured headers; a refusal or no answer is a retryable error without them', async () => {
  const stub = await startStub((_req, res, n) => (n === 0 ? json(res, 200, {}) : json(res, 401, {})))
  try {
    const exporter = otlpHttpExporter({
      url: `${stub.url}/v1/traces?q=1`,
      headers: { authorization: 'Bearer s3cr3t' },
      resource: { 'service.name': 'edgeop' },
    })
    await exporter([span])
    const seen = stub.seen[0]!
    assert.equal(seen.method, 'POST')
    assert.equal(seen.url, '/v1/traces?q=1')
    assert.equal(seen.headers['content-type'], 'application/json')
    assert.equal(seen.headers.authorization, 'Bearer s3cr3t')
    assert.equal(JSON.parse(seen.body).resourceSpans[0].scopeSpans[0].spans.length, 1)
    await assert.rejects(exporter([span]), (err: Error & { code: string; retryable: boolean }) => {
      assert.equal(err.code, 'EDGEOP_ERR_NETWORK')
      assert.equal(err.retryable, true)
      assert.equal(err.message, `OTLP export to ${stub.url}/v1/traces: HTTP 401`)
      return true
    })
  } finally {
    await stub.close()
  }
  const gone = otlpHttpExporter({ url: `${stub.url}/v1/traces`, headers: { authorization: 'Bearer s3cr3t' } })
  await assert.rejects(gone([span]), (err: Error) => {
    assert.match(err.message, /no answer$/)
    assert.doesNotMatch(err.message, /s3cr3t/)
    return true
  })
})

test('config: defaults are the OpenTelemetry ones; OTEL_SDK_DISABLED turns tracing off', () => {
  assert.deepEqual(otlpConfigFromEnv({}, { name: 'edgeop', version: '1.2.3' }), {
    exporter: {
      url: `${DEFAULT_OTLP_ENDPOINT}/v1/traces`,
      headers: {},
      timeoutMs: 10_000,
      resource: { 'service.version': '1.2.3', 'service.name': 'edgeop' },
    },
    sampler: { ratio: 1, parentBased: true },
  })
  assert.equal(otlpConfigFromEnv({ OTEL_SDK_DISABLED: 'TRUE' }, { name: 'x' }), undefined)
})

test('config: endpoint, traces endpoint as is, headers, timeout, service name and resource attributes', () => {
  const c = otlpConfigFromEnv(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant = t1 ,',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_SERVICE_NAME: 'edge-a',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=ignored,k8s.node.name=n1',
    },
    { name: 'edgeop' },
  )!
  assert.equal(c.exporter.url, 'http://collector:4318/v1/traces')
  assert.deepEqual(c.exporter.headers, { authorization: 'Bearer abc', 'x-tenant': 't1' })
  assert.equal(c.exporter.timeoutMs, 2500)
  assert.deepEqual(c.exporter.resource, { 'service.name': 'edge-a', 'k8s.node.name': 'n1' })
  const t = otlpConfigFromEnv(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo:443/otlp/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=2',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attrs',
    },
    { name: 'edgeop' },
  )!
  assert.equal(t.exporter.url, 'https://tempo:443/otlp/v1/traces')
  assert.deepEqual(t.exporter.headers, { b: '2' }, 'the traces variable replaces the general one')
  assert.equal(t.exporter.timeoutMs, 700)
  assert.equal(t.exporter.resource?.['service.name'], 'from-attrs')
})

test('config: the samplers', () => {
  const sampler = (name?: string, arg?: string) =>
    otlpConfigFromEnv(
      { ...(name ? { OTEL_TRACES_SAMPLER: name } : {}), ...(arg ? { OTEL_TRACES_SAMPLER_ARG: arg } : {}) },
      { name: 'x' },
    )?.sampler
  assert.deepEqual(sampler(), { ratio: 1, parentBased: true })
  assert.deepEqual(sampler('parentbased_traceidratio', '0.1'), { ratio: 0.1, parentBased: true })
  assert.deepEqual(sampler('traceidratio', '0'), { ratio: 0, parentBased: false })
  assert.deepEqual(sampler('always_on', '0.5'), { ratio: 1, parentBased: false })
  assert.deepEqual(sampler('always_off'), { ratio: 0, parentBased: false })
  assert.deepEqual(sampler('parentbased_always_off'), { ratio: 0, parentBased: true })
})

test('config: a bad variable is EDGEOP_ERR_CONFIG naming it, never quoting its value', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /ENDPOINT: expected an http\(s\) URL/],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://x' }, /ENDPOINT/],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /PROTOCOL: expected http\/json/],
    [{ OTEL_EXPORTER_OTLP_TIMEOUT: '-5' }, /TIMEOUT/],
    [{ OTEL_EXPORTER_OTLP_TIMEOUT: 'soon' }, /TIMEOUT/],
    [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER: /],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, /OTEL_TRACES_SAMPLER_ARG/],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: 'ok=1,secret-token-without-equals' },
      /HEADERS: expected key=value pairs \(entry 2\)/,
    ],
    [{ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=%E0%A4%Asecret' }, /HEADERS: .*entry 1/],
  ]
  for (const [env, message] of bad) {
    assert.throws(
      () => otlpConfigFromEnv(env, { name: 'x' }),
      (err: Error & { code: string }) => {
        assert.equal(err.code, 'EDGEOP_ERR_CONFIG')
        assert.match(err.message, message)
        assert.doesNotMatch(err.message, /secret/)
        return true
      },
      JSON.stringify(env),
    )
  }
  assert.equal(
    otlpConfigFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, { name: 'x' })?.exporter.url,
    `${DEFAULT_OTLP_ENDPOINT}/v1/traces`,
  )
})
