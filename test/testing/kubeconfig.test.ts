import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse } from 'yaml'
import { renderKubeconfig } from '../../src/testing/kubeconfig.ts'

const b64 = (s: string) => Buffer.from(s).toString('base64')

test('renders a self-contained kubectl-style kubeconfig for a client cert', () => {
  const text = renderKubeconfig({
    server: 'https://127.0.0.1:6443',
    caPem: 'CA PEM\n',
    credentials: { certPem: 'CERT\n', keyPem: 'KEY\n' },
    name: 'alice: "x"',
    namespace: 'ns-1',
  })
  assert.deepEqual(parse(text), {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'alice: "x"',
        cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA PEM\n') },
      },
    ],
    users: [
      {
        name: 'alice: "x"',
        user: { 'client-certificate-data': b64('CERT\n'), 'client-key-data': b64('KEY\n') },
      },
    ],
    contexts: [
      { name: 'alice: "x"', context: { cluster: 'alice: "x"', user: 'alice: "x"', namespace: 'ns-1' } },
    ],
    'current-context': 'alice: "x"',
  })
})

test('renders a token user, with the default context name', () => {
  const config = parse(
    renderKubeconfig({ server: 'https://127.0.0.1:1', caPem: 'CA', credentials: { token: 'abc' } }),
  )
  assert.deepEqual(config.users, [{ name: 'edgeop-test', user: { token: 'abc' } }])
  assert.equal(config.contexts[0].context.namespace, undefined)
})
