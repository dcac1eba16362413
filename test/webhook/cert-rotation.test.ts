import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { test } from 'node:test'
import { issueCertificate } from '../../src/tls/self-signed-cert.ts'
import {
  certStep,
  notAfter,
  WEBHOOK_CERT_CHECK_INTERVAL_MS,
  type WebhookCertData,
} from '../../src/webhook/cert-rotation.ts'

const NOW = Date.UTC(2026, 5, 1)
const DAY = 86_400_000
const HOSTS = ['svc.ns.svc', '127.0.0.1']
const ca = (now = NOW, validityMs = 3650 * DAY) =>
  issueCertificate({ isCA: true, commonName: 'ca', now, validityMs })
const secret = (
  c = ca(),
  leafAt = NOW,
  validityMs = 365 * DAY,
  hosts = HOSTS,
  older = '',
): WebhookCertData => {
  const leaf = issueCertificate({ hosts, issuer: c, now: leafAt, validityMs })
  return { 'ca.crt': c.cert + older, 'ca.key': c.key, 'tls.crt': leaf.cert, 'tls.key': leaf.key }
}

test('no usable CA (absent, not a CA, key of another, expired) starts over', () => {
  assert.deepEqual(certStep({}, HOSTS, NOW), { kind: 'new-ca' })
  const s = secret()
  assert.deepEqual(certStep({ ...s, 'ca.key': ca().key }, HOSTS, NOW), { kind: 'new-ca' })
  const notCa = issueCertificate({ hosts: ['x'] })
  assert.deepEqual(certStep({ ...s, 'ca.crt': notCa.cert, 'ca.key': notCa.key }, HOSTS, NOW), {
    kind: 'new-ca',
  })
  assert.deepEqual(certStep(s, HOSTS, NOW + 3651 * DAY), { kind: 'new-ca' })
})

test('a CA inside the renewal window gets a successor in the bundle', () => {
  assert.deepEqual(certStep(secret(), HOSTS, NOW + 3600 * DAY), { kind: 'add-ca' })
})

test('a serving pair that is missing, expiring, for other hosts or of an unknown CA is reissued', () => {
  const s = secret()
  assert.deepEqual(certStep({ ...s, 'tls.crt': undefined }, HOSTS, NOW), { kind: 'new-serving' })
  assert.deepEqual(certStep(s, HOSTS, NOW + 300 * DAY), { kind: 'new-serving' })
  assert.deepEqual(certStep(s, [...HOSTS, 'other.ns.svc'], NOW), { kind: 'new-serving' })
  assert.deepEqual(certStep(secret(ca(), NOW, 365 * DAY, ['svc.ns.svc']), HOSTS, NOW), {
    kind: 'new-serving',
  })
  assert.deepEqual(certStep({ ...s, 'tls.key': ca().key }, HOSTS, NOW), { kind: 'new-serving' })
  const stranger = secret()
  assert.deepEqual(
    certStep({ ...s, 'tls.crt': stranger['tls.crt'], 'tls.key': stranger['tls.key'] }, HOSTS, NOW),
    {
      kind: 'new-serving',
    },
  )
})

test('a good pair is kept until the next check or the renewal time, whichever is first', () => {
  assert.deepEqual(certStep(secret(), HOSTS, NOW), {
    kind: 'keep',
    wakeAt: NOW + WEBHOOK_CERT_CHECK_INTERVAL_MS,
  })
  // Validity starts an hour back: this one reaches the renewal window a minute from now.
  const short = secret(ca(), NOW, 90 * DAY + 3_600_000 + 60_000)
  assert.deepEqual(certStep(short, HOSTS, NOW), { kind: 'keep', wakeAt: NOW + 60_000 })
})

test('after a new CA joins the bundle, the old serving pair is kept until the bundle has propagated', () => {
  const old = ca(NOW - 10 * DAY)
  const s = secret(old, NOW - 10 * DAY)
  const fresh = ca(NOW)
  const rotated: WebhookCertData = { ...s, 'ca.crt': fresh.cert + old.cert, 'ca.key': fresh.key }
  const waiting = certStep(rotated, HOSTS, NOW + 1000, { propagationMs: 60_000 })
  assert.equal(waiting.kind, 'keep')
  assert.ok(waiting.kind === 'keep' && waiting.wakeAt <= NOW + 60_000)
  assert.deepEqual(certStep(rotated, HOSTS, NOW + 61_000, { propagationMs: 60_000 }), { kind: 'new-serving' })
})

test('D3: a CA made in 2041 for 10 years is kept until its renewal window in 2051, read back across 2050', () => {
  const at = Date.UTC(2041, 6, 1)
  const s = secret(ca(at), at)
  assert.equal(notAfter(new X509Certificate(s['ca.crt']!)), at - 3_600_000 + 3650 * DAY)
  assert.equal(certStep(s, HOSTS, at + DAY).kind, 'keep')
  assert.equal(certStep(s, HOSTS, at + 364 * DAY).kind, 'new-serving', 'the one-year serving pair, in 2042')
  assert.deepEqual(certStep(s, HOSTS, Date.UTC(2051, 3, 1)), { kind: 'add-ca' })
  assert.deepEqual(certStep(s, HOSTS, Date.UTC(2051, 6, 1)), { kind: 'new-ca' })
})
