import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  basicAuthProvider,
  clientCertificateProvider,
  StaticCredentialProvider,
  staticTokenProvider,
} from '../../src/config/static-credentials.ts'

test('static providers return the same frozen credentials every time and describe themselves without the secret', async () => {
  const token = staticTokenProvider('tok-3e3e', 'user "a"')
  assert.deepEqual(await token.get(), { token: 'tok-3e3e' })
  assert.equal(await token.get(), await token.get())
  assert.ok(Object.isFrozen(await token.get()))
  assert.equal(token.describe, 'bearer token of user "a"')
  const basic = basicAuthProvider('admin', 'pw-4f4f')
  assert.deepEqual(await basic.get(), { basic: { username: 'admin', password: 'pw-4f4f' } })
  assert.equal(basic.describe, 'basic auth of static credentials')
  const cert = clientCertificateProvider('CERT', 'KEY-5a5a', 'user "b"')
  assert.deepEqual(await cert.get(), { clientCertificate: 'CERT', clientKey: 'KEY-5a5a' })
  for (const p of [token, basic, cert]) {
    assert.equal(p.invalidate, undefined, 'a 401 cannot be fixed by asking again')
    assert.ok(p instanceof StaticCredentialProvider)
    assert.ok(!/tok-3e3e|pw-4f4f|KEY-5a5a/.test(p.describe))
  }
})
