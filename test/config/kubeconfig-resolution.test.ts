/**
 * Kubeconfig resolution rules: relative paths, merging several files, server URL defaults,
 * string coercion as client-go does it, and errors for files that cannot be read.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { buildClusterConfig, loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { type ResolvedContext, resolveContext } from '../../src/config/kubeconfig-context.ts'
import { mergeKubeconfigs, parseKubeconfig, readKubeconfigFiles } from '../../src/config/kubeconfig-files.ts'
import { TokenFileProvider } from '../../src/config/token-file.ts'
import { fixture, memoryFiles } from './support/helpers.ts'

const CERT_PEM =
  '-----BEGIN CERTIFICATE-----\nEDGEOP TEST CLIENT CERT - NOT REAL\n-----END CERTIFICATE-----\n'

async function resolve(files: string[], context?: string): Promise<ResolvedContext> {
  return resolveContext(mergeKubeconfigs(await readKubeconfigFiles(files)), context)
}

function valid(name: string): string {
  return fixture('valid', name)
}

test('relative paths: CA, tokenFile and an exec command with a separator resolve against the kubeconfig directory', async () => {
  const file = fixture('valid', 'nested', 'relative-paths.yaml')
  const dir = path.dirname(file)
  const config = await loadKubeconfig({ paths: [file] })
  assert.equal(
    config.tls.ca,
    '-----BEGIN CERTIFICATE-----\nRELATIVE CA FOR TESTS\n-----END CERTIFICATE-----\n',
  )
  assert.ok(config.credentials instanceof TokenFileProvider)
  assert.deepEqual(await config.credentials.get(), { token: 'relative-token-value' })
  const r = await resolve([file], 'rel-exec')
  assert.equal(r.auth.kind === 'exec' && r.auth.exec.command, path.join(dir, '../bin/helper.sh'))
  const plain = parseKubeconfig('users:\n- name: u\n  user:\n    exec: {command: aws}\n', '/x/config')
  assert.equal(
    plain.users[0]?.value.exec?.command,
    'aws',
    'a bare command is looked up in PATH, not resolved',
  )
})

test('merging: the first file to define a name wins, the first non-empty current-context wins', async () => {
  const first = valid('merge-first.yaml')
  const second = valid('merge-second.yaml')
  const r = await resolve([first, second])
  assert.equal(r.contextName, 'second-only', 'first file has current-context ""')
  assert.equal(r.contextFile, second)
  assert.equal(r.server, 'https://first.example.org', 'cluster "shared" comes from the first file')
  assert.deepEqual(r.auth, { kind: 'basic', username: 'second-user', password: 'second-password' })
  const shared = await resolve([first, second], 'shared')
  assert.equal(shared.namespace, 'from-first', 'context "shared" comes from the first file, whole')
  assert.deepEqual(shared.auth, { kind: 'token', token: 'first-token' })
  const reversed = await resolve([second, first], 'shared')
  assert.equal(reversed.server, 'https://second-only.example.org')
  assert.equal(reversed.namespace, undefined)
  const missing = path.join(path.dirname(first), 'does-not-exist.yaml')
  const withMissing = await readKubeconfigFiles([missing, '', first, first], { missingOk: true })
  assert.deepEqual(
    withMissing.map((f) => f.file),
    [first],
    'missing, empty and repeated entries are skipped',
  )
})

test('a server without a scheme gets https when TLS is configured, http otherwise (client-go DefaultServerURL)', () => {
  const text = (server: string, extra = '') =>
    `clusters:\n- name: c\n  cluster:\n    server: ${server}\n${extra}contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n`
  const resolveText = (t: string) => resolveContext(mergeKubeconfigs([parseKubeconfig(t, '/k/config')]))
  assert.equal(resolveText(text('10.0.0.1:6443')).server, 'http://10.0.0.1:6443')
  assert.equal(
    resolveText(text('10.0.0.1:6443', '    insecure-skip-tls-verify: true\n')).server,
    'https://10.0.0.1:6443',
  )
  assert.equal(
    resolveText(text('"[fd00::1]:6443"', '    tls-server-name: api\n')).server,
    'https://[fd00::1]:6443',
  )
  assert.equal(resolveText(text('https://h:1/base///')).server, 'https://h:1/base')
})

test('string fields take numbers and booleans as client-go does (sigs.k8s.io/yaml formats them)', () => {
  const t = `clusters:\n- name: 2024\n  cluster: {server: https://h}\ncontexts:\n- name: yes\n  context: {cluster: 2024, namespace: 017, user: off}\nusers:\n- name: false\n  user: {token: 12345}\ncurrent-context: on\n`
  const r = resolveContext(mergeKubeconfigs([parseKubeconfig(t, '/k/config')]))
  assert.equal(r.contextName, 'true')
  assert.equal(r.clusterName, '2024')
  assert.equal(r.namespace, '15', 'YAML 1.1 octal, as go-yaml v2 reads it')
  assert.deepEqual(r.auth, { kind: 'token', token: '12345' })
})

test('buildClusterConfig names the file it cannot read, and the context', async () => {
  const r = await resolve([valid('kubectl-written.yaml')])
  await assert.rejects(buildClusterConfig(r, { readFile: memoryFiles({}) }), {
    code: 'EDGEOP_ERR_CONFIG',
    message: `cannot read certificate-authority ${r.caFile} of cluster "edge-prod" (context "prod-telemetry"): ENOENT`,
  })
  const noKey = { ...r, caFile: undefined, certFile: undefined, certData: CERT_PEM }
  await assert.rejects(buildClusterConfig(noKey, { readFile: memoryFiles({}) }), {
    message: `cannot read client-key ${r.keyFile} of user "operator" (context "prod-telemetry"): ENOENT`,
  })
})

test('an explicit kubeconfig that does not exist, or a list where none exists, is an error naming the paths', async () => {
  await assert.rejects(loadKubeconfig({ paths: ['/nonexistent/edgeop/config'] }), {
    code: 'EDGEOP_ERR_CONFIG',
    message: 'kubeconfig /nonexistent/edgeop/config does not exist',
  })
  await assert.rejects(loadKubeconfig({ paths: ['/nonexistent/a', '/nonexistent/b'], missingOk: true }), {
    message: 'none of the kubeconfig files exist: /nonexistent/a, /nonexistent/b',
  })
  await assert.rejects(loadKubeconfig({ paths: [fixture('valid')] }), {
    message: `cannot read kubeconfig ${fixture('valid')}: EISDIR`,
  })
})
