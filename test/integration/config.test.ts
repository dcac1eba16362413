/**
 * Config and client together on the real apiserver: the harness's kubeconfig loaded by
 * our loader, and an exec plugin that hands out a client certificate.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { loadClusterConfig } from '../../src/config/load.ts'
import { isForbidden } from '../../src/transport/api-error.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, defer } = useTestEnv()

test('the admin kubeconfig written by the harness loads and reaches the server', async () => {
  const config = await loadClusterConfig({ kubeconfig: env().kubeconfig, env: {} })
  assert.equal(config.server, env().server)
  const client = new KubeClient(config)
  defer(() => client.close())
  const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' })
  assert.equal(version.gitVersion, `v${env().versions.kubernetes}`)
})

test('an exec plugin that returns a client certificate authenticates as that user', async () => {
  const user = await env().userKubeconfig('exec-user')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-exec-'))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  const counter = join(dir, 'runs')
  await writeFile(certFile, user.certPem)
  await writeFile(keyFile, user.keyPem)
  await writeFile(counter, '')
  const kubeconfig = join(dir, 'config')
  const plugin = join(import.meta.dirname, 'fixtures', 'cert-exec-plugin.mjs')
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: test',
      '  cluster:',
      `    server: ${env().server}`,
      `    certificate-authority-data: ${Buffer.from(env().caPem).toString('base64')}`,
      'users:',
      '- name: exec',
      '  user:',
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1',
      `      command: ${JSON.stringify(process.execPath)}`,
      `      args: [${JSON.stringify(plugin)}]`,
      '      interactiveMode: Never',
      '      env:',
      `      - {name: CERT_PLUGIN_CERT, value: ${JSON.stringify(certFile)}}`,
      `      - {name: CERT_PLUGIN_KEY, value: ${JSON.stringify(keyFile)}}`,
      `      - {name: CERT_PLUGIN_COUNTER, value: ${JSON.stringify(counter)}}`,
      'contexts:',
      '- name: test',
      '  context: {cluster: test, user: exec, namespace: default}',
      'current-context: test',
      '',
    ].join('\n'),
  )
  const client = new KubeClient(await loadClusterConfig({ kubeconfig, env: { PATH: process.env.PATH } }), {
    qps: -1,
  })
  defer(() => client.close())
  // The identity is exec-user with no RBAC: listing secrets is forbidden *for that user*.
  const err = await client
    .resource(CORE_TYPES.secrets, 'default')
    .list()
    .catch((e: unknown) => e)
  assert.ok(isForbidden(err), String(err))
  assert.match((err as Error).message, /User "exec-user" cannot list resource "secrets"/)
  await Promise.all(Array.from({ length: 5 }, () => client.request({ method: 'GET', path: '/version' })))
  const runs = (await readFile(counter, 'utf8')).split('\n').filter(Boolean).length
  assert.equal(runs, 1, 'one plugin run serves every request (no expiry given)')
})
