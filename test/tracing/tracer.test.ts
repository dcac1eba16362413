/**
 * The tracer: IDs, parent/child structure, sampling at the start, the active span across awaits, and
 * the two callers that propagate it — the API client and the AppService database client — sending
 * `traceparent` from inside a span and nothing outside one.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { databaseApi } from '../../src/operators/appservice/database-api.ts'
import { activeSpan, type SpanData, withSpan } from '../../src/tracing/span.ts'
import { parseTraceparent } from '../../src/tracing/trace-context.ts'
import { Tracer } from '../../src/tracing/tracer.ts'
import { Transport } from '../../src/transport/transport.ts'
import { json, startStub } from '../support/http-stub.ts'

function recordingTracer(ratio = 1) {
  const exported: SpanData[] = []
  let t = 1_700_000_000_000
  const tracer = new Tracer(async (spans) => void exported.push(...spans), {
    sampler: { ratio, parentBased: true },
    now: () => t++,
  })
  return { tracer, exported }
}

test('a root gets fresh IDs; a child shares its trace and names its parent; ending twice records once', async () => {
  const { tracer, exported } = recordingTracer()
  const root = tracer.startSpan('root', { attributes: { a: 1 } })
  const child = root.child('child', { kind: 'client' })
  assert.match(root.context.traceId, /^[\da-f]{32}$/)
  assert.match(root.context.spanId, /^[\da-f]{16}$/)
  assert.equal(child.context.traceId, root.context.traceId)
  assert.notEqual(child.context.spanId, root.context.spanId)
  assert.equal(child.parentSpanId, root.context.spanId)
  assert.equal(root.parentSpanId, undefined)
  assert.deepEqual(parseTraceparent(child.traceparent), child.context)
  child.fail(new Error('nope'))
  child.end()
  child.end()
  root.set('b', 'x').end()
  await tracer.flush()
  assert.deepEqual(
    exported.map((s) => [s.name, s.kind, s.error, s.attributes]),
    [
      ['child', 'client', 'nope', {}],
      ['root', 'internal', undefined, { a: 1, b: 'x' }],
    ],
  )
  assert.ok(exported.every((s) => s.endMs > s.startMs))
  assert.deepEqual(tracer.stats(), { queued: 0, exported: 2, dropped: 0 })
})

test('a remote parent is joined; an unsampled trace has IDs and propagates, but nothing is exported', async () => {
  const { tracer, exported } = recordingTracer(0)
  const remote = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: true }
  const joined = tracer.startSpan('joined', { parent: remote })
  assert.equal(joined.context.traceId, remote.traceId)
  assert.equal(joined.context.sampled, true, 'parent-based: a sampled caller wins over ratio 0')
  joined.end()
  const root = tracer.startSpan('root')
  assert.equal(root.context.sampled, false)
  assert.match(root.traceparent, /-00$/)
  root.child('c').end()
  root.end()
  await tracer.flush()
  assert.deepEqual(
    exported.map((s) => s.name),
    ['joined'],
  )
})

test('withSpan: the span is active across awaits inside, and only there', async () => {
  const { tracer } = recordingTracer()
  const span = tracer.startSpan('r')
  assert.equal(activeSpan(), undefined)
  await withSpan(span, async () => {
    await new Promise((r) => setTimeout(r, 1))
    assert.equal(activeSpan(), span)
  })
  assert.equal(activeSpan(), undefined)
})

test('the API client: inside a span each call is a client child span sending its traceparent; outside, no header', async () => {
  const stub = await startStub((req, res) =>
    req.url.includes('missing') ? json(res, 404, { kind: 'Status', code: 404 }) : json(res, 200, {}),
  )
  const transport = new Transport(
    { server: stub.url, tls: { insecureSkipVerify: false }, namespace: 'default', source: 'test' },
    { qps: -1 },
  )
  try {
    const { tracer, exported } = recordingTracer()
    const root = tracer.startSpan('reconcile')
    await withSpan(root, async () => {
      await transport.request({ method: 'GET', path: '/api/v1/namespaces/a/configmaps/b?x=1' })
      await transport.request({ method: 'GET', path: '/api/v1/missing' }).catch(() => {})
    })
    await transport.request({ method: 'GET', path: '/version' })
    root.end()
    await tracer.flush()
    const [first, second] = exported
    assert.equal(first?.name, 'GET /api/v1/namespaces/a/configmaps/b')
    assert.equal(first?.kind, 'client')
    assert.equal(first?.parentSpanId, root.context.spanId)
    assert.deepEqual(first?.attributes, {
      'http.request.method': 'GET',
      'url.full': `${stub.url}/api/v1/namespaces/a/configmaps/b`,
      'http.response.status_code': 200,
    })
    assert.equal(second?.attributes['http.response.status_code'], 404)
    assert.ok(second?.error, 'a failed call is a failed span')
    const sent = stub.seen.map((r) => parseTraceparent(r.headers.traceparent as string | undefined))
    assert.deepEqual(sent[0], first?.context)
    assert.deepEqual(sent[1], second?.context)
    assert.equal(stub.seen[2]?.headers.traceparent, undefined, 'no span, no header')
  } finally {
    await transport.close()
    await stub.close()
  }
})

test('the database client: a call in a span is its child and carries traceparent', async () => {
  const stub = await startStub((_req, res) => json(res, 200, { state: 'ready' }))
  try {
    const { tracer, exported } = recordingTracer()
    const root = tracer.startSpan('reconcile')
    const db = databaseApi(stub.url)
    await withSpan(root, () => db.get('k1'))
    await db.get('k2')
    root.end()
    await tracer.flush()
    assert.equal(exported[0]?.name, 'database-api GET')
    assert.equal(exported[0]?.parentSpanId, root.context.spanId)
    assert.equal(exported[0]?.attributes['url.full'], `${stub.url}/v1/databases/k1`)
    assert.deepEqual(parseTraceparent(stub.seen[0]?.headers.traceparent as string), exported[0]?.context)
    assert.equal(stub.seen[1]?.headers.traceparent, undefined)
  } finally {
    await stub.close()
  }
})
