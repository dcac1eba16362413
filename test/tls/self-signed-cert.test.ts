import assert from 'node:assert/strict'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { connect, createSecureContext, createServer } from 'node:tls'
import {
  issueCertificate,
  SELF_SIGNED_BACKDATE_MS,
  SELF_SIGNED_VALIDITY_MS,
  selfSignedCertificate,
} from '../../src/tls/self-signed-cert.ts'

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

test('two CAs with one name in a bundle: a TLS client picks the issuer by key identifier, not the first by name', async () => {
  // The webhook CA rotation failed in CI with CERT_SIGNATURE_FAILURE when two CAs made in the same
  // second shared a CN: OpenSSL took the first CA of that name. The key identifiers prevent that.
  const first = issueCertificate({ isCA: true, commonName: 'same-ca' })
  const second = issueCertificate({ isCA: true, commonName: 'same-ca' })
  const leaf = issueCertificate({ hosts: ['127.0.0.1'], issuer: second })
  const l = new X509Certificate(leaf.cert)
  const ca = new X509Certificate(second.cert)
  assert.ok(l.checkIssued(ca) && l.verify(ca.publicKey))
  const server = createServer({ cert: leaf.cert, key: leaf.key }, (s) => s.end())
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    const { port } = server.address() as AddressInfo
    const fingerprint = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, ca: [first.cert, second.cert] }, () => {
        resolve(s.getPeerX509Certificate()!.fingerprint256)
        s.end()
      })
      s.on('error', reject)
    })
    assert.equal(fingerprint, l.fingerprint256)
  } finally {
    server.close()
  }
})
