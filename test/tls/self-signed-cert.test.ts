import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { checkServerIdentity, connect, createSecureContext, createServer } from 'node:tls'
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

const DAY = 86_400_000
/** Runs openssl with `args`; its stdout. */
const openssl = (...args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8' })
/** The two Validity times of `pem` as openssl's asn1parse names them, e.g. `UTCTIME :491231235959Z`. */
const validityTimes = (pem: string): string[] => {
  const dir = mkdtempSync(join(tmpdir(), 'edgeop-cert-'))
  try {
    writeFileSync(join(dir, 'c.pem'), pem)
    return [
      ...openssl('asn1parse', '-in', join(dir, 'c.pem')).matchAll(/(UTCTIME|GENERALIZEDTIME)\s*:(\S+)/g),
    ].map((m) => `${m[1]} :${m[2]}`)
  } finally {
    rmSync(dir, { recursive: true })
  }
}

test('D3: a CA issued in 2041 for 10 years reads back notAfter 2051', () => {
  const now = Date.UTC(2041, 6, 1)
  const ca = new X509Certificate(
    issueCertificate({ isCA: true, commonName: 'ca', now, validityMs: 3650 * DAY }).cert,
  )
  assert.equal(ca.validFromDate.getTime(), now - SELF_SIGNED_BACKDATE_MS)
  assert.equal(ca.validToDate.getTime(), now - SELF_SIGNED_BACKDATE_MS + 3650 * DAY)
  assert.equal(ca.validToDate.getUTCFullYear(), 2051)
  assert.equal(Date.parse(ca.validTo), ca.validToDate.getTime(), 'the string form agrees')
})

test('D3: times through 2049 are UTCTime, from 2050 on GeneralizedTime (RFC 5280 §4.1.2.5), both read back exactly', () => {
  const lastUtc = Date.UTC(2049, 11, 31, 23, 59, 59)
  const pair = issueCertificate({ hosts: ['x'], now: lastUtc + SELF_SIGNED_BACKDATE_MS, validityMs: 1000 })
  assert.deepEqual(validityTimes(pair.cert), ['UTCTIME :491231235959Z', 'GENERALIZEDTIME :20500101000000Z'])
  const x = new X509Certificate(pair.cert)
  assert.equal(x.validFromDate.getTime(), lastUtc)
  assert.equal(x.validToDate.getTime(), lastUtc + 1000)
  const later = issueCertificate({
    hosts: ['x'],
    now: Date.UTC(2060, 5, 1, 12) + SELF_SIGNED_BACKDATE_MS,
    validityMs: 3650 * DAY,
  })
  assert.deepEqual(validityTimes(later.cert), [
    'GENERALIZEDTIME :20600601120000Z',
    'GENERALIZEDTIME :20700530120000Z',
  ])
  assert.equal(new X509Certificate(later.cert).validToDate.getTime(), Date.UTC(2070, 4, 30, 12))
  const early = issueCertificate({
    hosts: ['x'],
    now: Date.UTC(1999, 0, 1) + SELF_SIGNED_BACKDATE_MS,
    validityMs: DAY,
  })
  assert.deepEqual(validityTimes(early.cert), ['UTCTIME :990101000000Z', 'UTCTIME :990102000000Z'])
})

test('D3: a validity past 9999-12-31 or before 1950 is refused, not written in a form that reads back wrong', () => {
  assert.throws(
    () => issueCertificate({ hosts: ['x'], now: Date.UTC(9999, 0, 1), validityMs: 3650 * DAY }),
    (e: Error & { code?: string }) => e.code === 'EDGEOP_ERR_INVALID' && /10000|9999/.test(e.message),
  )
  assert.throws(() => issueCertificate({ hosts: ['x'], now: Date.UTC(1949, 0, 1) }), /1949|1950/)
})

test('D16: openssl verify -x509_strict accepts the CA and the leaf it signs; keyUsage, extKeyUsage and IP SANs as openssl reads them', () => {
  const now = Date.UTC(2045, 0, 1)
  const hosts = [
    'svc.ns.svc',
    '127.0.0.1',
    '::1',
    '2001:db8:85a3::8a2e:370:7334',
    'fe80::1:2:3:4',
    '::ffff:10.1.2.3',
  ]
  const ca = issueCertificate({ isCA: true, commonName: 'strict-ca', now, validityMs: 3650 * DAY })
  const leaf = issueCertificate({ hosts, issuer: ca, now, validityMs: 3650 * DAY })
  const dir = mkdtempSync(join(tmpdir(), 'edgeop-cert-'))
  try {
    const caFile = join(dir, 'ca.pem')
    const leafFile = join(dir, 'leaf.pem')
    writeFileSync(caFile, ca.cert)
    writeFileSync(leafFile, leaf.cert)
    // -attime: verify at the certificates' own time (2045), which the test fixes.
    const at = String((now + DAY) / 1000)
    assert.equal(
      openssl(
        'verify',
        '-x509_strict',
        '-attime',
        at,
        '-purpose',
        'sslserver',
        '-CAfile',
        caFile,
        leafFile,
      ).trim(),
      `${leafFile}: OK`,
    )
    assert.equal(
      openssl('verify', '-x509_strict', '-attime', at, '-CAfile', caFile, caFile).trim(),
      `${caFile}: OK`,
    )
    const caText = openssl('x509', '-noout', '-text', '-in', caFile)
    assert.match(caText, /X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign\n/)
    assert.match(caText, /X509v3 Basic Constraints: critical\s+CA:TRUE\n/)
    assert.match(caText, /Not After : Dec 29 23:00:00 2054 GMT/)
    const leafText = openssl('x509', '-noout', '-text', '-in', leafFile)
    assert.match(leafText, /X509v3 Key Usage: critical\s+Digital Signature\n/)
    assert.match(leafText, /X509v3 Extended Key Usage:\s+TLS Web Server Authentication\n/)
    assert.match(leafText, /X509v3 Basic Constraints: critical\s+CA:FALSE\n/)
    assert.match(leafText, /Not After : Dec 29 23:00:00 2054 GMT/)
    assert.match(
      leafText,
      /X509v3 Subject Alternative Name:\s+DNS:svc\.ns\.svc, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1, IP Address:2001:DB8:85A3:0:0:8A2E:370:7334, IP Address:FE80:0:0:0:1:2:3:4, IP Address:0:0:0:0:0:FFFF:A01:203\n/,
    )
    const x = new X509Certificate(leaf.cert)
    for (const ip of ['::1', '0:0::1', '2001:db8:85a3:0:0:8a2e:370:7334', 'fe80::1:2:3:4', '127.0.0.1'])
      assert.ok(x.checkIP(ip), ip)
    assert.ok(!x.checkHost('::1'), 'an address is not also a DNS name')
    // What a TLS client connecting to https://[::1] runs on the peer certificate.
    for (const ip of ['::1', '2001:db8:85a3::8a2e:370:7334'])
      assert.equal(checkServerIdentity(ip, x.toLegacyObject()), undefined, ip)
    assert.ok(checkServerIdentity('::2', x.toLegacyObject()) instanceof Error)
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test('D16: a self-signed serving certificate carries the same serving key usages', () => {
  const text = (() => {
    const dir = mkdtempSync(join(tmpdir(), 'edgeop-cert-'))
    try {
      writeFileSync(join(dir, 'c.pem'), selfSignedCertificate(['localhost', '::1'], NOW).cert)
      return openssl('x509', '-noout', '-text', '-in', join(dir, 'c.pem'))
    } finally {
      rmSync(dir, { recursive: true })
    }
  })()
  assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature\n/)
  assert.match(text, /X509v3 Extended Key Usage:\s+TLS Web Server Authentication\n/)
  assert.match(text, /DNS:localhost, IP Address:0:0:0:0:0:0:0:1\n/)
})

test('D16: a host that is neither an IP address nor an ASCII DNS name is refused with its name, and so is no host', () => {
  assert.throws(
    () => issueCertificate({ hosts: [] }),
    (e: Error & { code?: string }) => e.code === 'EDGEOP_ERR_INVALID' && /at least one host/.test(e.message),
  )
  assert.doesNotThrow(
    () => issueCertificate({ isCA: true, hosts: [], commonName: 'ca' }),
    'a CA has no hosts',
  )
  for (const h of ['fe80::1%eth0', 'bücher.example', 'a b'])
    assert.throws(
      () => issueCertificate({ hosts: [h] }),
      (e: Error & { code?: string }) => e.code === 'EDGEOP_ERR_INVALID' && e.message.includes(h),
      h,
    )
})
