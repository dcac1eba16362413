/**
 * The real-world kubeconfig corpus in fixtures/corpus (25 valid + 9 malformed files, each
 * with its source in fixtures/corpus/INDEX.md). support/corpus-expectations.ts transcribes
 * what INDEX.md says client-go resolves for each file. The corpus is part of the
 * repository, so nothing here is ever skipped.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { buildClusterConfig } from '../../src/config/kubeconfig.ts'
import { type ResolvedContext, resolveContext } from '../../src/config/kubeconfig-context.ts'
import { mergeKubeconfigs, readKubeconfigFiles } from '../../src/config/kubeconfig-files.ts'
import { type Auth, LOAD_ERRORS, RESOLVES } from './support/corpus-expectations.ts'

const CORPUS = path.join(import.meta.dirname, 'fixtures/corpus')

function authOf(r: ResolvedContext): Auth {
  const a = r.auth
  if (a.kind === 'exec') {
    const e = a.exec
    return {
      kind: 'exec',
      command: e.command,
      args: e.args,
      apiVersion: e.apiVersion,
      ...(e.interactiveMode ? { interactiveMode: e.interactiveMode } : {}),
      ...(e.env.length ? { env: e.env.map((v): [string, string] => [v.name, v.value]) } : {}),
    }
  }
  if (a.kind === 'token-file') return { kind: 'token-file', path: a.path }
  if (a.kind !== 'none') return a
  if (r.certFile && r.keyFile) return { kind: 'cert-files', cert: r.certFile, key: r.keyFile }
  if (r.certData && r.keyData) return { kind: 'cert-data' }
  return { kind: 'none' }
}

async function resolveFile(file: string, context?: string): Promise<ResolvedContext> {
  return resolveContext(mergeKubeconfigs(await readKubeconfigFiles([file])), context)
}

test('the corpus has the 34 files INDEX.md lists, each with an expectation here', () => {
  const files = readdirSync(CORPUS).filter((f) => f.endsWith('.yaml'))
  assert.equal(files.length, 34)
  const covered = new Set([...Object.keys(RESOLVES).map((k) => k.split('#')[0]), ...Object.keys(LOAD_ERRORS)])
  assert.deepEqual([...covered].sort(), files.sort())
})

for (const [key, expect] of Object.entries(RESOLVES)) {
  test(`corpus resolves: ${key}`, async () => {
    const file = path.join(CORPUS, key.split('#')[0] as string)
    const e = expect(file, CORPUS)
    const r = await resolveFile(file, e.context)
    assert.equal(r.server, e.server)
    assert.deepEqual(authOf(r), e.auth)
    assert.equal(r.namespace, e.namespace)
    assert.equal(r.insecureSkipVerify, e.insecure ?? false)
    assert.equal(r.caFile, e.caFile)
    if (e.caData === undefined) assert.equal(r.caData, undefined)
    else assert.ok(r.caData?.startsWith(e.caData), `CA data starts with ${JSON.stringify(e.caData)}`)
    assert.equal(r.tlsServerName, e.tlsServerName)
    assert.equal(r.proxyUrl, e.proxyUrl)
    // Building the client: referenced files are faked, exec plugins must not run.
    const build = buildClusterConfig(r, {
      readFile: async () => '-----BEGIN CERTIFICATE-----\nFAKE\n-----END CERTIFICATE-----\n',
      env: {},
      execRunner: () => assert.fail('no plugin runs while building'),
    })
    if (e.buildError) await assert.rejects(build, { code: 'EDGEOP_ERR_CONFIG', message: e.buildError })
    else {
      const config = await build
      assert.equal(config.server, e.server)
      assert.equal(config.namespace, e.namespace ?? 'default')
      assert.equal(config.credentials === undefined, e.auth.kind === 'none' || e.auth.kind.startsWith('cert'))
    }
  })
}

for (const [name, message] of Object.entries(LOAD_ERRORS)) {
  test(`corpus refuses: ${name}`, async () => {
    const file = path.join(CORPUS, name)
    await assert.rejects(resolveFile(file), { message: message(file) })
  })
}

test('corpus: gcloud installHint is one line folded at the line break', async () => {
  const file = path.join(CORPUS, 'gke-gcloud-auth-plugin-users-only.yaml')
  const [parsed] = await readKubeconfigFiles([file])
  const exec = parsed?.users.find((u) => u.name === 'redacted_cluster_name')?.value.exec
  assert.equal(exec?.command, 'gke-gcloud-auth-plugin')
  assert.equal(exec?.provideClusterInfo, true)
  assert.equal(
    exec?.installHint,
    'Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin',
  )
  assert.match(await readFile(file, 'utf8'), /following\n {8}https/, 'the file really folds the line')
})

test('corpus: every certificate and key in it is a fake or a placeholder, never a real one', () => {
  const placeholders = /^(definitelyacert|seemslegit|yep)$/
  let checked = 0
  for (const name of readdirSync(CORPUS).filter((f) => f.endsWith('.yaml'))) {
    const text = readFileSync(path.join(CORPUS, name), 'utf8')
    for (const m of text.matchAll(/(certificate-authority|client-certificate|client-key)-data:\s*(\S+)/g)) {
      const value = m[2]!
      const decoded = Buffer.from(value, 'base64').toString('utf8')
      // A fake PEM (INDEX.md: "FAKE CERT FOR TESTING ONLY", "FAKE KEY"), or a word-shaped placeholder.
      const fake = /^-----BEGIN [A-Z ]+-----\nFAKE /.test(decoded) || /^[A-Z0-9_]+$/.test(decoded)
      assert.ok(
        fake || placeholders.test(value),
        `${name}: ${m[1]}-data is neither a fake PEM nor a placeholder`,
      )
      checked++
    }
  }
  assert.ok(checked >= 40, `checked ${checked} data fields`)
})
