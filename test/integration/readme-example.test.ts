/**
 * The README's "write your own controller" block, run as written (import path and
 * ports substituted) in its own process against the real apiserver, through the
 * fault proxy's dropped connections and 429s.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../support/eventually.ts'
import { adminClient } from '../support/kube.ts'
import { readmeControllerExample } from '../support/readme.ts'
import { useTestEnv } from '../support/test-env.ts'

const ROOT = join(import.meta.dirname, '../..')
const { env, setup, defer } = useTestEnv()
let admin: KubeClient
setup(async () => {
  await env().startControllers() // the garbage collector removes copies of deleted originals
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
})

test('the README controller mirrors ConfigMaps through drops and 429s, follows edits, and stops cleanly on SIGTERM', async () => {
  const code = (await readmeControllerExample(ROOT))
    .replace("from 'edgeop'", `from ${JSON.stringify(join(ROOT, 'src/index.ts'))}`)
    .replace(
      'new Manager({ client })',
      "new Manager({ client, metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0' })",
    )
  assert.ok(code.includes('127.0.0.1:0'), 'substitution applied')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-readme-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'mirror.ts')
  await writeFile(file, code)
  const proxy = await env().startFaultProxy()
  defer(() => proxy.close())
  const kubeconfig = await env().writeKubeconfig({ server: proxy.url })
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  defer(async () => void child.kill('SIGKILL'))

  const ns = await env().createNamespace('mirror')
  const cms = admin.resource(CORE_TYPES.configMaps, ns)
  const copyOf = async (name: string) =>
    (await cms.get(`${name}-copy`).catch(() => undefined))?.data as { v?: string } | undefined
  proxy.addFault({ watch: true, times: 3, action: { type: 'status', status: 429, retryAfterSeconds: 1 } })
  for (let i = 0; i < 5; i++)
    await cms.create({ metadata: { name: `m${i}`, labels: { mirror: 'true' } }, data: { v: `${i}` } })
  await eventually(
    async () =>
      (await Promise.all([0, 1, 2, 3, 4].map((i) => copyOf(`m${i}`)))).every((d, i) => d?.v === `${i}`),
    60_000,
    'copies created',
  )
  proxy.dropAll()
  proxy.addFault({ method: 'PATCH', times: 2, action: { type: 'status', status: 429, retryAfterSeconds: 0 } })
  await cms.patch('m0', { data: { v: 'edited' } }, 'merge')
  await eventually(async () => (await copyOf('m0'))?.v === 'edited', 60_000, 'edit mirrored after the drop')
  await cms.patch('m1-copy', { data: { v: 'tampered' } }, 'merge')
  await eventually(async () => (await copyOf('m1'))?.v === '1', 60_000, 'tampered copy restored')
  await cms.delete('m2')
  await eventually(
    async () => (await copyOf('m2')) === undefined,
    60_000,
    'copy garbage-collected with its owner',
  )
  child.kill('SIGTERM')
  assert.equal(await exited, 0)
})
