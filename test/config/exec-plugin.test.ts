/**
 * The exec provider against a real process: test/config/fixtures/fake-exec-plugin.mjs, run by `node`,
 * counts its invocations in a temp file and can emit expiring tokens, certificates or failures.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { ExecCredentialProvider, type ExecPluginConfig } from '../../src/config/exec-credentials.ts'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { fixture } from './support/helpers.ts'

const V1 = 'client.authentication.k8s.io/v1'
const PLUGIN = fixture('fake-exec-plugin.mjs')
const SOURCE = path.resolve(import.meta.dirname, '../../src/config/exec-credentials.ts')
const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-exec-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

/** A provider that really spawns the fake plugin with `node`. */
function realPlugin(
  env: Record<string, string>,
  exec: Partial<ExecPluginConfig> = {},
  clock = new ManualClock(),
) {
  return new ExecCredentialProvider({
    exec: { command: process.execPath, args: [PLUGIN], apiVersion: V1, interactiveMode: 'Never', ...exec },
    user: 'real',
    env: { PATH: process.env.PATH, ...env },
    clock,
  })
}

test('real plugin: concurrent calls run it once; expiring tokens re-run it', async () => {
  const counter = path.join(tmp, 'count-concurrent')
  const clock = new ManualClock(Date.parse('2031-05-01T12:00:00Z'))
  const p = realPlugin(
    { FAKE_PLUGIN_COUNTER: counter, FAKE_PLUGIN_EXPIRES: '2031-05-01T12:05:00Z' },
    {},
    clock,
  )
  const results = await Promise.all(Array.from({ length: 10 }, () => p.get()))
  assert.ok(results.every((r) => r.token === 'fake-token-1'))
  assert.equal(readFileSync(counter, 'utf8').trim().split('\n').length, 1)
  assert.equal(results[0]?.expiresAt, Date.parse('2031-05-01T12:05:00Z'))
  await clock.advance(4 * 60_000)
  assert.equal((await p.get()).token, 'fake-token-1')
  await clock.advance(60_001)
  assert.equal((await p.get()).token, 'fake-token-2')
  assert.equal(readFileSync(counter, 'utf8').trim().split('\n').length, 2)
  assert.equal(p.invalidate({ token: 'fake-token-2' }), true)
  assert.equal((await p.get()).token, 'fake-token-3', 'a 401 re-runs the plugin')
})

test('real plugin: receives args, env and KUBERNETES_EXEC_INFO; returns a certificate pair', async () => {
  const infoFile = path.join(tmp, 'info.json')
  const p = realPlugin(
    { FAKE_PLUGIN_INFO: infoFile, FAKE_PLUGIN_MODE: 'cert' },
    { args: [PLUGIN, '--flag', 'value'], env: [{ name: 'FAKE_PLUGIN_EXTRA', value: 'from-kubeconfig' }] },
  )
  assert.deepEqual(await p.get(), { clientCertificate: 'CERT-1', clientKey: 'PLUGIN-KEY-SECRET-1' })
  const { stdin: _, ...seen } = JSON.parse(readFileSync(infoFile, 'utf8'))
  assert.deepEqual(seen, {
    info: { apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false } },
    args: ['--flag', 'value'],
    extra: 'from-kubeconfig',
  })
})

test('real plugin: non-zero exit reports the code, never the output', async () => {
  const err = await realPlugin({ FAKE_PLUGIN_MODE: 'exit3' })
    .get()
    .then(
      () => assert.fail('resolved'),
      (e: Error) => e,
    )
  assert.equal(
    err.message,
    `exec plugin "${process.execPath}" (user "real") exited with code 3; its stderr is shown above`,
  )
  assert.ok(!JSON.stringify({ m: err.message, s: String(err), c: err.cause }).includes('fake-token'))
  await assert.rejects(realPlugin({ FAKE_PLUGIN_MODE: 'wrong-version' }).get(), {
    message: /is not an ExecCredential of apiVersion/,
  })
  await assert.rejects(realPlugin({ FAKE_PLUGIN_MODE: 'garbage' }).get(), {
    message: /printed output that is not a JSON ExecCredential$/,
  })
})

test('real plugin: its stderr passes through to ours', () => {
  const script = [
    `import { ExecCredentialProvider } from ${JSON.stringify(SOURCE)}`,
    'const p = new ExecCredentialProvider({',
    `  exec: { command: process.execPath, args: [${JSON.stringify(PLUGIN)}], apiVersion: '${V1}', interactiveMode: 'Never' },`,
    "  user: 'child', env: { FAKE_PLUGIN_MODE: 'exit3' },",
    '})',
    'await p.get().catch((e) => process.stdout.write(e.message))',
  ].join('\n')
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.equal(child.stderr, 'fake-exec-plugin: failing on purpose\n')
  assert.match(child.stdout, /exited with code 3/)
})

test('real plugin: stdin is inherited only when interactive', {
  skip: !existsSync('/proc/self/fd/0') && 'needs /proc to see what stdin the plugin got',
}, () => {
  const run = (mode: string, tty: boolean): string => {
    const info = path.join(tmp, `stdin-${mode}.json`)
    const script = [
      `import { ExecCredentialProvider } from ${JSON.stringify(SOURCE)}`,
      'const p = new ExecCredentialProvider({',
      `  exec: { command: process.execPath, args: [${JSON.stringify(PLUGIN)}], apiVersion: '${V1}', interactiveMode: '${mode}' },`,
      `  user: 'child', env: { FAKE_PLUGIN_INFO: ${JSON.stringify(info)} }, stdinIsTTY: ${tty},`,
      '})',
      'await p.get()',
    ].join('\n')
    // The child's own stdin is a pipe; an interactive plugin inherits it, another gets /dev/null.
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      input: '',
      encoding: 'utf8',
    })
    assert.equal(child.status, 0, child.stderr)
    return JSON.parse(readFileSync(info, 'utf8')).stdin
  }
  assert.equal(run('Never', true), '/dev/null')
  assert.equal(run('IfAvailable', false), '/dev/null')
  assert.match(run('Always', true), /^(pipe|socket):/, 'our own stdin (a pipe or socket pair), inherited')
})

test('real plugin: a missing executable reports the installHint', async () => {
  const p = new ExecCredentialProvider({
    exec: {
      command: path.join(tmp, 'no-such-plugin'),
      apiVersion: V1,
      interactiveMode: 'Never',
      installHint: 'get it from example.org',
    },
    user: 'real',
    env: {},
  })
  await assert.rejects(p.get(), {
    message: `exec plugin "${path.join(tmp, 'no-such-plugin')}" (user "real"): executable not found\n\nget it from example.org`,
  })
})

test('real plugin: a relative command with a separator runs from the kubeconfig directory', async () => {
  const dir = path.join(tmp, 'kube')
  mkdirSync(path.join(dir, 'bin'), { recursive: true })
  const helper = path.join(dir, 'bin', 'helper.sh')
  writeFileSync(helper, `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN}" "$@"\n`)
  chmodSync(helper, 0o755)
  const config = path.join(dir, 'config')
  writeFileSync(
    config,
    [
      'clusters: [{name: c, cluster: {server: "https://c.example.org"}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      'users:',
      '- name: u',
      '  user:',
      '    exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: ./bin/helper.sh}',
      '',
    ].join('\n'),
  )
  const loaded = await loadKubeconfig({ paths: [config], env: { PATH: '/nonexistent' } })
  assert.equal(loaded.credentials?.describe, `exec plugin "${helper}"`)
  assert.deepEqual(await loaded.credentials?.get(), { token: 'fake-token-1' })
})
