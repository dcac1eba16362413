import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  ExecCredentialProvider,
  type ExecCredentialProviderOptions,
  type ExecPluginConfig,
} from '../../src/config/exec-credentials.ts'
import type { ExecRunResult } from '../../src/config/exec-plugin-runner.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { credentialOutput, recordingRunner } from './support/helpers.ts'

const V1 = 'client.authentication.k8s.io/v1'
const V1BETA1 = 'client.authentication.k8s.io/v1beta1'

function provider(exec: Partial<ExecPluginConfig>, options: Partial<ExecCredentialProviderOptions> = {}) {
  return new ExecCredentialProvider({
    exec: { command: 'helper', apiVersion: V1, interactiveMode: 'Never', ...exec },
    user: 'edge',
    env: {},
    stdinIsTTY: false,
    ...options,
  })
}

function configError(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    assert.ok(isEdgeopError(err, 'EDGEOP_ERR_CONFIG'), String(err))
    return err.message
  }
  assert.fail('no error')
}

test('configuration is validated like client-go: command, apiVersion, interactiveMode', () => {
  assert.equal(
    configError(() => provider({ command: '' })),
    'user "edge": exec.command must be specified to use an exec plugin',
  )
  assert.equal(
    configError(() => provider({ apiVersion: '' })),
    'user "edge": exec.apiVersion must be specified to use exec plugin "helper"',
  )
  assert.equal(
    configError(() => provider({ apiVersion: 'client.authentication.k8s.io/v1alpha1' })),
    'user "edge": exec plugin "helper" uses apiVersion "client.authentication.k8s.io/v1alpha1", which is not supported (use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1)',
  )
  assert.equal(
    configError(() => provider({ interactiveMode: undefined })),
    'user "edge": interactiveMode must be specified to use exec plugin "helper" with apiVersion client.authentication.k8s.io/v1',
  )
  assert.equal(
    configError(() => provider({ interactiveMode: 'Sometimes' })),
    'user "edge": invalid interactiveMode "Sometimes" for exec plugin "helper" (use Never, IfAvailable or Always)',
  )
  assert.doesNotThrow(() => provider({ apiVersion: V1BETA1, interactiveMode: undefined }))
})

test('interactiveMode: v1beta1 defaults to IfAvailable (stdin only with a terminal); Always needs a terminal', async () => {
  const ok = () => credentialOutput(V1BETA1, { token: 't' })
  for (const tty of [false, true]) {
    const run = recordingRunner(ok)
    await provider({ apiVersion: V1BETA1, interactiveMode: undefined }, { run, stdinIsTTY: tty }).get()
    assert.equal(run.requests[0]?.interactive, tty)
    assert.equal(JSON.parse(run.requests[0]?.env.KUBERNETES_EXEC_INFO ?? '').spec.interactive, tty)
  }
  const never = recordingRunner(() => credentialOutput(V1, { token: 't' }))
  await provider({}, { run: never, stdinIsTTY: true }).get()
  assert.equal(never.requests[0]?.interactive, false)
  const always = recordingRunner(() => credentialOutput(V1, { token: 't' }))
  await assert.rejects(provider({ interactiveMode: 'Always' }, { run: always }).get(), {
    code: 'EDGEOP_ERR_EXEC_PLUGIN',
    message:
      'exec plugin "helper" (user "edge") has interactiveMode Always but standard input is not a terminal',
  })
  assert.equal(always.requests.length, 0)
  await provider({ interactiveMode: 'Always' }, { run: always, stdinIsTTY: true }).get()
  assert.equal(always.requests[0]?.interactive, true)
})

test('environment: parent env + exec env + KUBERNETES_EXEC_INFO; spec.cluster only with provideClusterInfo', async () => {
  const cluster = { server: 'https://h:6443', 'tls-server-name': 'api' }
  const run = recordingRunner(() => credentialOutput(V1, { token: 't' }))
  await provider(
    {
      args: ['a', 'b'],
      env: [
        { name: 'EXTRA', value: '1' },
        { name: 'PATH', value: '/override' },
      ],
    },
    { run, env: { PATH: '/bin', HOME: '/h', UNSET: undefined }, cluster },
  ).get()
  const request = run.requests[0]
  assert.deepEqual(request?.args, ['a', 'b'])
  assert.equal(request?.command, 'helper')
  assert.deepEqual(Object.keys(request?.env ?? {}).sort(), ['EXTRA', 'HOME', 'KUBERNETES_EXEC_INFO', 'PATH'])
  assert.equal(request?.env.PATH, '/override')
  assert.deepEqual(JSON.parse(request?.env.KUBERNETES_EXEC_INFO ?? ''), {
    apiVersion: V1,
    kind: 'ExecCredential',
    spec: { interactive: false },
  })
  const withInfo = recordingRunner(() => credentialOutput(V1, { token: 't' }))
  await provider({ provideClusterInfo: true }, { run: withInfo, cluster }).get()
  assert.deepEqual(JSON.parse(withInfo.requests[0]?.env.KUBERNETES_EXEC_INFO ?? '').spec, {
    interactive: false,
    cluster,
  })
})

test('cached until expirationTimestamp with no leeway; re-run after it', async () => {
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'))
  const run = recordingRunner((_, n) =>
    credentialOutput(V1, {
      token: `t${n}`,
      expirationTimestamp: new Date(clock.now() + 60_000).toISOString(),
    }),
  )
  const p = provider({}, { run, clock })
  assert.deepEqual(await p.get(), { token: 't1', expiresAt: Date.parse('2030-01-01T00:01:00Z') })
  await clock.advance(60_000)
  assert.equal((await p.get()).token, 't1', 'still valid at the expiration instant')
  await clock.advance(1)
  assert.equal((await p.get()).token, 't2', 'client-go re-runs once now > expiry')
  assert.equal(run.requests.length, 2)
})

test('without expirationTimestamp the credential is cached forever', async () => {
  const clock = new ManualClock()
  const run = recordingRunner(() => credentialOutput(V1, { token: 'forever' }))
  const p = provider({}, { run, clock })
  const first = await p.get()
  await clock.advance(365 * 24 * 3600_000)
  assert.equal(await p.get(), first)
  assert.equal(run.requests.length, 1)
})

test('concurrent get calls share one plugin run', async () => {
  let release: (r: ExecRunResult) => void = () => {}
  const run = recordingRunner(() => new Promise<ExecRunResult>((resolve) => (release = resolve)))
  const p = provider({}, { run })
  const waiting = Array.from({ length: 20 }, () => p.get())
  await Promise.resolve()
  assert.equal(run.requests.length, 1)
  release(credentialOutput(V1, { token: 'shared' }))
  const results = await Promise.all(waiting)
  assert.ok(results.every((r) => r === results[0] && r.token === 'shared'))
  assert.equal(run.requests.length, 1)
})

test('invalidate after a 401: drops the cache when it holds the used credential; the next get re-runs', async () => {
  const run = recordingRunner((_, n) => credentialOutput(V1, { token: `t${n}` }))
  const p = provider({}, { run })
  const first = await p.get()
  assert.equal(
    p.invalidate({ token: 'some-older-token' }),
    true,
    'a stale credential: fresh ones already differ',
  )
  assert.equal(await p.get(), first, 'the cache was kept')
  assert.equal(p.invalidate({ ...first }), true)
  assert.equal((await p.get()).token, 't2')
  assert.equal(run.requests.length, 2)
})

test('a failed run is not cached: the next get runs again', async () => {
  const run = recordingRunner((_, n) =>
    n === 1 ? { exitCode: 1, stdout: '' } : credentialOutput(V1, { token: 'ok' }),
  )
  const p = provider({}, { run })
  await assert.rejects(p.get(), {
    code: 'EDGEOP_ERR_EXEC_PLUGIN',
    message: 'exec plugin "helper" (user "edge") exited with code 1; its stderr is shown above',
    retryable: true,
  })
  assert.equal((await p.get()).token, 'ok')
  const killed = recordingRunner(() => ({ exitCode: null, signal: 'SIGKILL', stdout: '' }))
  await assert.rejects(provider({}, { run: killed }).get(), {
    message: 'exec plugin "helper" (user "edge") was killed by signal SIGKILL; its stderr is shown above',
  })
})

test('command not found: the error carries the installHint', async () => {
  const run = recordingRunner(() =>
    Promise.reject(Object.assign(new Error('spawn helper ENOENT'), { code: 'ENOENT' })),
  )
  await assert.rejects(provider({ installHint: 'Install helper:\n  brew install helper' }, { run }).get(), {
    code: 'EDGEOP_ERR_EXEC_PLUGIN',
    message:
      'exec plugin "helper" (user "edge"): executable not found\n\nInstall helper:\n  brew install helper',
    retryable: false,
  })
  const eacces = recordingRunner(() =>
    Promise.reject(Object.assign(new Error('spawn EACCES'), { code: 'EACCES' })),
  )
  await assert.rejects(provider({}, { run: eacces }).get(), {
    message: 'exec plugin "helper" (user "edge") could not be started (EACCES)',
  })
})

test('plugin output is validated: kind, apiVersion, status, token or certificate pair, expiration', async () => {
  const cases: [unknown, string][] = [
    ['not json', 'printed output that is not a JSON ExecCredential'],
    [
      { apiVersion: V1BETA1, kind: 'ExecCredential', status: { token: 't' } },
      'returned an object that is not an ExecCredential of apiVersion client.authentication.k8s.io/v1',
    ],
    [
      { apiVersion: V1, kind: 'Other', status: { token: 't' } },
      'returned an object that is not an ExecCredential of apiVersion client.authentication.k8s.io/v1',
    ],
    [{ apiVersion: V1, kind: 'ExecCredential' }, 'returned an ExecCredential without status'],
    [
      { apiVersion: V1, kind: 'ExecCredential', status: {} },
      'returned neither a token nor a client certificate and key',
    ],
    [
      { apiVersion: V1, kind: 'ExecCredential', status: { clientKeyData: 'k' } },
      'returned only one of clientCertificateData and clientKeyData',
    ],
    [
      { apiVersion: V1, kind: 'ExecCredential', status: { token: 't', expirationTimestamp: 'tomorrow' } },
      'returned an expirationTimestamp that is not an RFC 3339 time',
    ],
  ]
  for (const [output, message] of cases) {
    const stdout = typeof output === 'string' ? output : JSON.stringify(output)
    await assert.rejects(provider({}, { run: async () => ({ exitCode: 0, stdout }) }).get(), {
      code: 'EDGEOP_ERR_EXEC_PLUGIN',
      message: `exec plugin "helper" (user "edge") ${message}`,
    })
  }
  const certs = provider(
    {},
    { run: async () => credentialOutput(V1, { clientCertificateData: 'C', clientKeyData: 'K' }) },
  )
  assert.deepEqual(await certs.get(), { clientCertificate: 'C', clientKey: 'K' })
})

test('an aborted wait rejects for that caller only; the shared run goes on', async () => {
  let release: (r: ExecRunResult) => void = () => {}
  const run = recordingRunner(() => new Promise<ExecRunResult>((resolve) => (release = resolve)))
  const p = provider({}, { run })
  const controller = new AbortController()
  const aborted = p.get(controller.signal)
  const patient = p.get()
  controller.abort()
  await assert.rejects(aborted, {
    code: 'EDGEOP_ERR_ABORTED',
    message: 'exec plugin "helper": aborted while waiting for credentials',
  })
  release(credentialOutput(V1, { token: 'late' }))
  assert.equal((await patient).token, 'late')
  await assert.rejects(p.get(AbortSignal.abort()), { code: 'EDGEOP_ERR_ABORTED' })
  assert.equal(run.requests.length, 1)
})
