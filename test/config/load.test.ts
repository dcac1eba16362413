import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { loadClusterConfig } from '../../src/config/load.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-load-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

/** Writes a one-context kubeconfig whose server is `https://<name>.example.org` and returns its path. */
function kubeconfig(file: string, name: string, namespace?: string): string {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(
    file,
    `clusters:\n- name: ${name}\n  cluster: {server: "https://${name}.example.org"}\n` +
      `contexts:\n- name: ${name}\n  context: {cluster: ${name}${namespace ? `, namespace: ${namespace}` : ''}}\n` +
      `- name: ${name}-alt\n  context: {cluster: ${name}, namespace: alt}\ncurrent-context: ${name}\n`,
  )
  return file
}

const home = path.join(tmp, 'home')
kubeconfig(path.join(home, '.kube', 'config'), 'home')
const explicit = kubeconfig(path.join(tmp, 'explicit.yaml'), 'explicit')
const fromEnvA = kubeconfig(path.join(tmp, 'env-a.yaml'), 'env-a', 'ns-a')
const fromEnvB = kubeconfig(path.join(tmp, 'env-b.yaml'), 'env-b')
const sa = path.join(tmp, 'sa')
mkdirSync(sa)
writeFileSync(path.join(sa, 'token'), 'sa-token')
writeFileSync(path.join(sa, 'namespace'), 'pod-ns')
const inCluster = {
  tokenFile: path.join(sa, 'token'),
  caFile: path.join(sa, 'ca.crt'),
  namespaceFile: path.join(sa, 'namespace'),
}
const CLUSTER_ENV = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }

test('1. an explicit kubeconfig wins over KUBECONFIG, in-cluster and home', async () => {
  const config = await loadClusterConfig({
    kubeconfig: explicit,
    env: { ...CLUSTER_ENV, KUBECONFIG: fromEnvA },
    homeDir: home,
    inCluster,
  })
  assert.equal(config.server, 'https://explicit.example.org')
  await assert.rejects(
    loadClusterConfig({ kubeconfig: path.join(tmp, 'nope.yaml'), env: { KUBECONFIG: fromEnvA } }),
    {
      message: `kubeconfig ${path.join(tmp, 'nope.yaml')} does not exist`,
    },
  )
})

test('2. KUBECONFIG (a list; missing entries skipped) wins over in-cluster and home', async () => {
  const list = [path.join(tmp, 'missing.yaml'), fromEnvA, '', fromEnvB].join(path.delimiter)
  const config = await loadClusterConfig({
    env: { ...CLUSTER_ENV, KUBECONFIG: list },
    homeDir: home,
    inCluster,
  })
  assert.equal(config.server, 'https://env-a.example.org')
  assert.equal(config.namespace, 'ns-a')
  const other = await loadClusterConfig({ env: { KUBECONFIG: list }, context: 'env-b', homeDir: home })
  assert.equal(other.server, 'https://env-b.example.org', 'a context from the second file')
  const none = [path.join(tmp, 'x.yaml'), path.join(tmp, 'y.yaml')]
  await assert.rejects(loadClusterConfig({ env: { KUBECONFIG: none.join(path.delimiter) }, homeDir: home }), {
    code: 'EDGEOP_ERR_CONFIG',
    message: `none of the kubeconfig files exist: ${none.join(', ')}`,
  })
})

test('3. in-cluster when KUBECONFIG is unset and the service variables are set', async () => {
  const config = await loadClusterConfig({ env: CLUSTER_ENV, homeDir: home, inCluster })
  assert.equal(config.source, 'in-cluster')
  assert.equal(config.server, 'https://10.96.0.1:443')
  assert.equal(config.namespace, 'pod-ns')
  assert.deepEqual(await config.credentials?.get(), { token: 'sa-token' })
})

test('3b. when in-cluster fails, ~/.kube/config is used if it exists (logged), else the in-cluster error is thrown', async () => {
  const broken = { ...inCluster, tokenFile: path.join(sa, 'absent') }
  const logger = recordingLogger()
  const config = await loadClusterConfig({ env: CLUSTER_ENV, homeDir: home, inCluster: broken, logger })
  assert.equal(config.server, 'https://home.example.org')
  assert.equal(logger.lines[0]?.msg, 'in-cluster config failed; using the home kubeconfig')
  await assert.rejects(
    loadClusterConfig({ env: CLUSTER_ENV, homeDir: path.join(tmp, 'nohome'), inCluster: broken }),
    {
      message: `in-cluster config: cannot read token file ${path.join(sa, 'absent')}: ENOENT`,
    },
  )
})

test('4. ~/.kube/config last; HOME from the environment unless homeDir is given', async () => {
  const config = await loadClusterConfig({ env: { HOME: home } })
  assert.equal(config.server, 'https://home.example.org')
  assert.equal(config.source, `kubeconfig ${path.join(home, '.kube', 'config')} (context "home")`)
  const alt = await loadClusterConfig({ env: {}, homeDir: home, context: 'home-alt', namespace: 'override' })
  assert.equal(alt.contextName, 'home-alt')
  assert.equal(alt.namespace, 'override', 'the namespace option overrides the context')
})

test('5. nothing found: one error that says what was tried', async () => {
  const nohome = path.join(tmp, 'nohome')
  await assert.rejects(loadClusterConfig({ env: {}, homeDir: nohome }), {
    code: 'EDGEOP_ERR_CONFIG',
    message:
      'no cluster configuration found: no kubeconfig option, KUBECONFIG is not set, not running in a cluster ' +
      `(KUBERNETES_SERVICE_HOST/PORT are not set), and ${path.join(nohome, '.kube', 'config')} does not exist`,
  })
})

test('the namespace option also overrides the in-cluster namespace', async () => {
  const config = await loadClusterConfig({ env: CLUSTER_ENV, inCluster, namespace: 'mine' })
  assert.equal(config.namespace, 'mine')
})

test('D4: loadClusterConfig reads files through the bounded reader: /dev/zero as kubeconfig, CA or token file is refused naming it and the cap', async () => {
  const refused = (options: Parameters<typeof loadClusterConfig>[0]) =>
    loadClusterConfig({ env: {}, homeDir: tmp, ...options }).then(
      () => assert.fail('expected a refusal'),
      (e: { code: string; message: string }) => ({ code: e.code, message: e.message }),
    )
  assert.deepEqual(await refused({ kubeconfig: '/dev/zero' }), {
    code: 'EDGEOP_ERR_CONFIG',
    message:
      'kubeconfig /dev/zero is larger than the 8 MiB edgeop reads; a kubeconfig is normally a few KiB: is this the right file?',
  })
  const files = path.join(tmp, 'dev-zero-files.yaml')
  writeFileSync(
    files,
    'clusters:\n- name: c\n  cluster: {server: "https://c.example.org", certificate-authority: /dev/zero}\n' +
      '- name: t\n  cluster: {server: "https://t.example.org"}\n' +
      'users:\n- name: u\n  user: {tokenFile: /dev/zero}\n' +
      'contexts:\n- name: ca\n  context: {cluster: c}\n- name: token\n  context: {cluster: t, user: u}\n',
  )
  assert.deepEqual(await refused({ kubeconfig: files, context: 'ca' }), {
    code: 'EDGEOP_ERR_CONFIG',
    message:
      'certificate-authority /dev/zero is larger than the 8 MiB edgeop reads (cluster "c" (context "ca"))',
  })
  assert.deepEqual(await refused({ kubeconfig: files, context: 'token' }), {
    code: 'EDGEOP_ERR_CONFIG',
    message: `user "u" (kubeconfig ${files}, context "token"): token file /dev/zero is larger than the 1 MiB edgeop reads`,
  })
  assert.deepEqual(
    await refused({
      env: CLUSTER_ENV,
      homeDir: path.join(tmp, 'nowhere'),
      inCluster: { ...inCluster, tokenFile: '/dev/zero' },
    }),
    {
      code: 'EDGEOP_ERR_CONFIG',
      message: 'in-cluster config: token file /dev/zero is larger than the 1 MiB edgeop reads',
    },
  )
})
