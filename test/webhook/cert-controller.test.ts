import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/index.ts'
import { ManualClock } from '../../src/core/clock.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import {
  WEBHOOK_CERT_RETRY_MS,
  WebhookCertController,
  type WebhookCertControllerOptions,
} from '../../src/webhook/cert-controller.ts'
import { certStep, WEBHOOK_CERT_CHECK_INTERVAL_MS } from '../../src/webhook/cert-rotation.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const DAY = 86_400_000
const HOSTS = ['op-webhook.op-system.svc', '127.0.0.1', '::1']

/**
 * A client holding one Secret in memory, enough for the controller: get, create and update of the
 * Secret (counted), and NotFound for every webhook configuration. No apiserver: the behaviour under
 * test is the controller's decision loop, which the integration suite runs against a real one.
 */
function secretStore() {
  let stored: (KubeObject & { data?: Record<string, string> }) | undefined
  let version = 0
  const writes: Record<string, string>[] = []
  const notFound = (path: string) =>
    new ApiError({ status: 404, reason: 'NotFound', message: 'not found', method: 'GET', path })
  const write = async (obj: KubeObject & { data?: Record<string, string> }) => {
    stored = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } })
    writes.push(obj.data ?? {})
    return structuredClone(stored)
  }
  const secrets = {
    get: async (name: string) => {
      if (!stored) throw notFound(`/api/v1/namespaces/op-system/secrets/${name}`)
      return structuredClone(stored)
    },
    create: write,
    update: write,
  }
  const client = {
    resource: (type: { resource: string }) =>
      type.resource === 'secrets'
        ? secrets
        : {
            get: async (name: string) => {
              throw notFound(`/${type.resource}/${name}`)
            },
          },
  } as unknown as KubeClient
  return { client, writes }
}

/** A controller for `HOSTS` over a fresh {@link secretStore}, at `startMs` on a ManualClock. */
function controller(startMs: number, options: Partial<WebhookCertControllerOptions> = {}) {
  const clock = new ManualClock(startMs)
  const { client, writes } = secretStore()
  const served: string[] = []
  const certs = new WebhookCertController({
    client,
    namespace: 'op-system',
    secretName: 'op-webhook-cert',
    hosts: HOSTS,
    clock,
    onCertificate: (pair) => served.push(pair.cert),
    ...options,
  })
  return { certs, clock, writes, served }
}

const decoded = (data: Record<string, string>, key: string): string =>
  Buffer.from(data[key] ?? '', 'base64').toString()

test('D3: in 2041 the webhook certificate controller writes one CA and serving pair and keeps them (no write loop)', async () => {
  const { certs, clock, writes, served } = controller(Date.UTC(2041, 6, 1))
  const first = await certs.sync()
  assert.equal(writes.length, 1)
  assert.equal(first.wakeAt, clock.now() + WEBHOOK_CERT_CHECK_INTERVAL_MS)
  const ca = new X509Certificate(decoded(writes[0]!, 'ca.crt'))
  assert.equal(ca.validToDate.getUTCFullYear(), 2051)
  const data = Object.fromEntries(
    ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'].map((k) => [k, decoded(writes[0]!, k)]),
  )
  assert.deepEqual(certStep(data, HOSTS, clock.now()), { kind: 'keep', wakeAt: first.wakeAt })

  const stop = new AbortController()
  const running = certs.run(stop.signal)
  await clock.advance(DAY)
  stop.abort()
  await running
  assert.equal(writes.length, 1, 'a day of passes every 10 min wrote nothing more')
  assert.equal(served.length, 1)
})

test('D3: a certificate that is unusable right after issuance is a named error and no Secret write; run retries every WEBHOOK_CERT_RETRY_MS', async () => {
  // A CA valid for a day inside a 90-day renewal window is due for renewal the moment it is made:
  // each pass would write a new CA at once, as the 1951 CA did.
  const logger = recordingLogger(['warn'])
  const { certs, clock, writes, served } = controller(Date.UTC(2030, 0, 1), {
    logger,
    timing: { caValidityMs: DAY },
  })
  await assert.rejects(certs.sync(), (e: Error & { code?: string; step?: string }) => {
    assert.equal(e.code, 'EDGEOP_ERR_INVALID')
    assert.equal(e.step, 'check issued webhook certificate')
    assert.match(e.message, /op-system\/op-webhook-cert/)
    assert.match(e.message, /notAfter 2030-01-01T23:00:00Z/)
    assert.match(e.message, /renewal window of 90 days/)
    assert.doesNotMatch(e.message, /PRIVATE KEY|BEGIN/)
    return true
  })
  assert.equal(writes.length, 0)

  const stop = new AbortController()
  const running = certs.run(stop.signal)
  await clock.advance(60_000)
  stop.abort()
  await running
  assert.equal(writes.length, 0, 'still no Secret write')
  assert.equal(served.length, 0, 'no pair is served')
  const passes = 1 + 60_000 / WEBHOOK_CERT_RETRY_MS
  assert.equal(logger.lines.length, passes, 'one failed pass per retry interval, each logged once')
  assert.match(String(logger.lines[0]?.fields?.error), /renewal window/)
})

test('D3: a CA rotation followed by a serving pair from the new CA is two passes, not a loop', async () => {
  const { certs, clock, writes } = controller(Date.UTC(2049, 11, 31), { timing: { propagationMs: 60_000 } })
  await certs.sync()
  await certs.rotate()
  assert.equal(writes.length, 2)
  await clock.advance(61_000)
  assert.equal((await certs.sync()).wakeAt, clock.now() + WEBHOOK_CERT_CHECK_INTERVAL_MS)
  assert.equal(writes.length, 3, 'the new serving pair, then nothing')
  assert.equal((await certs.sync()).wakeAt, clock.now() + WEBHOOK_CERT_CHECK_INTERVAL_MS)
  assert.equal(writes.length, 3)
  const leaf = new X509Certificate(decoded(writes[2]!, 'tls.crt'))
  assert.ok(leaf.checkIP('::1'))
  assert.equal(leaf.validToDate.getUTCFullYear(), 2050)
})
