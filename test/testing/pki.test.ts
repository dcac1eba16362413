import assert from 'node:assert/strict'
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { exec } from '../../src/testing/exec.ts'
import { subject, TestPki } from '../../src/testing/pki.ts'

let dir: string
let pki: TestPki

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgeop-pki-test-'))
  pki = await TestPki.create(dir)
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

const cert = async (path: string) => new X509Certificate(await readFile(path))

test('every leaf chains to its CA and carries the right usage', async () => {
  for (const [ca, leaf, usage] of [
    [pki.ca, pki.apiserver, 'TLS Web Server Authentication'],
    [pki.ca, pki.proxyServing, 'TLS Web Server Authentication'],
    [pki.ca, pki.admin, 'TLS Web Client Authentication'],
    [pki.frontProxyCa, pki.frontProxyClient, 'TLS Web Client Authentication'],
  ] as const) {
    await exec('openssl', ['verify', '-CAfile', ca.cert, leaf.cert])
    const text = (await exec('openssl', ['x509', '-in', leaf.cert, '-noout', '-text'])).stdout
    assert.match(text, new RegExp(usage))
    assert.match(text, /CA:FALSE/)
    assert.equal((await cert(leaf.cert)).checkIssued(await cert(ca.cert)), true)
  }
  await assert.rejects(exec('openssl', ['verify', '-CAfile', pki.ca.cert, pki.frontProxyClient.cert]))
})

test('the apiserver serving cert covers loopback and the in-cluster names', async () => {
  const c = await cert(pki.apiserver.cert)
  for (const name of ['127.0.0.1', '10.0.0.1']) assert.equal(c.checkIP(name), name)
  for (const name of ['localhost', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']) {
    assert.equal(c.checkHost(name), name)
  }
  assert.equal((await cert(pki.proxyServing.cert)).checkIP('127.0.0.1'), '127.0.0.1')
})

test('the admin is edgeop-admin in system:masters; issued certs carry exactly the given identity', async () => {
  assert.equal((await cert(pki.admin.cert)).subject, 'CN=edgeop-admin\nO=system:masters')
  const issued = await pki.issueClientCert('system:serviceaccount:ns:sa', ['team/a+b', 'x=y'])
  assert.deepEqual(
    { ...new X509Certificate(issued.certPem).toLegacyObject().subject },
    { CN: 'system:serviceaccount:ns:sa', O: ['team/a+b', 'x=y'] },
  )
  await exec('openssl', ['verify', '-CAfile', pki.ca.cert, issued.cert])
  const none = await pki.issueClientCert('nobody')
  assert.equal(new X509Certificate(none.certPem).subject, 'CN=nobody')
})

test('the service-account key pair is EC P-256 and matches', async () => {
  const key = createPrivateKey(await readFile(pki.serviceAccount.key))
  const pub = createPublicKey(await readFile(pki.serviceAccount.pub))
  assert.equal(key.asymmetricKeyType, 'ec')
  assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1')
  assert.deepEqual(createPublicKey(key).export({ format: 'jwk' }), pub.export({ format: 'jwk' }))
})

test('subject() escapes openssl separators and rejects empty values', () => {
  assert.equal(subject('a/b', ['c+d', 'e=f', 'g\\h']), '/CN=a\\/b/O=c\\+d/O=e\\=f/O=g\\\\h')
  assert.throws(() => subject(''), /empty/)
})
