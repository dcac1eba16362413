/**
 * The operator's tracer (`--tracing=otlp`): built from the OTEL_* variables, exporting to the
 * endpoint, counting dropped spans by reason, logging an export outage once (endpoint, never a
 * header) and its recovery, and absent under OTEL_SDK_DISABLED.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { otlpTracer } from '../../src/operator/tracing.ts'
import { json, startStub } from '../support/http-stub.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const DROPPED = { name: 'edgeop_tracing_spans_dropped_total', help: '', labelNames: ['reason'] }

test('exports to the configured endpoint with its headers; an outage is logged once, its recovery too; drops are counted', async () => {
  let down = false
  const stub = await startStub((_req, res) => json(res, down ? 503 : 200, {}))
  const log = recordingLogger()
  const registry = new MetricsRegistry()
  try {
    const tracer = otlpTracer(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: stub.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cr3t',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '1',
      },
      { name: 'edgeop', version: '9.9.9' },
      registry,
      log,
    )!
    assert.deepEqual(log.lines[0], {
      level: 'info',
      msg: 'tracing: OTLP/HTTP JSON',
      fields: { endpoint: `${stub.url}/v1/traces`, ratio: 1, parentBased: false },
    })
    tracer.startSpan('a').end()
    await tracer.flush()
    const body = JSON.parse(stub.seen[0]!.body)
    assert.equal(stub.seen[0]!.headers.authorization, 'Bearer s3cr3t')
    assert.deepEqual(body.resourceSpans[0].resource.attributes, [
      { key: 'service.version', value: { stringValue: '9.9.9' } },
      { key: 'service.name', value: { stringValue: 'edgeop' } },
    ])
    down = true
    for (const name of ['b', 'c']) {
      tracer.startSpan(name).end()
      await tracer.flush()
    }
    down = false
    tracer.startSpan('d').end()
    await tracer.flush()
    assert.deepEqual(
      log.lines.slice(1).map((l) => [l.level, l.msg]),
      [
        ['warn', 'trace export failed; spans are dropped until it recovers'],
        ['info', 'trace export recovered'],
      ],
    )
    assert.equal(log.lines[1]?.fields?.error, `OTLP export to ${stub.url}/v1/traces: HTTP 503`)
    assert.doesNotMatch(JSON.stringify(log.lines), /s3cr3t/)
    assert.equal(registry.counter(DROPPED).get({ reason: 'export_failed' }), 2)
    await tracer.shutdown()
    tracer.startSpan('late').end()
    assert.equal(registry.counter(DROPPED).get({ reason: 'queue_full' }), 1)
  } finally {
    await stub.close()
  }
})

test('OTEL_SDK_DISABLED=true: no tracer, and a line saying so', () => {
  const log = recordingLogger()
  assert.equal(
    otlpTracer({ OTEL_SDK_DISABLED: 'true' }, { name: 'x' }, new MetricsRegistry(), log),
    undefined,
  )
  assert.deepEqual(
    log.lines.map((l) => l.msg),
    ['tracing off: OTEL_SDK_DISABLED=true'],
  )
})
