/**
 * No token, password, key, exec argument, exec env value or exec-plugin output may appear
 * in an error (message, String(), stack, own enumerable props, cause chain) or a log line.
 * Every secret-bearing field gets a distinctive value and at least one error it must not leak into.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { ExecCredentialProvider } from '../../src/config/exec-credentials.ts'
import type { ExecRunResult } from '../../src/config/exec-plugin-runner.ts'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import { parseKubeconfig } from '../../src/config/kubeconfig-files.ts'
import { TokenFileProvider } from '../../src/config/token-file.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { recordingLogger } from '../support/recording-logger.ts'
import { errorTexts } from './support/helpers.ts'

const S = {
  token: 'TOKEN-8d1f-secret',
  password: 'PASSWORD-4b2a-secret',
  keyData: 'S0VZREFUQS1zZWNyZXQ', // "KEYDATA-secret" without padding: invalid base64
  keyFile: 'KEYFILE-91c3-secret',
  certData: 'CERTDATA-secret-9d9d', // '-' is not base64
  arg: 'ARG-client-secret-77aa',
  env: 'ENV-value-secret-5e5e',
  stdout: 'STDOUT-token-secret-0f0f',
  stdoutKey: 'STDOUT-key-secret-a1a1',
  idToken: 'IDTOKEN-oidc-secret-c3c3',
  tokenFile: 'TOKENFILE-secret-b2b2',
}
const ALL = Object.values(S)
const tmp = mkdtempSync(path.join(tmpdir(), 'edgeop-secrets-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

function assertClean(err: unknown, label: string): void {
  assert.ok(isEdgeopError(err), `${label}: expected an edgeop error, got ${String(err)}`)
  for (const text of errorTexts(err)) {
    for (const secret of ALL) assert.ok(!text.includes(secret), `${label}: leaked ${secret} in ${text}`)
  }
}

async function failure(label: string, run: () => unknown): Promise<void> {
  let caught: unknown
  try {
    await run()
  } catch (err) {
    caught = err
  }
  assert.ok(caught !== undefined, `${label}: no error`)
  assertClean(caught, label)
}

const CLUSTER = 'clusters:\n- name: c\n  cluster: {server: "https://c.example.org"}\n'
const CONTEXT = 'contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n'

/** Writes a kubeconfig whose user section is `user` and loads it. */
async function loadUser(name: string, user: string, extra: Record<string, string> = {}): Promise<unknown> {
  const file = path.join(tmp, `${name}.yaml`)
  writeFileSync(file, `${CLUSTER}${CONTEXT}users:\n- name: u\n  user:\n${user}`)
  for (const [f, content] of Object.entries(extra)) writeFileSync(path.join(tmp, f), content)
  return loadKubeconfig({ paths: [file], env: { PATH: '/nonexistent' } })
}

test('token: YAML, type, duplicate and validation errors do not quote it', async () => {
  await failure('unterminated quote', () => loadUser('t1', `    token: "${S.token}\n`))
  await failure('bad escape', () => loadUser('t2', `    token: "${S.token}\\q"\n`))
  await failure('wrong type', () => loadUser('t3', `    token: [${S.token}]\n`))
  await failure('conflicting duplicate', () =>
    loadUser('t4', `    token: ${S.token}\n    token: ${S.token}-2\n`),
  )
  await failure('continued by a key', () => loadUser('t5', `    token: ${S.token}\n      extra: 1\n`))
  await failure('token and basic', () =>
    loadUser('t6', `    token: ${S.token}\n    username: u\n    password: ${S.password}\n`),
  )
  await failure('tag on token', () => loadUser('t7', `    token: !secret ${S.token}\n`))
  await failure('token in a key position', () => loadUser('t8', `    ${S.token}\n`))
})

test('password: validation and YAML errors do not quote it', async () => {
  await failure('password without username', () => loadUser('p1', `    password: ${S.password}\n`))
  await failure('password in a bad flow', () => loadUser('p2', `    password: [${S.password}\n`))
  await failure('password wrong type', () =>
    loadUser('p3', `    username: u\n    password: {p: ${S.password}}\n`),
  )
})

test('client key and certificate data: invalid base64 and pairing errors do not quote them', async () => {
  await failure('invalid key data', () =>
    loadUser('k1', `    client-certificate-data: LS0t\n    client-key-data: ${S.keyData}\n`),
  )
  await failure('invalid cert data', () =>
    loadUser('k2', `    client-certificate-data: ${S.certData}\n    client-key-data: LS0t\n`),
  )
  await failure('key without cert', () => loadUser('k3', '    client-key-data: S0VZ\n'))
  await failure('key file and data', () =>
    loadUser(
      'k4',
      `    client-certificate-data: LS0t\n    client-key: k.pem\n    client-key-data: ${S.keyData}==\n`,
    ),
  )
})

test('client key file: its content never appears when a sibling file cannot be read', async () => {
  await failure('cert file missing', () =>
    loadUser('f1', '    client-certificate: missing-cert.pem\n    client-key: key.pem\n', {
      'key.pem': S.keyFile,
    }),
  )
  await failure('key file is a directory', () =>
    loadUser('f2', `    client-certificate-data: LS0t\n    client-key: ${tmp}\n`),
  )
})

test('exec arguments and env values: configuration and run errors do not quote them', async () => {
  const exec = (extra: string) =>
    `    exec:\n      command: helper\n      args: [--client-secret, ${S.arg}]\n      env: [{name: AZ, value: ${S.env}}]\n${extra}`
  await failure('v1 without interactiveMode', () =>
    loadUser('e1', exec('      apiVersion: client.authentication.k8s.io/v1\n')),
  )
  await failure('unsupported apiVersion', () =>
    loadUser('e2', exec('      apiVersion: client.authentication.k8s.io/v1alpha1\n')),
  )
  await failure('not found (real spawn)', async () => {
    const config = (await loadUser(
      'e3',
      exec('      apiVersion: client.authentication.k8s.io/v1beta1\n'),
    )) as {
      credentials: { get(): Promise<unknown> }
    }
    await config.credentials.get()
  })
  await failure('env entry without a name', () =>
    loadUser(
      'e4',
      `    exec:\n      command: helper\n      apiVersion: client.authentication.k8s.io/v1beta1\n      env: [{value: ${S.env}}]\n`,
    ),
  )
})

test('exec plugin output: never in an error, whatever is wrong with it', async () => {
  const outputs: [string, ExecRunResult][] = [
    ['non-zero exit', { exitCode: 2, stdout: JSON.stringify({ status: { token: S.stdout } }) }],
    ['not JSON', { exitCode: 0, stdout: `garbage ${S.stdout}` }],
    [
      'wrong apiVersion',
      {
        exitCode: 0,
        stdout: JSON.stringify({ apiVersion: 'x', kind: 'ExecCredential', status: { token: S.stdout } }),
      },
    ],
    [
      'wrong kind',
      {
        exitCode: 0,
        stdout: JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: S.stdout, status: {} }),
      },
    ],
    [
      'key without certificate',
      {
        exitCode: 0,
        stdout: JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: { clientKeyData: S.stdoutKey },
        }),
      },
    ],
    [
      'bad expiration',
      {
        exitCode: 0,
        stdout: JSON.stringify({
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: { token: S.stdout, expirationTimestamp: S.stdout },
        }),
      },
    ],
  ]
  for (const [label, result] of outputs) {
    const p = new ExecCredentialProvider({
      exec: {
        command: 'helper',
        args: [S.arg],
        env: [{ name: 'E', value: S.env }],
        apiVersion: 'client.authentication.k8s.io/v1',
        interactiveMode: 'Never',
      },
      user: 'u',
      env: {},
      run: async () => result,
    })
    await failure(label, () => p.get())
    assert.ok(!p.describe.includes(S.arg))
  }
  const spawnFailure = new ExecCredentialProvider({
    exec: {
      command: 'helper',
      args: [S.arg],
      apiVersion: 'client.authentication.k8s.io/v1',
      interactiveMode: 'Never',
    },
    user: 'u',
    env: {},
    run: async () => {
      throw Object.assign(new Error(`spawn helper EACCES ${S.arg}`), { code: 'EACCES', spawnargs: [S.arg] })
    },
  })
  await failure('spawn error carrying the arguments', () => spawnFailure.get())
})

test('auth-provider config is not quoted when it is refused', async () => {
  await failure('auth-provider', () =>
    loadUser('a1', `    auth-provider:\n      name: oidc\n      config:\n        id-token: ${S.idToken}\n`),
  )
})

test('token file content: not in the re-read warning nor in any later error', async () => {
  const file = path.join(tmp, 'sa-token')
  writeFileSync(file, S.tokenFile)
  const logger = recordingLogger()
  const clock = new ManualClock()
  const p = new TokenFileProvider({ path: file, clock, logger })
  await p.get()
  unlinkSync(file)
  await clock.advance(60_000)
  await p.get()
  assert.equal(logger.lines.length, 1)
  for (const secret of ALL) assert.ok(!JSON.stringify(logger.lines).includes(secret))
  await failure('fresh provider, file gone', () => new TokenFileProvider({ path: file }).get())
})

test('parse errors of a whole file never include its text', () => {
  const text = `users:\n- name: u\n  user:\n    token: ${S.token}\n    password: ${S.password}\n  bad: [${S.keyData}\n`
  assert.throws(
    () => parseKubeconfig(text, '/k/config'),
    (err: unknown) => {
      assertClean(err, 'parseKubeconfig')
      return true
    },
  )
})
