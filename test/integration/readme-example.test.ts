/**
 * The "Write your own controller" block of docs/library.md, run as written (import paths substituted, ports
 * through `EDGEOP_*` variables) in its own process against the real apiserver, through the fault
 * proxy's dropped connections and 429s; `runOperator` alone gives it rest_client metrics and events.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { docExample, LIBRARY_CONTROLLER_EXAMPLE } from '../../build/doc-examples.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const ROOT = join(import.meta.dirname, '../..')
const { env, setup, defer } = useTestEnv()
let admin: KubeClient
setup(async () => {
  await env().startControllers() // the garbage collector removes copies of deleted originals
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
})

test('the documented controller mirrors ConfigMaps through drops and 429s, follows edits, serves rest_client metrics, records events, and stops cleanly on SIGTERM', async () => {
  const code = (await docExample(ROOT, LIBRARY_CONTROLLER_EXAMPLE))
    .replace("from 'edgeop'", `from ${JSON.stringify(join(ROOT, 'src/index.ts'))}`)
    .replace("from 'edgeop/operator'", `from ${JSON.stringify(join(ROOT, 'src/operator/index.ts'))}`)
  assert.ok(!code.includes("'edgeop"), 'substitutions applied')
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-readme-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'mirror.ts')
  await writeFile(file, code)
  const proxy = await env().startFaultProxy()
  defer(() => proxy.close())
  const kubeconfig = await env().writeKubeconfig({ server: proxy.url })
  const inherited = Object.entries(process.env).filter(
    ([k]) => !k.startsWith('EDGEOP_') && !k.startsWith('MIRROR_'),
  )
  const child = spawn(process.execPath, [file], {
    env: {
      ...Object.fromEntries(inherited),
      KUBECONFIG: kubeconfig,
      // The example's operator is named `mirror`: its flags read MIRROR_* variables (envPrefixOf).
      MIRROR_METRICS_BIND_ADDRESS: '127.0.0.1:0',
      MIRROR_HEALTH_PROBE_BIND_ADDRESS: '127.0.0.1:0',
      // Plain HTTP, so the test scrapes without a token; secure metrics have their own test.
      MIRROR_METRICS_SECURE: 'false',
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  let metricsAddress: string | undefined
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => {
    process.stderr.write(d)
    stderr += d.toString()
    const serving = /\{[^\n]*"msg":"serving"[^\n]*\}/.exec(stderr)
    if (serving) metricsAddress ??= (JSON.parse(serving[0]) as { metrics?: string }).metrics
  })
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
    { timeoutMs: 60_000, what: 'copies created' },
  )
  proxy.dropAll()
  proxy.addFault({ method: 'PATCH', times: 2, action: { type: 'status', status: 429, retryAfterSeconds: 0 } })
  await cms.patch('m0', { data: { v: 'edited' } }, 'merge')
  await eventually(async () => (await copyOf('m0'))?.v === 'edited', {
    timeoutMs: 60_000,
    what: 'edit mirrored after the drop',
  })
  await cms.patch('m1-copy', { data: { v: 'tampered' } }, 'merge')
  await eventually(async () => (await copyOf('m1'))?.v === '1', {
    timeoutMs: 60_000,
    what: 'tampered copy restored',
  })
  await cms.delete('m2')
  await eventually(async () => (await copyOf('m2')) === undefined, {
    timeoutMs: 60_000,
    what: 'copy garbage-collected with its owner',
  })

  // rest_client metrics: the client runOperator built counts its requests on the manager's /metrics.
  await eventually(async () => metricsAddress !== undefined, {
    timeoutMs: 60_000,
    what: 'the "serving" log line',
  })
  const metrics = await (await fetch(`http://${metricsAddress}/metrics`)).text()
  assert.match(metrics, /^rest_client_requests_total\{[^}]*code="200"[^}]*\} [1-9]/m)
  assert.match(metrics, /^controller_runtime_reconcile_total\{controller="mirror",result="success"\} [1-9]/m)
  // Events: the recorder runOperator handed to the example wrote one per copy, as controller "mirror".
  const events = admin.resource(CORE_TYPES.events, ns)
  await eventually(
    async () =>
      (await events.list()).items.some(
        (e) =>
          (e as { reason?: string }).reason === 'Mirrored' &&
          (e as { regarding?: { name?: string } }).regarding?.name === 'm3' &&
          (e as { reportingController?: string }).reportingController === 'mirror',
      ),
    { timeoutMs: 60_000, what: 'a Mirrored event about m3' },
  )
  child.kill('SIGTERM')
  assert.equal(await exited, 0)
})
