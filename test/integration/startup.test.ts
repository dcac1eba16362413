/**
 * What a user sees when something is missing at start: a watched CRD that is not installed fails in
 * seconds with one line naming it (library and binary, on a private control plane where no test has
 * installed the CRDs), and a shutdown signal during start-up stops cleanly with exit 0.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { noopLogger } from '../../src/core/log.ts'
import { Manager } from '../../src/manager/manager.ts'
import { UnservedResourcesError } from '../../src/manager/served-resources.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { adminClient } from '../support/kube.ts'
import { type LogLine, startOperator } from '../support/operator-process.ts'

/** Hang guard for a process expected to exit by itself (not a latency assertion). */
const EXIT_GUARD_MS = 60_000

const cleanups: (() => Promise<unknown>)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
})

/** The control plane of this file alone: nobody installs the operators' CRDs on it. */
async function privateAdmin(): Promise<{ admin: KubeClient; kubeconfig: string }> {
  const env = await getTestEnv({ private: true })
  const admin = adminClient(env, env.server)
  cleanups.push(() => admin.close())
  return { admin, kubeconfig: env.kubeconfig }
}

function exitWithin<T>(p: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`${what}: no exit within ${EXIT_GUARD_MS} ms`)),
        EXIT_GUARD_MS,
      ).unref(),
    ),
  ])
}

test('Manager.run rejects in seconds, naming the CRD, when a watched resource is not served', async () => {
  const { admin } = await privateAdmin()
  const group = `g${randomBytes(4).toString('hex')}.edgeop.test`
  const widgets: ResourceType = { ...CORE_TYPES.configMaps, group, resource: 'widgets', kind: 'Widget' }
  const manager = new Manager({
    client: admin,
    logger: noopLogger,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    // The default 120 s sync timeout stays: the error below must come from discovery, not from it.
  })
  manager.factory.informer({ type: CORE_TYPES.configMaps })
  manager.factory.informer({ type: widgets })
  const err = await exitWithin(
    manager.run(new AbortController().signal).then(
      () => assert.fail('run resolved'),
      (e: unknown) => e,
    ),
    'Manager.run',
  )
  assert.ok(err instanceof UnservedResourcesError, String(err))
  assert.equal(err.code, 'EDGEOP_ERR_DISCOVERY')
  assert.deepEqual(err.crds, [`widgets.${group}`], 'only the unserved resource is named')
  assert.equal(
    err.message,
    `the API server does not serve widgets.${group}/v1: it is watched but not installed; ` +
      `install the CustomResourceDefinition "widgets.${group}" before starting`,
  )
})

test('the binary without its CRD exits 2 with one line naming it and the command that installs it', async () => {
  const { kubeconfig } = await privateAdmin()
  const op = await startOperator('no-crd', ['run', `--kubeconfig=${kubeconfig}`])
  cleanups.push(async () => op.kill('SIGKILL'))
  assert.equal(await exitWithin(op.exited, 'edgeop without its CRD'), 2)
  const errors = op.logs.filter((l) => l.level === 'error')
  assert.deepEqual(
    errors.map((l) => [l.msg, l.code]),
    [
      [
        'edgeop cannot start: the API server does not serve appservices.platform.example.com/v1alpha1: ' +
          'it is watched but not installed; install the CustomResourceDefinition ' +
          '"appservices.platform.example.com" before starting. `edgeop crd | kubectl apply -f -` installs the CRDs ' +
          '(`edgeop manifests | kubectl apply -f -`: the whole operator)',
        'EDGEOP_ERR_DISCOVERY',
      ],
    ],
    JSON.stringify(op.logs),
  )
  assert.ok(
    !op.logs.some((l) => /did not sync/.test(String(l.msg) + String(l.error))),
    'not the sync timeout',
  )
})

test('start-up mistake, a user’s operator watching a CRD that is not installed: exit 2, one line naming it', async () => {
  const { kubeconfig } = await privateAdmin()
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '../operator/fixtures/mistaken-operator.ts'),
      `--kubeconfig=${kubeconfig}`,
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
    ],
    { env: { PATH: process.env.PATH, MISTAKE: 'missing-crd' }, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  cleanups.push(async () => child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const code = await exitWithin(
    new Promise((resolve) => child.on('close', resolve)),
    'the operator without its CRD',
  )
  assert.equal(code, 2, stderr)
  const lines = stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine)
  assert.deepEqual(
    lines.filter((l) => l.level === 'error').map((l) => [l.msg, l.code]),
    [
      [
        'secretsync cannot start: the API server does not serve widgets.mistakes.edgeop.test/v1: it is watched ' +
          'but not installed; install the CustomResourceDefinition "widgets.mistakes.edgeop.test" before starting',
        'EDGEOP_ERR_DISCOVERY',
      ],
    ],
  )
  assert.equal(lines[0]?.msg, 'starting secretsync')
})

/** A TCP server that accepts connections and never answers (not even the TLS handshake). */
async function stallingServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server = createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

test('SIGINT while the caches wait for a server that never answers: "stopped", exit 0', async () => {
  const server = await stallingServer()
  cleanups.push(() => server.close())
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-startup-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const kubeconfig = join(dir, 'kubeconfig')
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: stalls',
      '  cluster:',
      `    server: https://127.0.0.1:${server.port}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: nobody',
      '  user:',
      '    token: not-a-real-token',
      'contexts:',
      '- name: stalls',
      '  context:',
      '    cluster: stalls',
      '    user: nobody',
      'current-context: stalls',
      '',
    ].join('\n'),
  )
  const op = await startOperator('stalls', ['run', `--kubeconfig=${kubeconfig}`])
  cleanups.push(async () => op.kill('SIGKILL'))
  await op.waitForLog((l) => l.msg === 'watching')
  op.kill('SIGINT')
  assert.equal(await exitWithin(op.exited, 'edgeop after SIGINT'), 0, JSON.stringify(op.logs))
  const msgs = op.logs.map((l: LogLine) => l.msg)
  assert.ok(msgs.includes('stopped'), JSON.stringify(msgs))
  assert.ok(!msgs.includes('caches synced'), 'the signal came during start-up')
  assert.deepEqual(
    op.logs.filter((l) => l.level === 'error'),
    [],
    'a requested stop is not an error',
  )
})
