/**
 * Tracing end to end, against a real Jaeger and a kube-apiserver that traces too: the AppService
 * operator's reconcile is one trace holding the reconcile span, its API and database calls as child
 * spans, and the apiserver's own spans for the API calls under them (it joined through the
 * `traceparent` edgeop sent); the reconcile links to the trace of the write that caused it (the
 * `edgeop.io/traceparent` annotation).
 *
 * This file starts its own etcd and kube-apiserver (`startTestEnvironment`) with
 * `--tracing-config-file`, so the shared control plane of the other tests stays untraced.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { APPSERVICES, type AppService, appServiceCrd } from '../../src/operators/appservice/api.ts'
import { databaseApi } from '../../src/operators/appservice/database-api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { startTestEnvironment, type TestEnvironment } from '../../src/testing/test-environment.ts'
import { otlpConfigFromEnv } from '../../src/tracing/otlp-config.ts'
import { otlpHttpExporter } from '../../src/tracing/otlp-exporter.ts'
import { withSpan } from '../../src/tracing/span.ts'
import { parseTraceparent, TRACEPARENT_ANNOTATION } from '../../src/tracing/trace-context.ts'
import { Tracer } from '../../src/tracing/tracer.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceWhere, condition, runAppServiceController } from '../support/appservice.ts'
import {
  type Jaeger,
  type JaegerSpan,
  type JaegerTrace,
  serviceOf,
  startJaeger,
  tag,
} from '../support/jaeger.ts'

/** The kube-apiserver's default `service.name`. */
const APISERVER_SERVICE = 'apiserver'
/** A service name of this run's own, so that traces of other runs never match. */
const SERVICE = `edgeop-tracing-test-${randomBytes(3).toString('hex')}`

let jaeger: Jaeger
let env: TestEnvironment
let db: DatabaseStandin
let tracer: Tracer
let dir: string
const cleanups: (() => Promise<unknown>)[] = []

before(async () => {
  jaeger = await startJaeger()
  cleanups.push(() => jaeger.stop())
  dir = await mkdtemp(join(tmpdir(), 'edgeop-tracing-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  // Rate 0: the apiserver records no trace of its own, only those whose caller sent a sampled
  // traceparent (its sampler is parent-based) — so every apiserver span found below is there
  // because edgeop propagated its context.
  const tracing = join(dir, 'tracing.yaml')
  await writeFile(
    tracing,
    `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${jaeger.otlpGrpc}\nsamplingRatePerMillion: 0\n`,
  )
  env = await startTestEnvironment({
    apiserverArgs: [`--tracing-config-file=${tracing}`],
    crds: [appServiceCrd()],
  })
  cleanups.push(() => env.stop())
  db = await startDatabaseStandin()
  cleanups.push(() => db.close())
  const config = otlpConfigFromEnv(
    { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttp, OTEL_SERVICE_NAME: SERVICE },
    { name: 'edgeop' },
  )!
  tracer = new Tracer(otlpHttpExporter(config.exporter), { sampler: config.sampler, scheduledDelayMs: 200 })
})

after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
})

const childrenOf = (trace: JaegerTrace, parent: JaegerSpan) =>
  trace.spans.filter((s) => s.references.some((r) => r.refType === 'CHILD_OF' && r.spanID === parent.spanID))

/** The trace below `span` as indented lines `service: operation`, for the test's diagnostics. */
const tree = (trace: JaegerTrace, span: JaegerSpan, depth = 0): string[] => [
  `${'  '.repeat(depth)}${serviceOf(trace, span) === SERVICE ? 'edgeop' : serviceOf(trace, span)}: ${span.operationName}`,
  ...childrenOf(trace, span).flatMap((c) => tree(trace, c, depth + 1)),
]

test('one trace: the reconcile span, its API and database call spans, and the apiserver spans under them; the write is linked', async (t) => {
  const ns = await env.createNamespace('tracing')
  const { stop } = await runAppServiceController(
    env.client,
    { namespaces: [ns], database: databaseApi(db.url) },
    (controller) => controller.instrument({ tracer }),
  )
  cleanups.push(stop)
  const apps = env.client.resource(APPSERVICES, ns)

  // The writer: a span of its own whose create call the apiserver joins; the object names it.
  const writer = tracer.startSpan('test: create AppService')
  await withSpan(writer, () =>
    apps.create({
      metadata: { name: 'traced', annotations: { [TRACEPARENT_ANNOTATION]: writer.traceparent } },
      spec: { image: 'nginx:1.27', replicas: 1, port: 80, database: { enabled: true, class: 'standard' } },
    } as AppService),
  )
  writer.end()
  await appServiceWhere(
    apps,
    'traced',
    (a) => condition(a, 'DatabaseReady')?.status === 'True',
    'database ready',
    90_000,
  )
  await tracer.flush()

  // The reconcile that created the database: its trace holds everything.
  const found = await eventually(
    async () => {
      for (const trace of await jaeger.traces(SERVICE)) {
        const root = trace.spans.find(
          (s) =>
            s.operationName === 'reconcile appservice' &&
            childrenOf(trace, s).some((c) => c.operationName === 'database-api POST') &&
            childrenOf(trace, s).some((c) =>
              childrenOf(trace, c).some((a) => serviceOf(trace, a) === APISERVER_SERVICE),
            ),
        )
        if (root) return { trace, root }
      }
      return undefined
    },
    {
      timeoutMs: 60_000,
      what: `a trace of ${SERVICE} with the reconcile, its calls and the apiserver's spans in Jaeger`,
    },
  )
  const { trace, root } = found
  t.diagnostic(`trace ${root.traceID}:\n${tree(trace, root).join('\n')}`)
  assert.equal(root.references.filter((r) => r.refType === 'CHILD_OF').length, 0, 'the reconcile is the root')
  assert.equal(tag(root, 'edgeop.controller'), 'appservice')
  assert.equal(tag(root, 'edgeop.object'), `${ns}/traced`)
  assert.match(String(tag(root, 'edgeop.reconcile_id')), /^[\da-f]{16}$/)
  assert.ok(['success', 'requeue', 'requeue_after'].includes(String(tag(root, 'edgeop.result'))))

  const calls = childrenOf(trace, root)
  const apiCalls = calls.filter((c) => /^(GET|POST|PUT|PATCH|DELETE) \/api/.test(c.operationName))
  assert.ok(apiCalls.length > 0, `API call spans under the reconcile: ${calls.map((c) => c.operationName)}`)
  for (const c of apiCalls) {
    assert.equal(serviceOf(trace, c), SERVICE)
    assert.equal(tag(c, 'span.kind'), 'client')
    assert.equal(tag(c, 'http.request.method'), c.operationName.split(' ')[0])
    assert.equal(typeof tag(c, 'http.response.status_code'), 'number')
  }
  // The apiserver's spans hang under edgeop's client spans, in the same trace.
  const served = apiCalls.filter((c) =>
    childrenOf(trace, c).some((a) => serviceOf(trace, a) === APISERVER_SERVICE),
  )
  assert.ok(served.length > 0, 'the apiserver joined the trace under edgeop call spans')
  assert.ok(trace.spans.every((s) => s.traceID === root.traceID))

  // The database call: a child span, and the stand-in received its traceparent.
  const post = calls.find((c) => c.operationName === 'database-api POST')!
  const sent = db.requests.filter((r) => r.method === 'POST').map((r) => parseTraceparent(r.traceparent))
  assert.ok(
    sent.some((c) => c?.traceId === root.traceID && c.spanId === post.spanID),
    'the database API received the POST span as its parent',
  )

  // The first reconcile after the write links to the writer's span (a FOLLOWS_FROM reference in Jaeger).
  const linked = await eventually(
    async () =>
      (await jaeger.traces(SERVICE))
        .flatMap((t) => t.spans)
        .find(
          (s) =>
            s.operationName === 'reconcile appservice' &&
            s.references.some(
              (r) =>
                r.refType === 'FOLLOWS_FROM' &&
                r.traceID === writer.context.traceId &&
                r.spanID === writer.context.spanId,
            ),
        ),
    { timeoutMs: 30_000, what: 'a reconcile span linked to the writer' },
  )
  assert.equal(tag(linked, 'edgeop.object'), `${ns}/traced`)
  // And the writer's own trace holds the apiserver's span for the create.
  const writerTrace = (await jaeger.traces(SERVICE)).find((t) => t.traceID === writer.context.traceId)
  assert.ok(writerTrace, 'the writer trace is in Jaeger')
  assert.ok(
    writerTrace.spans.some((s) => serviceOf(writerTrace, s) === APISERVER_SERVICE),
    'the apiserver joined the writer trace',
  )
})
