import assert from 'node:assert/strict'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { test } from 'node:test'
import { createSecureContext } from 'node:tls'
import {
  SELF_SIGNED_BACKDATE_MS,
  SELF_SIGNED_VALIDITY_MS,
  selfSignedCertificate,
} from '../../src/observability/self-signed-cert.ts'

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5)

test('a self-signed certificate that X.509 parsers accept, signed by its own key, for localhost and 127.0.0.1', () => {
  const pair = selfSignedCertificate(undefined, NOW)
  const x = new X509Certificate(pair.cert)
  assert.equal(x.subject, 'CN=localhost')
  assert.equal(x.issuer, 'CN=localhost')
  assert.equal(x.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1')
  assert.ok(x.verify(x.publicKey), 'self-signed: the signature verifies with its own public key')
  assert.ok(x.checkPrivateKey(createPrivateKey(pair.key)))
  assert.equal(Date.parse(x.validFrom), NOW - SELF_SIGNED_BACKDATE_MS)
  assert.equal(Date.parse(x.validTo), NOW - SELF_SIGNED_BACKDATE_MS + SELF_SIGNED_VALIDITY_MS)
  assert.ok(x.checkHost('localhost'))
  assert.ok(x.checkIP('127.0.0.1'))
  assert.doesNotThrow(() => createSecureContext(pair), 'TLS accepts the pair')
})

test('every certificate has a new key and a new positive serial', () => {
  const a = new X509Certificate(selfSignedCertificate(['svc.ns.svc', '10.0.0.1'], NOW).cert)
  const b = new X509Certificate(selfSignedCertificate(['svc.ns.svc', '10.0.0.1'], NOW).cert)
  assert.equal(a.subjectAltName, 'DNS:svc.ns.svc, IP Address:10.0.0.1')
  assert.notEqual(a.serialNumber, b.serialNumber)
  assert.notEqual(a.fingerprint256, b.fingerprint256)
  assert.match(a.serialNumber, /^[4-7][0-9A-F]{31}$/, '16 octets, top bit clear, no leading zero')
})
