/**
 * @module appservice.bench — the numbers issue 7 asks of the running operator, measured on
 * the local control plane (a script, never a test):
 * - start time of `edgeop version` with node + bundle vs the single executable;
 * - cold start of `edgeop run` to "caches synced" and its idle RSS with 0 AppServices;
 * - reconcile throughput: N AppServices created at once, time until all are Ready
 *   (replicas 0, so the operator — not controller-manager or KWOK — is what is measured);
 * - idle RSS with N AppServices cached.
 *
 *   node test/bench/appservice.bench.ts [--count 1000]
 */
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { createAppServices, installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import { benchRunArgs, startOperator } from '../support/operator-process.ts'

const { values } = parseArgs({
  options: { count: { type: 'string', default: '1000' }, starts: { type: 'string', default: '15' } },
})
const COUNT = Number(values.count)
const ROOT = join(import.meta.dirname, '../..')
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rssMiB = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
const settle = () => new Promise((r) => setTimeout(r, 5000))

function startTimes(cmd: string, args: string[], n: number): number {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    execFileSync(cmd, args, { stdio: 'ignore' })
    times.push(performance.now() - t)
  }
  return median(times)
}

const rows: [string, string][] = []
rows.push([
  '`node dist/edgeop.cjs version`, wall (median)',
  `${startTimes(process.execPath, [join(ROOT, 'dist/edgeop.cjs'), 'version'], Number(values.starts)).toFixed(0)} ms`,
])
rows.push([
  '`dist/edgeop version` (single executable), wall (median)',
  `${startTimes(join(ROOT, 'dist/edgeop'), ['version'], Number(values.starts)).toFixed(0)} ms`,
])

const env = await getTestEnv()
await env.startControllers() // Deployments need controller-manager to report status
const admin = adminClient(env, env.server)
await installAppServiceCrd(admin)
const ns = await env.createNamespace('bench')
const t0 = performance.now()
const op = await startOperator('bench', benchRunArgs(env.kubeconfig, ns))
await op.waitForLog((l) => l.msg === 'caches synced')
rows.push([
  'cold start of `edgeop run` to caches synced (process spawn included)',
  `${(performance.now() - t0).toFixed(0)} ms`,
])
await settle()
rows.push(['idle RSS, 0 AppServices', `${(await rssMiB(op.child.pid!)).toFixed(1)} MiB`])

const apps = admin.resource<AppService>(APPSERVICES, ns)
const created = performance.now()
await createAppServices(apps, COUNT)
/** How many AppServices the operator has reconciled (observedGeneration current) and how many are Ready. */
const progress = async () => {
  let reconciled = 0
  let ready = 0
  for await (const page of apps.listPages({ limit: 500 })) {
    for (const a of page.items) {
      if (a.status?.observedGeneration === a.metadata.generation) reconciled++
      if (a.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready++
    }
  }
  return { reconciled, ready }
}
// Poll gently: listing every AppService is itself load on a 2-core apiserver.
let reconciledSecs: number | undefined
for (let p = { reconciled: 0, ready: 0 }; p.ready < COUNT; ) {
  await new Promise((r) => setTimeout(r, 2000))
  p = await progress()
  const secs = (performance.now() - created) / 1000
  if (reconciledSecs === undefined && p.reconciled === COUNT) reconciledSecs = secs
  process.stderr.write(
    `reconciled ${p.reconciled}, ready ${p.ready} of ${COUNT} after ${secs.toFixed(0)} s\n`,
  )
}
const readySecs = (performance.now() - created) / 1000
const rate = (s: number) => `${s.toFixed(1)} s (${(COUNT / s).toFixed(0)}/s, creation included)`
rows.push([
  `reconcile throughput: ${COUNT} AppServices created → all reconciled (children applied, status written)`,
  rate(reconciledSecs ?? readySecs),
])
rows.push([
  `${COUNT} AppServices created → all Ready (gated by controller-manager rolling out ${COUNT} Deployments)`,
  rate(readySecs),
])
await settle()
rows.push([
  `idle RSS, ${COUNT} AppServices (+ ${COUNT} Deployments and Services cached)`,
  `${(await rssMiB(op.child.pid!)).toFixed(1)} MiB`,
])
op.kill('SIGTERM')
await op.exited
await admin.close()

process.stdout.write(
  `\n| what (${new Date().toISOString().slice(0, 10)}, ${process.version}) | measured |\n| --- | --- |\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join('\n')}\n`,
)
process.exit(0)
