import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import {
  IN_CLUSTER_CA_FILE,
  IN_CLUSTER_NAMESPACE_FILE,
  IN_CLUSTER_TOKEN_FILE,
  isInCluster,
  loadInClusterConfig,
} from '../../src/config/in-cluster.ts'
import { TokenFileProvider } from '../../src/config/token-file.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const CA = '-----BEGIN CERTIFICATE-----\nIN-CLUSTER TEST CA\n-----END CERTIFICATE-----\n'
const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-incluster-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

function serviceAccount(name: string, files: { token?: string; ca?: string; namespace?: string }) {
  const dir = path.join(tmp, name)
  mkdirSync(dir, { recursive: true })
  const paths = {
    tokenFile: path.join(dir, 'token'),
    caFile: path.join(dir, 'ca.crt'),
    namespaceFile: path.join(dir, 'namespace'),
  }
  if (files.token !== undefined) writeFileSync(paths.tokenFile, files.token)
  if (files.ca !== undefined) writeFileSync(paths.caFile, files.ca)
  if (files.namespace !== undefined) writeFileSync(paths.namespaceFile, files.namespace)
  return paths
}

const ENV = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }

test('client-go paths for the service account', () => {
  assert.equal(IN_CLUSTER_TOKEN_FILE, '/var/run/secrets/kubernetes.io/serviceaccount/token')
  assert.equal(IN_CLUSTER_CA_FILE, '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt')
  assert.equal(IN_CLUSTER_NAMESPACE_FILE, '/var/run/secrets/kubernetes.io/serviceaccount/namespace')
})

test('not in a cluster unless both KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set', async () => {
  assert.equal(isInCluster({}), false)
  assert.equal(isInCluster({ KUBERNETES_SERVICE_HOST: 'h' }), false)
  assert.equal(isInCluster(ENV), true)
  await assert.rejects(loadInClusterConfig({ env: {} }), {
    code: 'EDGEOP_ERR_CONFIG',
    message:
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (both are required)',
  })
  await assert.rejects(
    loadInClusterConfig({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '' } }),
    {
      code: 'EDGEOP_ERR_CONFIG',
      message: 'not running in a cluster: KUBERNETES_SERVICE_PORT is not set (both are required)',
    },
  )
})

test('service host and port, CA, namespace and a rotating token', async () => {
  const paths = serviceAccount('full', { token: 'sa-token-1\n', ca: CA, namespace: 'edge-system\n' })
  const clock = new ManualClock()
  const config = await loadInClusterConfig({ env: ENV, clock, ...paths })
  assert.equal(config.server, 'https://10.96.0.1:443')
  assert.deepEqual(config.tls, { ca: CA, insecureSkipVerify: false })
  assert.equal(config.namespace, 'edge-system')
  assert.equal(config.source, 'in-cluster')
  assert.ok(config.credentials instanceof TokenFileProvider)
  assert.deepEqual(await config.credentials.get(), { token: 'sa-token-1' })
  writeFileSync(paths.tokenFile, 'sa-token-2')
  await clock.advance(50_000)
  assert.deepEqual(await config.credentials.get(), { token: 'sa-token-2' }, 'bound tokens rotate')
})

test('an IPv6 service host is bracketed', async () => {
  const paths = serviceAccount('v6', { token: 't', ca: CA })
  const config = await loadInClusterConfig({
    env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '443' },
    ...paths,
  })
  assert.equal(config.server, 'https://[fd00:10:96::1]:443')
})

test('a missing or unparsable CA is logged and the system roots are used; no namespace file means "default"', async () => {
  const missing = serviceAccount('no-ca', { token: 't' })
  const logger = recordingLogger(['error'])
  const config = await loadInClusterConfig({ env: ENV, logger, ...missing })
  assert.equal(config.tls.ca, undefined)
  assert.equal(config.namespace, 'default')
  assert.equal(logger.lines[0]?.msg, 'cannot load the in-cluster CA; using the system roots')
  assert.equal(logger.lines[0]?.fields?.path, missing.caFile)
  const garbage = serviceAccount('bad-ca', { token: 't', ca: 'not a certificate', namespace: '' })
  const logger2 = recordingLogger(['error'])
  const config2 = await loadInClusterConfig({ env: ENV, logger: logger2, ...garbage })
  assert.equal(config2.tls.ca, undefined)
  assert.equal(config2.namespace, 'default')
  assert.equal(logger2.lines.length, 1)
})

test('an unreadable token fails the load (client-go reads it once at config time)', async () => {
  const paths = serviceAccount('no-token', { ca: CA })
  await assert.rejects(loadInClusterConfig({ env: ENV, ...paths }), {
    code: 'EDGEOP_ERR_CONFIG',
    message: `in-cluster config: cannot read token file ${paths.tokenFile}: ENOENT`,
  })
})
